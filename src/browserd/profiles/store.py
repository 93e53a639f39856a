"""ProfileStore: profiles made through the API, and every profile's gateway port.

One JSON file, ``<data>/profiles.json`` (mode 0600, replaced atomically)::

    {"version": 1,
     "profiles": {"work": {"driver": "launch", "color": "#0066CC"}},
     "ports": {"work": 18800, "research": 18801}}

``profiles`` holds what ``POST /profiles`` created (config.toml tables are
never copied here); ``ports`` keeps the gateway port each launch profile was
given, so a profile keeps its port across restarts of the service. Plain
code, no trio: callers run it between awaits (it is a few hundred bytes).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from ..errors import BadRequest, ConfigError, PortInUse
from ..profilespec import ProfileOrigin, ProfileSpec, build_spec

__all__ = ["ProfileStore", "allocate_port"]

log = logging.getLogger(__name__)


def allocate_port(start: int, end: int, *, taken: Collection[int],
                  is_free: Callable[[int], bool]) -> int:
    """The lowest port in ``start..end`` not in ``taken`` that ``is_free``; PortInUse if none."""
    for port in range(start, end + 1):
        if port not in taken and is_free(port):
            return port
    raise PortInUse(f"no free gateway port left in {start}-{end}",
                    hint="delete unused profiles, or widen profile_port_start/profile_port_end")


class ProfileStore:
    """The persisted profiles and ports of one data directory."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.created: dict[str, ProfileSpec] = {}
        self.ports: dict[str, int] = {}

    def load(self) -> None:
        """Read the file (a missing file is an empty store).

        Raises ConfigError when it is unreadable or malformed; an entry that
        no longer validates (e.g. a driver this version refuses) is skipped
        with a warning, so one bad entry cannot keep the service down.
        """
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot read {self.path}: {exc}") from None
        if not isinstance(data, dict):
            raise ConfigError(f"{self.path} is not a browserd profile store")
        for name, record in dict(data.get("profiles") or {}).items():
            try:
                if not isinstance(record, dict):
                    raise BadRequest("not an object")
                self.created[name] = build_spec(name, record, origin=ProfileOrigin.API,
                                                where=f"profile {name!r} in {self.path}")
            except BadRequest as exc:
                log.warning("skipping stored profile %r: %s", name, exc.message)
        for name, port in dict(data.get("ports") or {}).items():
            if isinstance(port, int) and not isinstance(port, bool):
                self.ports[name] = port

    def save(self) -> None:
        """Write the file atomically (0600). OSError propagates."""
        data: dict[str, Any] = {
            "version": 1,
            "profiles": {name: spec.to_record() for name, spec in sorted(self.created.items())},
            "ports": dict(sorted(self.ports.items())),
        }
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = self.path.with_name(self.path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=1)
        os.replace(tmp, self.path)
