"""Units of downloads and the navigation guard: verdicts, names, store, follower."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from browserd.config import load_settings
from browserd.downloads import CancelReason, DownloadState, DownloadStore
from browserd.errors import ConfigError, NotFound
from browserd.http.routes.downloads import content_disposition, safe_filename
from browserd.paths import Paths
from browserd.retention import Retention
from browserd.tabs.navguard import navigation_verdict
from browserd.urlpolicy import UrlPolicy
from tests.fakecdp import FakeCdpPeer, running_follower

GUIDS = [f"{i:08x}-0000-4000-8000-000000000000" for i in range(1, 6)]


# -- verdicts ---------------------------------------------------------------------------------


POLICY = UrlPolicy(blocked_ports=frozenset({18791, 18792}))


@pytest.mark.parametrize(("url", "verdict"), [
    ("http://example.com/page", None),
    ("https://127.0.0.1:8443/x", None),
    ("about:blank", None),
    ("http://127.0.0.1:18791/json/list", "port"),
    ("http://localhost:18792/", "port"),
    ("http://0x7f.1:18792/devtools", "port"),
    ("file:///etc/passwd", "scheme"),
    ("chrome://version/", "scheme"),
    ("data:text/html,hi", "scheme"),
    ("http://exa mple.com/", "invalid"),
])
def test_navigation_verdict(url, verdict):
    assert navigation_verdict(POLICY, url) == verdict


def test_navigation_verdict_judges_a_huge_url_by_its_origin():
    url = "http://example.com/" + "a/" * 40_000 + "?" + "q" * 100_000
    assert navigation_verdict(POLICY, url) is None
    assert navigation_verdict(POLICY, "http://127.0.0.1:18791/" + "x" * 100_000) == "port"


# -- served filenames ----------------------------------------------------------------------------


@pytest.mark.parametrize(("suggested", "safe"), [
    ("../.bashrc", "_.bashrc"),
    ("report.pdf", "report.pdf"),
    ('a"b\r\nSet-Cookie: x', "a_bSet-Cookie_ x"),
    ("..", "download"),
    ("", "download"),
    ("C:\\Windows\\evil.exe", "C__Windows_evil.exe"),
])
def test_safe_filename(suggested, safe):
    assert safe_filename(suggested) == safe


def test_content_disposition_is_always_attachment_with_utf8_name():
    value = content_disposition("naïve résumé.pdf")
    assert value.startswith('attachment; filename="na_ve r_sum_.pdf"; ')
    assert value.endswith("filename*=UTF-8''na%C3%AFve%20r%C3%A9sum%C3%A9.pdf")
    assert "\n" not in content_disposition("x\ny")


# -- the store ------------------------------------------------------------------------------------


def make_store(tmp_path: Path, **retention: Any) -> DownloadStore:
    return DownloadStore(tmp_path / "dl", Retention(**retention), max_bytes=100)


def test_store_records_a_download_through_its_states(tmp_path):
    store = make_store(tmp_path)
    mark = store.mark()
    store.began(GUIDS[0], url="http://e.com/f?x", suggested_filename="f", target_id=None)
    store.claim(GUIDS[0], "T1")
    store.progressed(GUIDS[0], received=5, total=10)
    with pytest.raises(NotFound):
        store.resolve_file(GUIDS[0])  # still in progress
    (store.directory / GUIDS[0]).write_bytes(b"x" * 10)
    store.finish(GUIDS[0], DownloadState.COMPLETED, path=store.directory / GUIDS[0])
    store.finish(GUIDS[0], DownloadState.CANCELED, reason=CancelReason.TOO_LARGE)  # first wins
    record, path = store.resolve_file(GUIDS[0])
    assert record.seq > mark and record.target_id == "T1"
    assert path == store.directory / GUIDS[0]
    body = record.to_json()
    assert body["state"] == "completed" and body["mediaUrl"] == f"/downloads/{GUIDS[0]}"
    assert body["receivedBytes"] == 5 and body["totalBytes"] == 10
    for bad in ("../x", "", GUIDS[1]):
        with pytest.raises(NotFound):
            store.resolve_file(bad)


async def test_store_retention_keeps_newest_and_downloads_in_progress(tmp_path):
    store = make_store(tmp_path, max_files=2)
    now = time.time()
    for i, guid in enumerate(GUIDS[:4]):
        store.began(guid, url="http://e.com/", suggested_filename="f", target_id="T")
        path = store.directory / guid
        path.write_bytes(b"data")
        os.utime(path, (now - 100 + i, now - 100 + i))
        if i != 0:
            store.finish(guid, DownloadState.COMPLETED, path=path)
    stale = store.directory / f"{GUIDS[4]}.crdownload"
    stale.write_bytes(b"partial")
    os.utime(stale, (now - 3600, now - 3600))
    (store.directory / "not-ours.txt").write_bytes(b"keep")
    with trio.fail_after(10):
        removed = await store.prune()
    left = sorted(p.name for p in store.directory.iterdir())
    # GUIDS[0] is in progress (kept); of the completed, the newest two stay within max_files
    # only together with it: the oldest completed ones go.
    assert GUIDS[0] in left and GUIDS[3] in left
    assert removed == 2 and GUIDS[1] not in left and GUIDS[2] not in left
    assert stale.name not in left and "not-ours.txt" in left
    assert store.get(GUIDS[1]).reason is CancelReason.PRUNED


# -- the follower -------------------------------------------------------------------------------


async def run_events(tmp_path: Path, events: list[tuple[str, dict[str, Any]]], *,
                     free: int = 1 << 40) -> tuple[DownloadStore, FakeCdpPeer]:
    """A follower of a fresh store on a peer that sends ``events``, each handled in turn."""
    store = make_store(tmp_path)
    peer = FakeCdpPeer()
    with trio.fail_after(10):
        async with running_follower(peer, store,
                                    locate=lambda frame: "T" if frame == "F" else None,
                                    free_space=lambda: free):
            for method, params in events:
                await peer.deliver(method, params)
    return store, peer


def cancels(peer: FakeCdpPeer) -> list[str]:
    """The downloads the follower canceled in the browser, in order."""
    return [p["guid"] for p in peer.sent("Browser.cancelDownload")]


def begin(guid: str) -> tuple[str, dict[str, Any]]:
    return ("Browser.downloadWillBegin", {"guid": guid, "frameId": "F", "url": "http://e.com/x",
                                          "suggestedFilename": "x"})


def progress(guid: str, received: int, total: int, state: str = "inProgress"
             ) -> tuple[str, dict[str, Any]]:
    return ("Browser.downloadProgress", {"guid": guid, "receivedBytes": received,
                                         "totalBytes": total, "state": state})



async def test_follower_cancels_a_download_over_the_cap_even_of_unknown_size(tmp_path):
    store, peer = await run_events(tmp_path, [
        begin(GUIDS[0]), progress(GUIDS[0], 50, 0), progress(GUIDS[0], 150, 0),
        progress(GUIDS[0], 150, 0, "canceled"),
        begin(GUIDS[1]), progress(GUIDS[1], 0, 500),
    ])
    for guid in GUIDS[:2]:
        record = store.get(guid)
        assert record.state is DownloadState.CANCELED and record.reason is CancelReason.TOO_LARGE
        assert record.target_id == "T"
    assert cancels(peer) == GUIDS[:2]


async def test_follower_completes_and_reports_no_space(tmp_path):
    store, _ = await run_events(tmp_path, [
        begin(GUIDS[0]), progress(GUIDS[0], 10, 10), progress(GUIDS[0], 10, 10, "completed"),
    ])
    assert store.get(GUIDS[0]).state is DownloadState.COMPLETED
    store, peer = await run_events(tmp_path, [begin(GUIDS[1]), progress(GUIDS[1], 0, 50)],
                                   free=1000)
    assert cancels(peer) == [GUIDS[1]]
    assert store.get(GUIDS[1]).reason is CancelReason.NO_SPACE
    store, _ = await run_events(tmp_path, [
        begin(GUIDS[2]), progress(GUIDS[2], 10, 50), progress(GUIDS[2], 10, 50, "canceled"),
    ], free=1000)
    assert store.get(GUIDS[2]).reason is CancelReason.NO_SPACE
    store, _ = await run_events(tmp_path, [
        begin(GUIDS[3]), progress(GUIDS[3], 10, 0), progress(GUIDS[3], 10, 0, "canceled"),
    ])
    assert store.get(GUIDS[3]).reason is CancelReason.INTERRUPTED


# -- settings -------------------------------------------------------------------------------------


def test_download_settings_are_validated(tmp_path):
    paths = Paths.resolve({"BROWSERD_HOME": str(tmp_path)})
    s = load_settings(paths, environ={"BROWSERD_DOWNLOAD_MAX_BYTES": "1048576",
                                      "BROWSERD_DOWNLOADS_ENABLED": "false"})
    assert s.download_max_bytes == 1048576 and s.downloads_enabled is False
    assert paths.downloads_dir("clawd") == tmp_path / "data" / "downloads" / "clawd"
    for key, value in (("DOWNLOAD_MAX_BYTES", "0"), ("DOWNLOAD_MAX_FILES", "0"),
                       ("DOWNLOAD_MAX_AGE_S", "0")):
        with pytest.raises(ConfigError, match=key.lower()):
            load_settings(paths, environ={f"BROWSERD_{key}": value})


async def test_wait_listed_returns_once_the_follower_recorded_the_download(tmp_path):
    """An action's answer names a download the follower may record a moment later."""
    store = make_store(tmp_path)
    done_at: list[float] = []

    async def waiter() -> None:
        await store.wait_listed([GUIDS[0]], timeout_s=5)
        done_at.append(trio.current_time())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(waiter)
        await trio.sleep(0.5)
        assert not done_at  # not listed yet: still waiting
        began_at = trio.current_time()
        store.began(GUIDS[0], url="http://e.com/f", suggested_filename="f", target_id=None)
    assert done_at and done_at[0] - began_at < 0.1


async def test_wait_listed_gives_up_quietly_at_its_deadline(tmp_path):
    store = make_store(tmp_path)
    started = trio.current_time()
    await store.wait_listed([GUIDS[1]], timeout_s=0.3)
    assert 0.3 <= trio.current_time() - started < 1
    await store.wait_listed([], timeout_s=5)  # nothing to wait for: at once
    assert trio.current_time() - started < 1
