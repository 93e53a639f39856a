"""Named profiles and isolated sessions.

- :mod:`.spec` — what a profile is (``[profiles.NAME]``, ``POST /profiles``): a leaf,
  imported by :mod:`browserd.config`.
- :mod:`.store` — profiles created through the API and every allocated port, persisted.
- :mod:`.sessions` — sessions: browser contexts with an idle TTL.
- :mod:`.manager` — :class:`ProfileManager`, the actor that owns one supervised subtree
  per profile (one_for_one between profiles).

This package's ``__init__`` imports nothing, so :mod:`browserd.config` can import
:mod:`.spec` without pulling in the supervisor.
"""

__all__: list[str] = []
