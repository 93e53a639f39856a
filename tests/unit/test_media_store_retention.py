"""MediaStore's upkeep: retention, resolving names from the outside, clean-up at open,
statistics, and a directory removed under the store.

Writes, storage errors and cancellation: test_media_store.py.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import time
from pathlib import Path

import pytest
import trio

from browserd.errors import NotFound
from browserd.media import MediaFile, MediaStore, Retention, open_media_store
from tests.unit._media_store import ROOMY, listing, payload, save_png, set_mtime

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


# -- statistics, and a directory removed under the store ---------------------------------------


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
