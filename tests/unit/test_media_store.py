"""MediaStore: atomic writes, storage errors as 507, retention, safe name resolution."""

from __future__ import annotations

import errno
import os
import random
import re
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
from browserd.errors import InsufficientStorage, NotFound
from browserd.media import (
    MediaFile,
    MediaStore,
    Retention,
    media_token,
    media_url,
    open_media_store,
)

NAME_RE = re.compile(r"screenshot-[0-9]{8}-[0-9]{6}-[0-9a-f]{24}\.png")
ROOMY = Retention(max_files=10_000, max_bytes=1 << 40, max_age_s=10 * 86400.0)


def listing(directory: Path) -> list[str]:
    return sorted(os.listdir(directory))


def temps(directory: Path) -> list[str]:
    return [n for n in os.listdir(directory) if n.endswith(".tmp")]


def set_mtime(path: Path, when: float) -> None:
    os.utime(path, (when, when))


def payload(n: int, seed: int = 0) -> bytes:
    return random.Random(seed).randbytes(n)


async def save_png(store: MediaStore, data: bytes) -> MediaFile:
    return await store.save(data, kind="screenshot", ext="png", mime="image/png")


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


# -- retention ---------------------------------------------------------------------------------


async def _seed(directory: Path, sizes: list[int], ages: list[float]) -> list[MediaFile]:
    """Save files with a roomy store, then give them the given ages (seconds before now)."""
    store = MediaStore(directory, ROOMY)
    recs = [await save_png(store, payload(size, seed=i)) for i, size in enumerate(sizes)]
    now = time.time()
    for rec, age in zip(recs, ages, strict=True):
        set_mtime(rec.path, now - age)
    return recs


async def test_retention_by_count_removes_oldest_first(tmp_path: Path) -> None:
    with trio.fail_after(10):
        # creation order differs from mtime order: mtime is what counts
        recs = await _seed(tmp_path, [10] * 5, ages=[30, 50, 10, 40, 20])
        store = MediaStore(tmp_path, Retention(max_files=3))
        assert await store.prune() == 2
    assert listing(tmp_path) == sorted([recs[0].name, recs[2].name, recs[4].name])
    st = store.statistics()
    assert (st.files, st.bytes, st.pruned) == (3, 30, 2)


async def test_retention_by_bytes_removes_oldest_first(tmp_path: Path) -> None:
    with trio.fail_after(10):
        recs = await _seed(tmp_path, [1000, 1000, 1000, 1000], ages=[40, 10, 30, 20])
        store = MediaStore(tmp_path, Retention(max_bytes=2500))
        assert await store.prune() == 2
    assert listing(tmp_path) == sorted([recs[1].name, recs[3].name])
    assert store.statistics().bytes == 2000


async def test_retention_by_age(tmp_path: Path) -> None:
    with trio.fail_after(10):
        recs = await _seed(tmp_path, [10, 10, 10], ages=[100, 5, 60])
        store = MediaStore(tmp_path, Retention(max_age_s=50))
        assert await store.prune() == 2
    assert listing(tmp_path) == [recs[1].name]


async def test_retention_ties_broken_by_name(tmp_path: Path) -> None:
    with trio.fail_after(10):
        recs = await _seed(tmp_path, [10] * 4, ages=[20] * 4)
        store = MediaStore(tmp_path, Retention(max_files=1))
        await store.prune()
    assert listing(tmp_path) == [max(r.name for r in recs)]


async def test_retention_after_save_keeps_the_new_file_and_removes_oldest(tmp_path: Path) -> None:
    with trio.fail_after(10):
        store = MediaStore(tmp_path, Retention(max_files=2))
        a = await save_png(store, b"a")
        b = await save_png(store, b"b")
        now = time.time()
        set_mtime(a.path, now - 10)  # a is newer than b
        set_mtime(b.path, now - 20)
        c = await save_png(store, b"c")
    assert listing(tmp_path) == sorted([a.name, c.name])
    assert store.statistics().pruned == 1


@pytest.mark.parametrize("retention", [Retention(max_bytes=10), Retention(max_files=0)])
async def test_the_file_just_saved_is_never_pruned(tmp_path: Path, retention: Retention) -> None:
    with trio.fail_after(10):
        await _seed(tmp_path, [10, 10], ages=[20, 10])
        store = MediaStore(tmp_path, retention)
        rec = await save_png(store, payload(100))
    assert listing(tmp_path) == [rec.name]
    assert rec.path.read_bytes() == payload(100)


async def test_the_file_just_saved_survives_even_with_an_old_mtime_clock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A wall clock jumping forward between write and prune must not take the new file.
    store = MediaStore(tmp_path, Retention(max_age_s=5))
    real_pass = store._retention_pass

    def late_pass(keep: str | None) -> object:
        for name in os.listdir(tmp_path):
            set_mtime(tmp_path / name, time.time() - 3600)
        return real_pass(keep)

    monkeypatch.setattr(store, "_retention_pass", late_pass)
    with trio.fail_after(10):
        rec = await save_png(store, b"new")
    assert listing(tmp_path) == [rec.name]


async def test_retention_leaves_foreign_files_alone(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / ".hidden").write_text("mine")
    (tmp_path / "screenshot-20240101-000000-zz.png").write_text("not our shape")
    (tmp_path / "sub").mkdir()
    old = time.time() - 10 * 86400
    for name in ("notes.txt", ".hidden", "screenshot-20240101-000000-zz.png", "sub"):
        set_mtime(tmp_path / name, old)
    with trio.fail_after(10):
        store = MediaStore(tmp_path, Retention(max_files=0, max_bytes=0, max_age_s=1))
        assert await store.prune() == 0
    assert listing(tmp_path) == sorted(
        [".hidden", "notes.txt", "screenshot-20240101-000000-zz.png", "sub"]
    )


def test_retention_limits_are_validated() -> None:
    with pytest.raises(ValueError):
        Retention(max_files=-1)
    with pytest.raises(ValueError):
        Retention(max_bytes=-1)
    with pytest.raises(ValueError):
        Retention(max_age_s=-1.0)
    assert Retention() == Retention(max_files=200, max_bytes=500 * 1024 * 1024, max_age_s=86400)


# -- names from the outside --------------------------------------------------------------------

VALID = "screenshot-20240102-030405-0123456789abcdef01234567.png"


@pytest.mark.parametrize(
    "name",
    [
        "../x",
        "..",
        ".",
        "",
        ".hidden",
        "a/b",
        "/etc/passwd",
        "%2e%2e%2fx",
        "..%2fx",
        "..%2F{real}",
        "a/../{real}",
        "./{real}",
        "{real}/",
        "{real}\n",
        "{real}\x00",
        " {real}",
        "{real}.png",
        "{upper}",
        ".{real}.tmp",
        "k" * 200 + VALID[10:],
        "x" * 10_000,
    ],
)
async def test_resolve_refuses_bad_names_like_missing_ones(tmp_path: Path, name: str) -> None:
    media = tmp_path / "media"
    with trio.fail_after(10):
        store = MediaStore(media, ROOMY)
        rec = await save_png(store, b"real")
    name = name.format(real=rec.name, upper=rec.name.upper())
    # make the bad names point at real files, so only the name check can refuse them
    (tmp_path / "x").write_text("outside")
    (media / "a").mkdir()
    (media / "a" / "b").write_text("nested")
    if "/" not in name and name not in ("", ".", ".."):
        try:
            (media / name).write_bytes(b"planted")
        except (OSError, ValueError):
            pass  # NUL or over-long: the OS refuses it too
    with pytest.raises(NotFound) as bad:
        store.resolve(name)
    with pytest.raises(NotFound) as missing:
        store.resolve(VALID)
    assert bad.value.status == 404 and bad.value.code == "NOT_FOUND"
    assert bad.value.to_dict() == missing.value.to_dict()  # indistinguishable
    assert store.resolve(rec.name).path == rec.path


async def test_resolve_refuses_symlinks_and_directories(tmp_path: Path) -> None:
    outside = tmp_path / "secret.png"
    outside.write_bytes(b"secret")
    media = tmp_path / "media"
    store = MediaStore(media, ROOMY)
    link_name = "screenshot-20240102-030405-aaaaaaaaaaaaaaaaaaaaaaaa.png"
    dir_name = "screenshot-20240102-030405-bbbbbbbbbbbbbbbbbbbbbbbb.png"
    (media / link_name).symlink_to(outside)
    (media / dir_name).mkdir()
    for name in (link_name, dir_name):
        with pytest.raises(NotFound):
            store.resolve(name)


# -- startup -----------------------------------------------------------------------------------


async def test_open_removes_stale_temps_only(tmp_path: Path) -> None:
    with trio.fail_after(10):
        recs = await _seed(tmp_path, [10], ages=[5])
    stale = tmp_path / f".{VALID}.tmp"
    fresh = tmp_path / ".screenshot-20240102-030405-cccccccccccccccccccccccc.png.tmp"
    foreign = tmp_path / ".editor-swap.tmp"
    for p in (stale, fresh, foreign):
        p.write_bytes(b"partial")
    set_mtime(stale, time.time() - 120)
    set_mtime(foreign, time.time() - 120)
    with trio.fail_after(10):
        async with open_media_store(tmp_path, ROOMY) as store:
            assert listing(tmp_path) == sorted([recs[0].name, fresh.name, foreign.name])
            st = store.statistics()
            assert (st.files, st.bytes) == (1, 10)
            # the fresh one goes too, once it has aged past the threshold
            set_mtime(fresh, time.time() - 120)
            await store.prune()
    assert listing(tmp_path) == sorted([recs[0].name, foreign.name])


async def test_open_applies_retention(tmp_path: Path) -> None:
    with trio.fail_after(10):
        recs = await _seed(tmp_path, [10, 10], ages=[2 * 86400, 5])
        async with open_media_store(tmp_path, Retention()) as store:
            assert store.statistics().pruned == 1
    assert listing(tmp_path) == [recs[1].name]


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


async def test_statistics_and_retention_as_seen_from_outside(tmp_path: Path) -> None:
    async with open_media_store(tmp_path / "media", ROOMY) as store:
        assert store.retention == ROOMY
        stats = store.statistics()
        assert (stats.files, stats.bytes, stats.saves, stats.failures) == (0, 0, 0, 0)
        await save_png(store, payload(1000))
        await save_png(store, payload(500, seed=1))
        stats = store.statistics()
        assert (stats.files, stats.bytes, stats.saves) == (2, 1500, 2)


async def test_a_directory_removed_under_the_store_is_recreated_private(tmp_path: Path) -> None:
    async with open_media_store(tmp_path / "media", ROOMY) as store:
        shutil.rmtree(tmp_path / "media")
        rec = await save_png(store, payload(100))
        assert rec.path.read_bytes() == payload(100)
        assert stat.S_IMODE((tmp_path / "media").stat().st_mode) == 0o700


async def test_a_whole_tree_removed_under_the_store_is_recreated(tmp_path: Path) -> None:
    async with open_media_store(tmp_path / "cache" / "media", ROOMY) as store:
        assert store.directory == tmp_path / "cache" / "media"
        shutil.rmtree(tmp_path / "cache")  # the media directory's parent too
        rec = await save_png(store, payload(100))
        assert rec.path.read_bytes() == payload(100)
        assert stat.S_IMODE((tmp_path / "cache" / "media").stat().st_mode) == 0o700


async def test_a_pass_over_an_unreadable_directory_prunes_nothing_and_says_zero(
    tmp_path: Path,
) -> None:
    async with open_media_store(tmp_path / "media", ROOMY) as store:
        await save_png(store, payload(100))
        shutil.rmtree(tmp_path / "media")
        assert await store.prune() == 0
        assert store.statistics().pruned == 0


async def test_a_file_gone_before_retention_removes_it_counts_as_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another remover (a person, a second pass) got there first: it is gone all the same."""
    async with open_media_store(tmp_path / "media", ROOMY) as store:
        old = await save_png(store, payload(100))
        set_mtime(old.path, time.time() - 30 * 86400)  # past any age limit
        real_unlink = Path.unlink

        def unlink(self: Path, missing_ok: bool = False) -> None:
            real_unlink(self)
            if self == old.path:
                raise FileNotFoundError(errno.ENOENT, "gone meanwhile", str(self))

        monkeypatch.setattr(Path, "unlink", unlink)
        assert await store.prune() == 1
        assert store.statistics().pruned == 1
