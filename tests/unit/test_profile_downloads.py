"""Downloads per profile and session: records name them, a deleted profile's files go."""

from __future__ import annotations

from pathlib import Path

import trio
import trio.testing

from browserd.config import load_settings
from browserd.downloads import DownloadStore, remove_downloads
from browserd.paths import Paths
from browserd.profiles.manager import download_store_for, settings_for
from browserd.profilespec import ProfileOrigin, build_spec
from browserd.retention import Retention
from tests.fakecdp import FakeCdpPeer, running_follower

GUIDS = [f"{i:08x}-0000-4000-8000-000000000000" for i in range(1, 4)]


def test_each_profile_has_its_own_download_store(tmp_path: Path) -> None:
    paths = Paths.resolve({"BROWSERD_HOME": str(tmp_path)})
    base = load_settings(paths, environ={})
    work = settings_for(base, build_spec("work", {}, origin=ProfileOrigin.API, where=""), 18800)
    mine, theirs = download_store_for(base, paths), download_store_for(work, paths)
    assert mine.directory == paths.downloads_dir("clawd") and mine.profile == "clawd"
    assert theirs.directory == paths.downloads_dir("work") and theirs.profile == "work"
    assert theirs.directory.is_dir() and (theirs.directory.stat().st_mode & 0o777) == 0o700


async def test_a_record_names_the_profile_and_the_session_of_its_tab(tmp_path: Path) -> None:
    store = DownloadStore(tmp_path / "dl", Retention(), max_bytes=100, profile="work")
    peer = FakeCdpPeer()
    tabs = {"FA": "TAB-A", "FD": "TAB-D"}
    with trio.fail_after(10):
        async with running_follower(peer, store) as follower:
            follower.locate_tabs_with(tabs.get, session_of={"TAB-A": "s-alpha"}.get)
            for guid, frame in zip(GUIDS, ("FA", "FD", "F?"), strict=True):
                await peer.deliver("Browser.downloadWillBegin", {
                    "guid": guid, "frameId": frame, "url": "http://e.com/x",
                    "suggestedFilename": "x"})
    a, d, unknown = (store.get(g) for g in GUIDS)
    assert (a.profile, a.session_id, a.target_id) == ("work", "s-alpha", "TAB-A")
    assert (d.profile, d.session_id, d.target_id) == ("work", None, "TAB-D")
    assert unknown.target_id is None and unknown.session_id is None
    assert a.to_json()["profile"] == "work" and a.to_json()["session"] == "s-alpha"
    # a wait in a session claims a record the follower could not place
    store.claim(GUIDS[2], "TAB-B", "s-beta")
    assert store.get(GUIDS[2]).session_id == "s-beta"


def test_removing_a_profiles_downloads_removes_only_download_files(tmp_path: Path) -> None:
    directory = tmp_path / "downloads" / "gone"
    directory.mkdir(parents=True)
    (directory / GUIDS[0]).write_bytes(b"done")
    (directory / f"{GUIDS[1]}.crdownload").write_bytes(b"part")
    assert remove_downloads(directory) == 2 and not directory.exists()
    # someone else's file: it stays, and so does the directory
    directory.mkdir()
    (directory / GUIDS[0]).write_bytes(b"done")
    (directory / "notes.txt").write_text("mine")
    assert remove_downloads(directory) == 1
    assert (directory / "notes.txt").read_text() == "mine"
    # a symlink is never followed
    link = tmp_path / "downloads" / "link"
    link.symlink_to(directory)
    assert remove_downloads(link) == 0 and (directory / "notes.txt").exists()
    assert remove_downloads(tmp_path / "nothing") == 0
