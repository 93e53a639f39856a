"""S2: the token file is created private, refused when it is not, never chmod'ed."""

from __future__ import annotations

import base64
import errno
import hmac
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from browserd.errors import ConfigError
from browserd.token import (
    load_or_create_token,
    rotate_token,
    token_id,
    tokens_equal,
)


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture
def no_chmod(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if anything chmods: modes must be right at creation."""

    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("chmod called")

    monkeypatch.setattr(os, "chmod", forbidden)
    monkeypatch.setattr(os, "fchmod", forbidden)
    monkeypatch.setattr(Path, "chmod", forbidden)


@pytest.mark.usefixtures("no_chmod")
def test_creates_dir_0700_and_file_0600_without_chmod(tmp_path: Path) -> None:
    path = tmp_path / "home" / "config" / "token"
    old = os.umask(0o022)
    try:
        tok = load_or_create_token(path)
    finally:
        os.umask(old)
    assert _mode(path.parent) == 0o700
    assert _mode(path.parent.parent) == 0o700
    assert _mode(path) == 0o600
    assert stat.S_ISREG(os.lstat(path).st_mode)
    assert path.read_text().strip() == tok
    assert len(tok) >= 40
    assert not [p for p in path.parent.iterdir() if p.name != "token"], "temp file left"


def test_mkdir_and_open_are_given_private_modes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[str, int]] = []
    real_mkdir, real_open = os.mkdir, os.open

    def mkdir(p: str | os.PathLike[str], mode: int = 0o777) -> None:
        calls.append(("mkdir", mode))
        real_mkdir(p, mode)

    def open_(p: str | os.PathLike[str], flags: int, mode: int = 0o777) -> int:
        if flags & os.O_CREAT:
            calls.append(("open", mode))
            assert flags & os.O_EXCL
        return real_open(p, flags, mode)

    monkeypatch.setattr(os, "mkdir", mkdir)
    monkeypatch.setattr(os, "open", open_)
    load_or_create_token(tmp_path / "cfg" / "token")
    assert ("mkdir", 0o700) in calls
    assert ("open", 0o600) in calls
    assert all(mode in (0o700, 0o600) for _, mode in calls)


def test_second_load_returns_same_token_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "cfg" / "token"
    first = load_or_create_token(path)
    before = os.stat(path)
    assert load_or_create_token(path) == first
    after = os.stat(path)
    assert (before.st_ino, before.st_mtime_ns, _mode(path)) == (
        after.st_ino, after.st_mtime_ns, 0o600
    )


def test_tokens_differ_between_files(tmp_path: Path) -> None:
    a = load_or_create_token(tmp_path / "a" / "token")
    b = load_or_create_token(tmp_path / "b" / "token")
    assert a != b


def test_strips_whitespace_from_existing(tmp_path: Path) -> None:
    d = tmp_path / "cfg"
    d.mkdir(mode=0o700)
    path = d / "token"
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
    os.write(fd, b"  abcdefghijklmnopqrstuvwxyz0123\n\n")
    os.close(fd)
    assert load_or_create_token(path) == "abcdefghijklmnopqrstuvwxyz0123"


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o660, 0o644, 0o666, 0o601])
def test_wide_file_mode_refuses_and_names_fix(tmp_path: Path, mode: int) -> None:
    path = tmp_path / "cfg" / "token"
    tok = load_or_create_token(path)
    os.chmod(path, mode)
    with pytest.raises(ConfigError) as info:
        load_or_create_token(path)
    err = info.value
    text = f"{err.message} {err.hint}"
    assert str(path) in text
    assert f"{mode:04o}" in text
    assert f"chmod 600 {path}" in text
    assert tok not in text
    assert _mode(path) == mode, "must not fix the mode silently"


@pytest.mark.parametrize("mode", [0o750, 0o755, 0o701, 0o707])
def test_wide_dir_mode_refuses(tmp_path: Path, mode: int) -> None:
    d = tmp_path / "cfg"
    d.mkdir()
    os.chmod(d, mode)
    with pytest.raises(ConfigError) as info:
        load_or_create_token(d / "token")
    assert f"chmod 700 {d}" in (info.value.hint or "")
    assert str(d) in info.value.message
    assert not (d / "token").exists()
    assert list(d.iterdir()) == []


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to chown to another user")
def test_foreign_owner_refuses(tmp_path: Path) -> None:
    path = tmp_path / "cfg" / "token"
    load_or_create_token(path)
    os.chown(path, 4242, -1)
    with pytest.raises(ConfigError, match="uid 4242"):
        load_or_create_token(path)


def test_foreign_owner_refuses_via_uid(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "cfg" / "token"
    load_or_create_token(path)
    real = os.getuid()
    # Pretend we are someone else: dir check first, then (with the dir's uid
    # accepted) the file's.
    monkeypatch.setattr(os, "getuid", lambda: real + 1)
    with pytest.raises(ConfigError, match="not to you"):
        load_or_create_token(path)


@pytest.mark.parametrize(
    "content",
    [b"", b"\n", b"short-token\n", b"x" * 19, b"has space in the middle of it!", b"\xff" * 30],
)
def test_unusable_content_refuses(tmp_path: Path, content: bytes) -> None:
    d = tmp_path / "cfg"
    d.mkdir(mode=0o700)
    path = d / "token"
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
    os.write(fd, content)
    os.close(fd)
    with pytest.raises(ConfigError, match="usable token") as info:
        load_or_create_token(path)
    assert f"rm {path}" in (info.value.hint or "")
    assert path.read_bytes() == content


def test_symlinked_token_refused(tmp_path: Path) -> None:
    real = tmp_path / "real" / "token"
    load_or_create_token(real)
    d = tmp_path / "cfg"
    d.mkdir(mode=0o700)
    (d / "token").symlink_to(real)
    with pytest.raises(ConfigError, match="symlink"):
        load_or_create_token(d / "token")


def test_token_path_is_a_directory_refused(tmp_path: Path) -> None:
    d = tmp_path / "cfg"
    d.mkdir(mode=0o700)
    (d / "token").mkdir()
    with pytest.raises(ConfigError, match="not a regular file"):
        load_or_create_token(d / "token")


def test_lost_creation_race_uses_winners_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cfg" / "token"
    real_link = os.link
    winner = "w" * 43

    def racing_link(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        # Another process links its complete file in first.
        fd = os.open(dst, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        os.write(fd, winner.encode() + b"\n")
        os.close(fd)
        real_link(src, dst)

    monkeypatch.setattr(os, "link", racing_link)
    assert load_or_create_token(path) == winner
    assert [p.name for p in path.parent.iterdir()] == ["token"]


def test_rotate_replaces_atomically(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "cfg" / "token"
    old = load_or_create_token(path)
    replaced: list[tuple[str, str]] = []
    real_replace = os.replace

    def spy_replace(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        src_path = Path(src)
        assert src_path.parent == path.parent
        assert _mode(src_path) == 0o600
        replaced.append((str(src), str(dst)))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", spy_replace)
    new = rotate_token(path)
    assert new != old
    assert replaced and replaced[0][1] == str(path)
    assert load_or_create_token(path) == new
    assert _mode(path) == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["token"]


def test_rotate_failure_keeps_old_token_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cfg" / "token"
    old = load_or_create_token(path)

    def failing_replace(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(ConfigError, match="cannot replace"):
        rotate_token(path)
    monkeypatch.undo()
    assert load_or_create_token(path) == old
    assert [p.name for p in path.parent.iterdir()] == ["token"]


def test_rotate_creates_missing(tmp_path: Path) -> None:
    path = tmp_path / "cfg" / "token"
    tok = rotate_token(path)
    assert load_or_create_token(path) == tok
    assert _mode(path) == 0o600
    assert _mode(path.parent) == 0o700


def test_token_id_is_short_stable_and_not_the_token() -> None:
    tok = "abcdefghijklmnopqrstuvwxyz0123456789"
    tid = token_id(tok)
    assert tid == token_id(tok)
    assert len(tid) == 8
    assert all(c in "0123456789abcdef" for c in tid)
    assert tid not in tok
    assert tid != token_id(tok + "x")


def test_tokens_equal() -> None:
    assert tokens_equal("a" * 30, "a" * 30)
    assert not tokens_equal("a" * 30, "a" * 29 + "b")
    assert not tokens_equal("a" * 30, "a" * 31)
    assert not tokens_equal("a" * 30, "")
    assert tokens_equal("é" * 25, "é" * 25)


def test_tokens_equal_uses_compare_digest(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[bytes, bytes]] = []

    def spy(a: bytes, b: bytes) -> bool:
        seen.append((a, b))
        return a == b

    monkeypatch.setattr(hmac, "compare_digest", spy)
    assert tokens_equal("x" * 20, "x" * 20)
    assert seen == [(b"x" * 20, b"x" * 20)]


def _write_private(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.parent.chmod(0o700)
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o600)
    os.write(fd, text.encode())
    os.close(fd)


def test_a_token_file_of_exactly_twenty_characters_is_accepted(tmp_path: Path) -> None:
    _write_private(tmp_path / "a" / "token", "t" * 20)
    assert load_or_create_token(tmp_path / "a" / "token") == "t" * 20
    _write_private(tmp_path / "b" / "token", "t" * 19)
    with pytest.raises(ConfigError):
        load_or_create_token(tmp_path / "b" / "token")


def test_a_new_token_is_durable_before_it_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The directory holding the new token file is fsynced after the file appears."""
    synced: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    path = tmp_path / "cfg" / "token"
    load_or_create_token(path)
    assert str(path.parent.resolve()) in synced


# -- failures the kernel can report, and what is left behind -----------------------------------


def open_fds() -> set[int]:
    return {int(fd) for fd in os.listdir("/proc/self/fd")}


def fail_with(errno_: int) -> Any:
    def failing(*args: object, **kwargs: object) -> None:
        raise OSError(errno_, os.strerror(errno_))

    return failing


def test_a_new_token_carries_256_bits(tmp_path: Path) -> None:
    token = load_or_create_token(tmp_path / "cfg" / "token")
    assert len(token) == 43 and len(base64.urlsafe_b64decode(token + "=")) == 32


def test_rotate_makes_the_new_token_durable_after_the_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cfg" / "token"
    load_or_create_token(path)
    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        events.append("fsync dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "fsync file")
        real_fsync(fd)

    def replace(src: Any, dst: Any) -> None:
        events.append("rename")
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    rotate_token(path)
    assert events == ["fsync file", "rename", "fsync dir"]


def test_a_failed_link_is_a_config_error_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cfg" / "token"
    monkeypatch.setattr(os, "link", fail_with(errno.EIO))
    before = open_fds()
    with pytest.raises(ConfigError, match="cannot create the token file"):
        load_or_create_token(path)
    assert list(path.parent.iterdir()) == [] and open_fds() <= before


def test_a_failed_write_is_a_config_error_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cfg" / "token"
    monkeypatch.setattr(os, "fsync", fail_with(errno.ENOSPC))
    before = open_fds()
    with pytest.raises(ConfigError, match="cannot write the token file"):
        load_or_create_token(path)
    assert list(path.parent.iterdir()) == [] and open_fds() <= before


def test_a_directory_that_cannot_be_made_is_a_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "mkdir", fail_with(errno.EACCES))
    with pytest.raises(ConfigError, match="cannot create the directory"):
        load_or_create_token(tmp_path / "cfg" / "token")


def test_a_token_file_that_cannot_be_inspected_or_opened_is_a_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cfg" / "token"
    load_or_create_token(path)
    real_lstat, real_open = os.lstat, os.open

    def lstat(p: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        if Path(p) == path:
            raise OSError(errno.EIO, "I/O error")
        return real_lstat(p, *args, **kwargs)

    monkeypatch.setattr(os, "lstat", lstat)
    with pytest.raises(ConfigError, match="cannot inspect the token file"):
        load_or_create_token(path)
    monkeypatch.setattr(os, "lstat", real_lstat)

    def open_(p: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if Path(p) == path:
            raise OSError(errno.EIO, "I/O error")
        return real_open(p, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_)
    with pytest.raises(ConfigError, match="cannot read the token file"):
        load_or_create_token(path)


def test_a_symlink_swapped_in_after_the_check_is_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race between lstat and open: the open itself refuses to follow a link."""
    path = tmp_path / "cfg" / "token"
    mine = load_or_create_token(path)
    other = tmp_path / "other-token"
    other.write_text("x" * 40)
    other.chmod(0o600)
    checked = os.lstat(path)  # what lstat saw: our regular file
    path.unlink()
    path.symlink_to(other)  # ... then swapped for a link
    real_lstat = os.lstat
    monkeypatch.setattr(os, "lstat", lambda p, *a, **k: checked if Path(p) == path
                        else real_lstat(p, *a, **k))
    with pytest.raises(ConfigError, match="is a symlink") as raised:
        load_or_create_token(path)
    assert mine not in str(raised.value) and "x" * 40 not in str(raised.value)


def test_reading_the_token_leaves_no_descriptor_open(tmp_path: Path) -> None:
    path = tmp_path / "cfg" / "token"
    load_or_create_token(path)
    before = open_fds()
    for _ in range(3):
        load_or_create_token(path)
        rotate_token(path)
    assert open_fds() <= before
