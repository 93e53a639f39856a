"""Profiles as data: config tables, the store, stable ports, the manager's table (no browser)."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from browserd.browser.live import LiveBrowser, user_data_dir
from browserd.browser.profile import MARKER
from browserd.config import Settings, load_settings
from browserd.errors import (
    BadRequest,
    ConfigError,
    PortInUse,
    ProfileExists,
    ProfileNotFound,
    ProfileProtected,
)
from browserd.paths import Paths
from browserd.profiles.manager import ProfileManager, settings_for
from browserd.profiles.store import ProfileStore, allocate_port
from browserd.profilespec import Driver, ProfileOrigin, build_spec


def paths_with(tmp_path: Path, config: str = "") -> Paths:
    paths = Paths.resolve({"BROWSERD_HOME": str(tmp_path)})
    paths.config_dir.mkdir(parents=True, exist_ok=True)
    (paths.config_dir / "config.toml").write_text(config)
    return paths


def test_profile_tables_parse_and_default_profile_is_the_profile_key(tmp_path: Path) -> None:
    paths = paths_with(tmp_path, """
default_profile = "main"
[profiles.work]
color = "#0066CC"
cdp_port = 18805
[profiles.remote]
driver = "cdp"
cdp_url = "http://127.0.0.1:9333"
""")
    settings = load_settings(paths, environ={})
    assert settings.profile == "main"
    specs = {s.name: s for s in settings.profiles}
    assert specs["work"].driver == Driver.LAUNCH and specs["work"].cdp_port == 18805
    assert specs["remote"].driver == Driver.CDP
    assert specs["remote"].cdp_url == "http://127.0.0.1:9333"


@pytest.mark.parametrize(("table", "needle"), [
    ('[profiles.x]\ndriver = "live"\ncdp_port = 18850', "takes no cdp_port"),
    ('[profiles.x]\ndriver = "live"\nlive_browser = "netscape"', "live_browser"),
    ('[profiles.x]\ndriver = "live"\napproval_timeout_s = 0', "approval_timeout_s"),
    ('[profiles.x]\ndriver = "live"\nlive_fallback = "x"', "another profile"),
    ('[profiles.x]\nuser_data_dir = "/tmp/u"', "for driver 'live'"),
    ('[profiles.x]\ndriver = "extension"\nexecutable = "/bin/x"', "takes no cdp_port"),
    ('[profiles.x]\ndriver = "warp"', "unknown driver"),
    ('[profiles.x]\ncolour = "#000000"', "unknown key"),
    ('[profiles.Bad]\ncolor = "#000000"', "profile name"),
    ('[profiles.x]\ndriver = "cdp"', "needs cdp_url"),
    ('[profiles.x]\ncdp_url = "http://127.0.0.1:1"', "for driver 'cdp'"),
    ('[profiles.x]\ncdp_port = 9222', "reserved"),
    ('[profiles.clawd]\ncolor = "#000000"', "default profile"),
    ('[profiles.a]\ncdp_port = 18850\n[profiles.b]\ncdp_port = 18850', "same cdp_port"),
])
def test_bad_profile_tables_are_config_errors(tmp_path: Path, table: str, needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        load_settings(paths_with(tmp_path, table), environ={})


def test_an_extension_profile_is_served_through_the_relay(tmp_path: Path) -> None:
    spec = build_spec("x", {"driver": "extension", "color": "#C71585"},
                      origin=ProfileOrigin.API, where="x")
    assert spec.to_record() == {"driver": "extension", "color": "#C71585"}
    settings = settings_for(Settings(), spec, None)
    assert not settings.gateway_active  # no gateway port is allocated for it
    paths = Paths.resolve({"BROWSERD_HOME": str(tmp_path)})
    manager = ProfileManager(Settings(profiles=(spec,)), paths, is_port_free=lambda p: True)
    manager.load()
    profile = manager.get("x")
    assert profile.gateway_port is None and profile.supervisor.url_policy is None


def test_a_live_profile_finds_its_browsers_user_data_directory(tmp_path: Path) -> None:
    spec = build_spec("mine", {"driver": "live", "live_browser": "chromium",
                               "live_fallback": "clawd", "approval_timeout_s": 5},
                      origin=ProfileOrigin.API, where="x")
    assert spec.to_record() == {"driver": "live", "live_browser": "chromium",
                                "approval_timeout_s": 5.0, "live_fallback": "clawd"}
    settings = settings_for(Settings(), spec, None)
    assert settings.is_live and settings.is_attach and not settings.gateway_active
    assert settings.live_user_data_dir == str(user_data_dir(LiveBrowser.CHROMIUM))
    assert settings.approval_timeout_s == 5.0
    given = build_spec("mine", {"driver": "live", "user_data_dir": str(tmp_path)},
                       origin=ProfileOrigin.API, where="x")
    assert settings_for(Settings(), given, None).live_user_data_dir == str(tmp_path)
    assert settings_for(Settings(), given, None).approval_timeout_s == 60.0


def test_allocate_port_skips_taken_and_busy_ports() -> None:
    assert allocate_port(100, 105, taken={100}, is_free=lambda p: p != 101) == 102
    with pytest.raises(PortInUse):
        allocate_port(100, 101, taken={100, 101}, is_free=lambda p: True)


def test_the_store_round_trips_and_skips_entries_that_no_longer_validate(tmp_path: Path) -> None:
    store = ProfileStore(tmp_path / "profiles.json")
    store.created["a"] = build_spec("a", {"color": "#010203"}, origin=ProfileOrigin.API, where="")
    store.ports["a"] = 18800
    store.save()
    assert (tmp_path / "profiles.json").stat().st_mode & 0o777 == 0o600
    text = (tmp_path / "profiles.json").read_text().replace(
        '"profiles": {', '"profiles": {"old": {"driver": "warp"}, ')
    (tmp_path / "profiles.json").write_text(text)
    again = ProfileStore(tmp_path / "profiles.json")
    again.load()
    assert set(again.created) == {"a"} and again.created["a"].color == "#010203"
    assert again.ports == {"a": 18800}


def test_settings_for_a_profile_keep_the_service_settings_but_its_own() -> None:
    base = Settings(tab_queue_limit=3)
    spec = build_spec("work", {"color": "#0066CC", "headless": False},
                      origin=ProfileOrigin.CONFIG, where="")
    mine = settings_for(base, spec, 18801)
    assert (mine.profile, mine.color, mine.headless, mine.cdp_port) == (
        "work", "#0066CC", False, 18801)
    assert mine.tab_queue_limit == 3 and mine.gateway_active and not mine.is_attach
    remote = settings_for(base, build_spec("r", {"driver": "cdp", "cdp_url": "ws://h:1/x"},
                                           origin=ProfileOrigin.API, where=""), None)
    assert remote.is_attach and not remote.gateway_active
    unnamed = settings_for(base, build_spec("other", {}, origin=ProfileOrigin.API, where=""), 1)
    assert unnamed.color.startswith("#") and unnamed.color == settings_for(
        base, build_spec("other", {}, origin=ProfileOrigin.API, where=""), 2).color  # stable


def test_ports_are_allocated_once_and_kept_across_restarts(tmp_path: Path) -> None:
    paths = paths_with(tmp_path, "[profiles.b]\n[profiles.a]\n")
    settings = load_settings(paths, environ={})
    first = ProfileManager(settings, paths, is_port_free=lambda p: p != 18800)
    first.load()
    ports = {p.name: p.gateway_port for p in first.all()}
    assert ports == {"clawd": 18792, "a": 18801, "b": 18802}
    # later, 18801 is busy (someone else's) and 18800 free: the profiles keep theirs
    second = ProfileManager(settings, paths, is_port_free=lambda p: p != 18801)
    second.load()
    assert {p.name: p.gateway_port for p in second.all()} == ports
    assert second.url_policy.blocked_ports >= {18791, 18792, 18801, 18802}
    # every port of the profile range is blocked from the start (a profile made later
    # gets one of them), and nothing else is
    assert second.url_policy.blocked_ports == {18791, 18792, *range(18800, 18900)}


async def test_create_and_delete_through_the_manager(tmp_path: Path) -> None:
    paths = paths_with(tmp_path, "[profiles.cfg]\n")
    settings = load_settings(paths, environ={})
    manager = ProfileManager(settings, paths, is_port_free=lambda p: True)
    manager.load()
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            await nursery.start(manager.run)
            made = await manager.create("tmp", {"color": "#111111"})
            directory = paths.profile_dir("tmp")
            assert (directory / MARKER).is_file() and made.gateway_port == 18801  # cfg has 18800
            assert 18801 in manager.url_policy.blocked_ports
            with pytest.raises(ProfileExists):
                await manager.create("tmp", {})
            with pytest.raises(BadRequest):
                await manager.create("Nope!", {})
            for protected in ("clawd", "cfg"):
                with pytest.raises(ProfileProtected):
                    await manager.delete(protected, keep_data=False)
            result = await manager.delete("tmp", keep_data=False)
            assert result["dataRemoved"] is True and not directory.exists()
            assert made.done.is_set()
            # the port range stays blocked: a port may be handed to the next profile
            assert 18801 in manager.url_policy.blocked_ports
            assert not (directory.parent.parent / "downloads" / "tmp").exists()
            with pytest.raises(ProfileNotFound):
                manager.get("tmp")
            # a created profile is persisted; the next service has it
            await manager.create("again", {})
            nursery.cancel_scope.cancel()
    reloaded = ProfileManager(settings, paths, is_port_free=lambda p: True)
    reloaded.load()
    assert {p.name for p in reloaded.all()} == {"clawd", "cfg", "again"}
