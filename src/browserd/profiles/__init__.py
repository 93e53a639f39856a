"""Named profiles and isolated sessions.

- :mod:`browserd.profilespec` — what a profile is (``[profiles.NAME]``, ``POST /profiles``):
  a settings record below this package, beside :mod:`browserd.config` that reads it.
- :mod:`.store` — profiles created through the API and every allocated port, persisted.
- :mod:`.sessions` — sessions: browser contexts with an idle TTL.
- :mod:`.manager` — :class:`ProfileManager`, the actor that owns one supervised subtree
  per profile (one_for_one between profiles).

This package's ``__init__`` imports nothing, so importing one of its modules does not
pull in the others.
"""

__all__: list[str] = []
