"""MediaStore's writes: complete private files, storage errors as 507 that leave nothing
behind, concurrent and cancelled saves, and the durability order of the system calls.

Retention, name resolution and start-up: test_media_store_retention.py.
"""

from __future__ import annotations

import errno
import os
import random
import shutil
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

import browserd.media.store as store_module
from browserd.errors import InsufficientStorage
from browserd.media import (
    MediaFile,
    MediaStore,
    Retention,
    media_token,
    media_url,
    open_media_store,
)
from tests.unit._media_store import NAME_RE, ROOMY, listing, payload, save_png, temps

# -- saving ------------------------------------------------------------------------------------


async def test_save_writes_complete_private_file(tmp_path: Path) -> None:
    directory = tmp_path / "new" / "media"
    with trio.fail_after(10):
        store = MediaStore(directory, ROOMY)
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700
        data = payload(100_000)
        before = time.time()
        rec = await save_png(store, data)
    assert NAME_RE.fullmatch(rec.name), rec.name
    assert rec.path == directory / rec.name
    assert rec.path.read_bytes() == data
    assert stat.S_IMODE(rec.path.stat().st_mode) == 0o600
    assert rec.bytes == len(data)
    assert rec.mime == "image/png"
    assert before <= rec.created_at <= time.time()
    assert listing(directory) == [rec.name]
    assert media_url(rec.name) == f"/media/{rec.name}"
    assert media_token(rec.path) == f"MEDIA:{rec.path}"
    resolved = store.resolve(rec.name)
    assert (resolved.name, resolved.path, resolved.mime, resolved.bytes) == (
        rec.name,
        rec.path,
        "image/png",
        len(data),
    )
    st = store.statistics()
    assert (st.files, st.bytes, st.saves, st.failures, st.pruned) == (1, len(data), 1, 0, 0)
    assert st.directory == directory


async def test_names_are_unique_and_unguessable(tmp_path: Path) -> None:
    with trio.fail_after(10):
        store = MediaStore(tmp_path, ROOMY)
        recs = [await save_png(store, b"x") for _ in range(5)]
    tokens = {r.name.rsplit("-", 1)[1] for r in recs}
    assert len(tokens) == 5


@pytest.mark.parametrize(
    ("kind", "ext"),
    [
        ("Screenshot", "png"),
        ("shot", "PNG"),
        ("a/b", "png"),
        ("", "png"),
        ("shot", ""),
        ("shot", "png.tmp"),
        ("shot", "p" * 9),
        ("k" * 33, "png"),
        ("..", "png"),
    ],
)
async def test_kind_and_ext_are_validated(tmp_path: Path, kind: str, ext: str) -> None:
    with trio.fail_after(10):
        store = MediaStore(tmp_path, ROOMY)
        with pytest.raises(ValueError):
            await store.save(b"x", kind=kind, ext=ext, mime="image/png")
    assert listing(tmp_path) == []


@pytest.mark.parametrize(
    ("ext", "mime"),
    [
        ("png", "image/png"),
        ("jpeg", "image/jpeg"),
        ("jpg", "image/jpeg"),
        ("pdf", "application/pdf"),
    ],
)
async def test_resolve_mime_from_extension(tmp_path: Path, ext: str, mime: str) -> None:
    with trio.fail_after(10):
        store = MediaStore(tmp_path, ROOMY)
        rec = await store.save(b"data", kind="media", ext=ext, mime=mime)
    assert store.resolve(rec.name).mime == mime


# -- failures are 507 and leave nothing behind -------------------------------------------------


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT, errno.EIO])
async def test_write_failing_midway_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    store = MediaStore(tmp_path, ROOMY)
    earlier_data = payload(5000, seed=1)
    data = payload(20_000, seed=2)
    seen_partial: list[int] = []

    def failing_writer(tmp: Path, chunk: bytes) -> None:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, chunk[: len(chunk) // 2])
        finally:
            os.close(fd)
        seen_partial.append(tmp.stat().st_size)  # the half file really was on disk
        raise OSError(code, os.strerror(code), str(tmp))

    with trio.fail_after(10):
        earlier = await save_png(store, earlier_data)
        monkeypatch.setattr(store, "_write_file", failing_writer)
        with pytest.raises(InsufficientStorage) as info:
            await save_png(store, data)
    exc = info.value
    assert exc.status == 507
    assert exc.code == "INSUFFICIENT_STORAGE"
    ename = errno.errorcode[code]
    assert exc.details == {"errno": ename, "bytes": len(data)}
    assert ename in exc.message
    body = exc.to_dict()
    assert body["code"] == "INSUFFICIENT_STORAGE" and body["errno"] == ename
    assert isinstance(exc.__cause__, OSError)
    assert seen_partial == [len(data) // 2]
    # nothing at any final path, no temp, the earlier file intact
    assert listing(tmp_path) == [earlier.name]
    assert earlier.path.read_bytes() == earlier_data
    st = store.statistics()
    assert (st.saves, st.failures, st.files) == (1, 1, 1)

    # the store keeps serving once the fault is gone
    monkeypatch.undo()
    with trio.fail_after(10):
        later = await save_png(store, b"ok")
    assert later.path.read_bytes() == b"ok"
    assert listing(tmp_path) == sorted([earlier.name, later.name])


async def test_directory_fsync_failure_leaves_nothing_at_final_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = MediaStore(tmp_path, ROOMY)
    with trio.fail_after(10):
        earlier = await save_png(store, b"earlier")

        def broken_fsync(_directory: Path) -> None:
            raise OSError(errno.EIO, "I/O error")

        monkeypatch.setattr(store_module, "_fsync_directory", broken_fsync)
        with pytest.raises(InsufficientStorage) as info:
            await save_png(store, b"lost")
    assert info.value.details["errno"] == "EIO"
    assert listing(tmp_path) == [earlier.name]


@pytest.fixture
def tiny_tmpfs(tmp_path: Path) -> Iterator[Path]:
    if not sys.platform.startswith("linux") or os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a tmpfs needs Linux, root and mount(8)")
    mountpoint = tmp_path / "tiny"
    mountpoint.mkdir()
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", str(mountpoint)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a 64k tmpfs here: {proc.stderr.strip()}")
    try:
        yield mountpoint
    finally:
        done = subprocess.run(["umount", str(mountpoint)], capture_output=True, check=False)
        if done.returncode != 0:
            subprocess.run(["umount", "-l", str(mountpoint)], capture_output=True, check=False)


async def test_real_full_filesystem_is_507_and_leaves_nothing(tiny_tmpfs: Path) -> None:
    directory = tiny_tmpfs / "media"
    store = MediaStore(directory, ROOMY)
    earlier_data = payload(8192, seed=3)
    with trio.fail_after(10):
        earlier = await save_png(store, earlier_data)
        with pytest.raises(InsufficientStorage) as info:
            await save_png(store, payload(256 * 1024, seed=4))
    assert info.value.status == 507
    assert info.value.details == {"errno": "ENOSPC", "bytes": 256 * 1024}
    assert listing(directory) == [earlier.name]
    assert earlier.path.read_bytes() == earlier_data
    # the failed write's space was given back: small saves still work
    with trio.fail_after(10):
        later = await save_png(store, b"small")
    assert later.path.read_bytes() == b"small"
    assert temps(directory) == []


# -- concurrency and cancellation ----------------------------------------------------------------


async def test_concurrent_saves_are_distinct_and_complete(tmp_path: Path) -> None:
    store = MediaStore(tmp_path, ROOMY)
    results: dict[int, MediaFile] = {}

    async def one(i: int) -> None:
        results[i] = await save_png(store, payload(1000 + 5000 * i, seed=i))

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            for i in range(20):
                nursery.start_soon(one, i)
    assert len({r.name for r in results.values()}) == 20
    for i, rec in results.items():
        assert rec.path.read_bytes() == payload(1000 + 5000 * i, seed=i)
    assert listing(tmp_path) == sorted(r.name for r in results.values())
    st = store.statistics()
    assert (st.saves, st.files, st.failures) == (20, 20, 0)
    assert st.bytes == sum(r.bytes for r in results.values())


async def test_concurrent_saves_with_tight_retention_keep_exactly_the_limit(tmp_path: Path) -> None:
    store = MediaStore(tmp_path, Retention(max_files=5))
    results: list[MediaFile] = []

    async def one(i: int) -> None:
        results.append(await save_png(store, payload(2000, seed=i)))

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            for i in range(20):
                nursery.start_soon(one, i)
    remaining = listing(tmp_path)
    assert len(remaining) == 5
    by_name = {r.name: r for r in results}
    for name in remaining:
        assert (tmp_path / name).stat().st_size == by_name[name].bytes
    assert store.statistics().pruned == 15
    assert store.statistics().files == 5


async def test_cancel_during_write_completes_the_file_then_cancels(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = MediaStore(tmp_path, ROOMY)
    data = payload(50_000, seed=9)
    started = threading.Event()
    release = threading.Event()

    def gated_writer(tmp: Path, chunk: bytes) -> None:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, chunk[:1000])
            started.set()
            if not release.wait(5):
                raise OSError(errno.EIO, "test gate never opened")
            os.write(fd, chunk[1000:])
            os.fsync(fd)
        finally:
            os.close(fd)

    monkeypatch.setattr(store, "_write_file", gated_writer)
    scope = trio.CancelScope()
    saved: list[MediaFile] = []

    async def run() -> None:
        with scope:
            saved.append(await save_png(store, data))

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run)
            assert await trio.to_thread.run_sync(started.wait, 5)
            assert len(temps(tmp_path)) == 1  # half-written, invisible under a final name
            scope.cancel()
            await trio.sleep(0.05)
            assert [n for n in listing(tmp_path) if not n.endswith(".tmp")] == []
            release.set()
    assert scope.cancelled_caught
    assert saved == []
    # complete or nothing; with a non-abandoned thread it is complete
    (name,) = listing(tmp_path)
    assert NAME_RE.fullmatch(name)
    assert (tmp_path / name).read_bytes() == data
    assert store.statistics().saves == 1


async def test_cancel_before_write_leaves_nothing(tmp_path: Path) -> None:
    store = MediaStore(tmp_path, ROOMY)
    with trio.fail_after(10):
        with trio.CancelScope() as scope:
            scope.cancel()
            await save_png(store, b"never")
    assert scope.cancelled_caught
    assert listing(tmp_path) == []
    assert store.statistics().saves == 0


async def test_cancel_at_random_points_never_leaves_partial_files(tmp_path: Path) -> None:
    store = MediaStore(tmp_path, ROOMY)
    data = payload(512 * 1024, seed=11)
    rng = random.Random(42)
    with trio.fail_after(20):
        for _ in range(15):
            with trio.move_on_after(rng.uniform(0, 0.004)):
                await save_png(store, data)
    assert temps(tmp_path) == []
    for name in listing(tmp_path):
        assert (tmp_path / name).read_bytes() == data
    assert len(listing(tmp_path)) == store.statistics().saves


async def test_data_is_fsynced_before_the_rename_and_the_directory_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Durability order, observed at the system calls: write, fsync(temp), rename, fsync(dir).

    Without the first fsync a crash after the rename can leave a complete-looking
    name over empty or partial data; without the second the rename itself may be lost.
    """
    events: list[tuple[str, str]] = []
    lock = threading.Lock()
    real_write, real_fsync, real_replace = os.write, os.fsync, os.replace

    def fd_path(fd: int) -> str:
        return os.readlink(f"/proc/self/fd/{fd}")

    def write(fd: int, data: bytes) -> int:
        with lock:
            events.append(("write", fd_path(fd)))
        return real_write(fd, data)

    def fsync(fd: int) -> None:
        with lock:
            events.append(("fsync", fd_path(fd)))
        real_fsync(fd)

    def replace(src: str | os.PathLike[str], dst: str | os.PathLike[str], **kw: object) -> None:
        with lock:
            events.append(("replace", f"{os.fspath(src)} -> {os.fspath(dst)}"))
        real_replace(src, dst, **kw)  # type: ignore[arg-type]

    if not Path("/proc/self/fd").exists():
        pytest.skip("needs /proc to name file descriptors")
    async with open_media_store(tmp_path / "media", ROOMY) as store:
        monkeypatch.setattr(os, "write", write)
        monkeypatch.setattr(os, "fsync", fsync)
        monkeypatch.setattr(os, "replace", replace)
        rec = await save_png(store, payload(200_000))
        monkeypatch.undo()
    media_dir = str((tmp_path / "media").resolve())
    final = str(rec.path)
    [rename_at] = [i for i, (op, what) in enumerate(events)
                   if op == "replace" and what.endswith(f" -> {final}")]
    temp = events[rename_at][1].split(" -> ")[0]
    writes = [i for i, (op, what) in enumerate(events) if op == "write" and what == temp]
    data_syncs = [i for i, (op, what) in enumerate(events) if op == "fsync" and what == temp]
    dir_syncs = [i for i, (op, what) in enumerate(events) if op == "fsync" and what == media_dir]
    assert writes, events
    assert any(max(writes) < i < rename_at for i in data_syncs), f"no fsync of data: {events}"
    assert any(i > rename_at for i in dir_syncs), f"no fsync of the directory: {events}"
    assert rec.path.read_bytes() == payload(200_000)
