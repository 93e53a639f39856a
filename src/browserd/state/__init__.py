"""The browser's stored state: cookies, web storage and Playwright-shaped storage state.

- :mod:`.cookies`: validating, reading, setting and deleting cookies
  (per browser context, through the ``Storage`` domain: HttpOnly cookies included).

Everything acts on one browser context: the default context, or the one of
a session (``context``), so one session never reads or writes another's
cookies or storage.
- :mod:`.scratch`: a hidden, unlisted page whose every request is answered
  by browserd itself, used to reach the web storage of an origin that no
  tab has open, without touching the network.
- :mod:`.webstorage`: ``localStorage`` / ``sessionStorage`` of one origin.
- :mod:`.storage_state`: ``{cookies, origins}`` export and import.

Cookie and storage *values* are secrets: nothing here logs them; callers
log counts only.
"""

__all__: list[str] = []  # a namespace: import the modules themselves
