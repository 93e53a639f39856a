"""UploadPolicy: which host files the agent may hand to a page (``upload_roots``).

The agent names files by path; it must never be able to read the host's
files through an upload. Every path is resolved once here, after symlinks
(``os.path.realpath``), and must land under one of the resolved upload
roots — the default root is ``<data>/uploads/`` (created 0700 at start).
What reaches Chromium is the *resolved* path, so a symlink swapped after
the check cannot redirect the upload. browserd's own files — the config
directory (the token, config.toml), the browser profiles (cookies) and the
run state — are refused even when a configured root contains them.

Order of the checks, so that an answer never tells whether a file outside
the roots exists: outside every root → 403 UPLOAD_BLOCKED (for any path,
existing or not); inside but missing, not a regular file or unreadable →
400 FILE_NOT_FOUND. Relative paths are taken relative to the first root.
Plain code: no I/O beyond ``stat``/``realpath``; nothing is logged.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path

import attrs

from .config import Settings
from .errors import BadRequest, UploadBlocked, UploadFileMissing
from .paths import Paths, ensure_private_dir

__all__ = ["MAX_UPLOAD_FILES", "UploadFile", "UploadPolicy"]

log = logging.getLogger(__name__)

MAX_UPLOAD_FILES = 100
"""At most this many files per upload."""


@attrs.frozen(kw_only=True)
class UploadFile:
    """A checked file: its resolved path, its base name and its size in bytes."""

    path: str
    name: str
    size: int

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "size": self.size}


@attrs.frozen(kw_only=True)
class UploadPolicy:
    """The resolved upload roots and the one check every uploaded path passes."""

    roots: tuple[Path, ...]
    default_root: Path | None = None  # the root to create at start (None: configured roots)
    private: tuple[Path, ...] = ()  # browserd's own directories: never uploaded, under any root

    @classmethod
    def from_settings(cls, settings: Settings, paths: Paths) -> UploadPolicy:
        """``upload_roots`` from settings (``~`` expanded), or ``<data>/uploads/``."""
        private = tuple(Path(os.path.realpath(d)) for d in
                        (paths.config_dir, paths.profiles_dir, paths.state_dir))
        if settings.upload_roots:
            roots = tuple(Path(os.path.realpath(Path(r).expanduser()))
                          for r in settings.upload_roots)
            return cls(roots=roots, private=private)
        root = paths.uploads_dir
        return cls(roots=(Path(os.path.realpath(root)),), default_root=root, private=private)

    def ensure_roots(self) -> None:
        """Create the default root (0700) if it is missing; warn about missing configured ones.

        Raises OSError if the default root cannot be created.
        """
        if self.default_root is not None:
            ensure_private_dir(self.default_root)
            return
        for root in self.roots:
            if not root.is_dir():
                log.warning("upload root %s does not exist: nothing can be uploaded from it",
                            root)

    def resolve(self, raw: str) -> Path:
        """The real path of ``raw`` if it lies under a root and is none of browserd's own files.

        Raises UploadBlocked otherwise, BadRequest for an empty or NUL-bearing path.
        """
        if not raw or "\x00" in raw:
            raise BadRequest("a file path must be a non-empty string without NUL",
                             field="files")
        path = Path(raw)
        if not path.is_absolute():
            path = self.roots[0] / path
        real = Path(os.path.realpath(path))
        if not any(real.is_relative_to(root) for root in self.roots):
            raise UploadBlocked(f"{raw!r} is outside the upload roots (after symlinks)",
                                path=raw)
        if any(real.is_relative_to(own) for own in self.private):
            raise UploadBlocked(f"{raw!r} is one of browserd's own files (token, config, "
                                "profiles, run state)", path=raw)
        return real

    def check(self, files: Sequence[str]) -> tuple[UploadFile, ...]:
        """Resolve and check every path; the files in order.

        Raises BadRequest (too many files, a bad path string), UploadBlocked
        (a path outside the roots: checked for every path before any
        existence check), UploadFileMissing (missing, not a regular file, or
        unreadable).
        """
        if len(files) > MAX_UPLOAD_FILES:
            raise BadRequest(f"at most {MAX_UPLOAD_FILES} files per upload", field="files")
        resolved = [(raw, self.resolve(raw)) for raw in files]
        out: list[UploadFile] = []
        for raw, real in resolved:
            try:
                st = real.stat()
            except OSError:
                raise UploadFileMissing(f"no file {raw!r}", path=raw) from None
            if not real.is_file():
                raise UploadFileMissing(f"{raw!r} is not a regular file", path=raw)
            if not os.access(real, os.R_OK):
                raise UploadFileMissing(f"{raw!r} is not readable by browserd", path=raw)
            out.append(UploadFile(path=str(real), name=real.name, size=st.st_size))
        return tuple(out)

    def describe(self) -> list[str]:
        """The roots as strings (for docs and status)."""
        return [str(r) for r in self.roots]
