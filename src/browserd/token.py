"""The control API's bearer token: created private, refused when it is not.

The token lives in a file of its own (``Paths.token_file``) inside a
directory that only the owner may enter. Both are created with their final
mode (directory ``0700`` via ``os.mkdir``, file ``0600`` via ``os.open``), so
there is never a window in which they are wider; nothing here ever calls
``chmod``. A token file or directory that *is* wider, or that belongs to
another user, is refused with a :class:`~browserd.errors.ConfigError` naming
the path, its mode and the command that fixes it — browserd then does not
start rather than serve with a token others could read.

A new token file appears atomically: its content is written and fsynced to a
temporary file in the same directory, which is then hard-linked into place
(first start: fails if another process won the race, whose token is then
used) or renamed over the old one (:func:`rotate_token`). A crash therefore
never leaves an empty or half-written token file behind.

The token itself is never logged or put in an error message; :func:`token_id`
gives a short, non-secret name for it that audit logs may carry.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import hmac
import os
import re
import secrets
import stat
from pathlib import Path

from .errors import ConfigError

__all__ = ["MIN_TOKEN_CHARS", "load_or_create_token", "rotate_token", "token_id", "tokens_equal"]

MIN_TOKEN_CHARS = 20
_TOKEN_BYTES = 32
# A token must fit in an HTTP header unquoted: visible ASCII, no spaces.
_TOKEN_RE = re.compile(r"[\x21-\x7e]+")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def load_or_create_token(path: Path) -> str:
    """Return the token stored at ``path``, creating it (and its dir) if missing.

    Missing directories are created with mode 0700; a missing file is created
    0600 holding ``secrets.token_urlsafe(32)``. If another process creates the
    file at the same moment, its token is read and returned instead.

    Raises :class:`ConfigError` (and changes nothing) when the directory or the
    file has any group/other permission bit, belongs to another user, is not a
    regular file/directory (a symlink is refused), cannot be read, or holds an
    empty, short (< 20 chars) or non-printable token.
    """
    _ensure_private_dir(path.parent)
    try:
        return _read_token(path)
    except FileNotFoundError:
        pass
    token = _new_token()
    tmp = _write_temp(path.parent, path.name, token)
    try:
        try:
            os.link(tmp, path)
        except FileExistsError:
            # Lost a creation race: the winner's file is complete (it was
            # linked in after its fsync), so use it.
            return _read_token(path)
        except OSError as exc:
            raise ConfigError(f"cannot create the token file {path}: {exc.strerror}") from None
    finally:
        _unlink_quietly(tmp)
    _fsync_dir(path.parent)
    return token


def rotate_token(path: Path) -> str:
    """Replace the token at ``path`` with a new one, atomically; return the new one.

    The new token is written to a 0600 temporary file in the same directory,
    fsynced, and renamed over ``path``: a reader sees either the old token or
    the new one, never a partial file. Creates the directory (0700) if it is
    missing. Raises :class:`ConfigError` if the directory is not private (as in
    :func:`load_or_create_token`) or cannot be written; the old token then
    stays in place and no temporary file is left behind.
    """
    _ensure_private_dir(path.parent)
    token = _new_token()
    tmp = _write_temp(path.parent, path.name, token)
    try:
        os.replace(tmp, path)
    except OSError as exc:
        _unlink_quietly(tmp)
        raise ConfigError(f"cannot replace the token file {path}: {exc.strerror}") from None
    _fsync_dir(path.parent)
    return token


def token_id(token: str) -> str:
    """A short, non-secret name for ``token`` (first 8 hex digits of its SHA-256)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()[:8]


def tokens_equal(a: str, b: str) -> bool:
    """Compare two tokens in time independent of where they first differ."""
    return hmac.compare_digest(a.encode("utf-8"), b.encode("utf-8"))


# -- helpers -----------------------------------------------------------------


def _new_token() -> str:
    return secrets.token_urlsafe(_TOKEN_BYTES)


def _mode_text(mode: int) -> str:
    return f"{stat.S_IMODE(mode):04o}"


def _ensure_private_dir(directory: Path) -> None:
    """Create ``directory`` 0700 if missing (ancestors too); refuse if it is not private."""
    missing: list[Path] = []
    probe = directory
    while not os.path.lexists(probe):
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for d in reversed(missing):
        try:
            os.mkdir(d, 0o700)
        except FileExistsError:
            pass  # created concurrently; checked below
        except OSError as exc:
            raise ConfigError(f"cannot create the directory {d}: {exc.strerror}") from None
    try:
        st = os.lstat(directory)
    except OSError as exc:
        raise ConfigError(f"cannot inspect the directory {directory}: {exc.strerror}") from None
    if not stat.S_ISDIR(st.st_mode):
        raise ConfigError(
            f"{directory} must be a directory (the token file's home), not a link or file",
            hint=f"remove it or point BROWSERD_HOME elsewhere: rm {directory}",
        )
    if st.st_uid != os.getuid():
        raise ConfigError(
            f"the token directory {directory} belongs to uid {st.st_uid}, not to you "
            f"(uid {os.getuid()}); refusing to keep the API token there",
            hint=f"chown {os.getuid()} {directory}",
        )
    if st.st_mode & 0o077:
        raise ConfigError(
            f"the token directory {directory} has mode {_mode_text(st.st_mode)}, which lets "
            f"other users in; refusing to start",
            hint=f"chmod 700 {directory}",
        )


def _read_token(path: Path) -> str:
    """Read and validate an existing token file; FileNotFoundError if there is none."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise ConfigError(f"cannot inspect the token file {path}: {exc.strerror}") from None
    _check_file_stat(path, st)
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _CLOEXEC)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ConfigError(f"the token file {path} is a symlink; refusing it") from None
        raise ConfigError(f"cannot read the token file {path}: {exc.strerror}") from None
    try:
        # Re-check what was actually opened (it may have been swapped since lstat).
        _check_file_stat(path, os.fstat(fd))
        chunks: list[bytes] = []
        while chunk := os.read(fd, 4096):
            chunks.append(chunk)
            if sum(map(len, chunks)) > 4096:
                raise ConfigError(
                    f"the token file {path} is larger than 4 KiB; it is not a browserd token",
                    hint=f"remove it to have a new token generated: rm {path}",
                )
    finally:
        os.close(fd)
    try:
        token = b"".join(chunks).decode("ascii").strip()
    except UnicodeDecodeError:
        token = ""
    if len(token) < MIN_TOKEN_CHARS or not _TOKEN_RE.fullmatch(token):
        raise ConfigError(
            f"the token file {path} does not hold a usable token (it must be at least "
            f"{MIN_TOKEN_CHARS} printable ASCII characters without spaces)",
            hint=f"remove it to have a new token generated: rm {path}",
        )
    return token


def _check_file_stat(path: Path, st: os.stat_result) -> None:
    if stat.S_ISLNK(st.st_mode):
        raise ConfigError(
            f"the token file {path} is a symlink; refusing it",
            hint=f"remove it to have a new token generated: rm {path}",
        )
    if not stat.S_ISREG(st.st_mode):
        raise ConfigError(f"the token file {path} is not a regular file")
    if st.st_uid != os.getuid():
        raise ConfigError(
            f"the token file {path} belongs to uid {st.st_uid}, not to you (uid {os.getuid()}); "
            f"refusing to use it",
            hint=f"chown {os.getuid()} {path} && chmod 600 {path}",
        )
    if st.st_mode & 0o077:
        raise ConfigError(
            f"the token file {path} has mode {_mode_text(st.st_mode)}, readable or writable by "
            f"other users; refusing to start",
            hint=f"chmod 600 {path}   (and consider rotating the token)",
        )


def _write_temp(directory: Path, name: str, token: str) -> Path:
    """Create a 0600 temp file in ``directory`` holding ``token``, fsynced."""
    for _ in range(8):
        tmp = directory / f".{name}.{secrets.token_hex(6)}.tmp"
        try:
            fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY | _NOFOLLOW | _CLOEXEC, 0o600)
        except FileExistsError:
            continue
        except OSError as exc:
            raise ConfigError(f"cannot write in {directory}: {exc.strerror}") from None
        try:
            data = (token + "\n").encode("ascii")
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except OSError as exc:
            os.close(fd)
            _unlink_quietly(tmp)
            raise ConfigError(
                f"cannot write the token file in {directory}: {exc.strerror}"
            ) from None
        os.close(fd)
        return tmp
    raise ConfigError(f"cannot create a temporary file in {directory}")


def _fsync_dir(directory: Path) -> None:
    """Persist a rename/link in ``directory``; best effort where unsupported."""
    try:
        fd = os.open(directory, os.O_RDONLY | _CLOEXEC)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def _unlink_quietly(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
