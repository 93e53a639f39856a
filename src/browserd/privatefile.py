"""Small private files of browserd's own (token store, vault): read checked, replaced atomically.

:func:`write_private` puts bytes at a path through a 0600 temporary file in the
same directory, fsynced and renamed over it, so a reader sees the old file or
the new one and never a part. :func:`read_private` refuses a file that is not
a regular file of this user with mode 0600 (a symlink, a wider mode, another
owner): such a file is not browserd's to trust. Both raise
:class:`~browserd.errors.ConfigError` naming the path; neither logs content.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from .errors import ConfigError

__all__ = ["read_private", "write_private"]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_MAX_BYTES = 16 * 1024 * 1024


def read_private(path: Path) -> bytes | None:
    """The file's bytes, or None when there is none; ConfigError when it is not private."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}",
                          hint=f"it must be a regular file of yours: ls -l {path}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
            raise ConfigError(f"{path} must be a regular file of yours with mode 0600",
                              hint=f"chmod 600 {path}")
        if st.st_size > _MAX_BYTES:
            raise ConfigError(f"{path} is larger than {_MAX_BYTES} bytes; not browserd's")
        chunks: list[bytes] = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def write_private(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` (0600, atomic); ConfigError when it cannot be written."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    try:
        fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY | _NOFOLLOW, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise ConfigError(f"cannot write {path}: {exc.strerror}") from None
