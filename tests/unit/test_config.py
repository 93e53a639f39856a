"""Settings: defaults, precedence, validation (every error names key + source)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from browserd import config
from browserd.config import (
    DEFAULT_CONTROL_PORT,
    Settings,
    default_headless,
    is_loopback_host,
    load_settings,
)
from browserd.errors import ConfigError, StartupError
from browserd.paths import Paths


@pytest.fixture
def paths(tmp_path: Path) -> Paths:
    return Paths.resolve({"BROWSERD_HOME": str(tmp_path / "home")})


def write_toml(paths: Paths, text: str) -> str:
    paths.config_dir.mkdir(parents=True, exist_ok=True)
    paths.config_file.write_text(text, encoding="utf-8")
    return str(paths.config_file)


def load(paths: Paths, env: dict[str, str] | None = None, **overrides: Any) -> Settings:
    return load_settings(paths, environ=env or {}, overrides=overrides)


# -- defaults ------------------------------------------------------------------


def test_defaults(paths: Paths) -> None:
    s = load(paths)
    assert s.control_url == "http://127.0.0.1:18791"
    assert s.control_host == "127.0.0.1"
    assert s.control_port == DEFAULT_CONTROL_PORT == 18791
    assert s.cdp_port is None
    assert s.effective_cdp_port == 18792
    assert s.effective_cdp_url == "http://127.0.0.1:18792"
    assert 9222 not in (s.control_port, s.effective_cdp_port)
    assert not s.is_attach and not s.is_attach_only
    assert (s.enabled, s.profile, s.color, s.evaluate_enabled) == (True, "clawd", "#FF4500", True)
    assert s.headless is None and s.url_allow == ()


def test_cdp_gateway_is_on_by_default_and_only_for_a_launched_browser(paths: Paths) -> None:
    assert load(paths).cdp_gateway is True and load(paths).gateway_active
    assert not load(paths, {"BROWSERD_CDP_GATEWAY": "false"}).gateway_active
    attached = load(paths, cdp_url="http://127.0.0.1:9333")
    assert attached.cdp_gateway and not attached.gateway_active  # the port is the other's
    write_toml(paths, "cdp_gateway = false\n")
    assert load(paths).cdp_gateway is False
    write_toml(paths, 'cdp_gateway = "maybe"\n')
    with pytest.raises(ConfigError, match="cdp_gateway"):
        load(paths)


def test_cdp_port_follows_control_port(paths: Paths) -> None:
    s = load(paths, {"BROWSERD_CONTROL_URL": "http://127.0.0.1:20000"})
    assert (s.control_port, s.effective_cdp_port) == (20000, 20001)


def test_control_url_without_port_uses_default_port(paths: Paths) -> None:
    s = load(paths, {"BROWSERD_CONTROL_URL": "http://localhost"})
    assert (s.control_host, s.control_port, s.effective_cdp_port) == ("localhost", 18791, 18792)


def test_environ_none_reads_process_environment(
    paths: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BROWSERD_PROFILE", "from-os-environ")
    assert load_settings(paths).profile == "from-os-environ"


# -- precedence ----------------------------------------------------------------


def test_precedence_defaults_toml_env_overrides(paths: Paths) -> None:
    write_toml(paths, 'profile = "file"\ncolor = "#000001"\ncdp_port = 20001\nheadless = false\n')
    env = {"BROWSERD_COLOR": "#000002", "BROWSERD_CDP_PORT": "20002", "BROWSERD_HOME": "/ignored"}
    s = load(paths, env, cdp_port=20003)
    assert s.evaluate_enabled is True  # default: nobody set it
    assert s.profile == "file"  # config.toml over the default
    assert s.headless is False  # config.toml over the default (None)
    assert s.color == "#000002"  # env over config.toml
    assert s.cdp_port == 20003  # overrides over env
    assert s.effective_cdp_port == 20003


def test_override_none_means_not_given(paths: Paths) -> None:
    s = load(paths, {"BROWSERD_HEADLESS": "1"}, headless=None, profile=None)
    assert s.headless is True and s.profile == "clawd"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("1", True), ("true", True), ("YES", True), (" on ", True),
     ("0", False), ("false", False), ("No", False), ("off", False), ("", None)],
)
def test_env_booleans(paths: Paths, raw: str, expected: bool | None) -> None:
    assert load(paths, {"BROWSERD_HEADLESS": raw}).headless is expected


def test_env_disable_and_empty_optional_int(paths: Paths) -> None:
    s = load(paths, {"BROWSERD_ENABLED": "0", "BROWSERD_CDP_PORT": ""})
    assert s.enabled is False and s.cdp_port is None and s.effective_cdp_port == 18792


def test_url_allow_from_env_is_comma_separated(paths: Paths) -> None:
    s = load(paths, {"BROWSERD_URL_ALLOW": " https://a.example , file,, data: "})
    assert s.url_allow == ("https://a.example", "file", "data:")
    assert s.public_dict()["url_allow"] == ["https://a.example", "file", "data:"]


def test_url_allow_from_toml_list(paths: Paths) -> None:
    write_toml(paths, 'url_allow = ["https://a.example", "file"]\n')
    assert load(paths).url_allow == ("https://a.example", "file")


def test_toml_types(paths: Paths) -> None:
    write_toml(paths, "cdp_port = 20000.0\nmedia_max_age_s = 60\nevaluate_enabled = false\n")
    s = load(paths)
    assert s.cdp_port == 20000 and isinstance(s.cdp_port, int)
    assert s.media_max_age_s == 60.0 and isinstance(s.media_max_age_s, float)
    assert s.evaluate_enabled is False


# -- every bad value: ConfigError naming the key and the source -----------------

ENV = "env"
TOML = "toml"
CLI = "cli"

BAD_VALUES: list[tuple[str, str, Any, str]] = [
    # (where, key, raw value, key named in the message)
    (ENV, "headless", "maybe", "headless"),
    (ENV, "enabled", "2", "enabled"),
    (TOML, "headless", 3.5, "headless"),
    (ENV, "cdp_port", "abc", "cdp_port"),
    (ENV, "cdp_port", "18800.5", "cdp_port"),
    (TOML, "cdp_port", True, "cdp_port"),
    (TOML, "cdp_port", 18800.5, "cdp_port"),
    (TOML, "cdp_port", [18800], "cdp_port"),
    (TOML, "media_max_age_s", True, "media_max_age_s"),
    (TOML, "media_max_age_s", [1], "media_max_age_s"),
    (ENV, "restart_window_s", "nan", "restart_window_s"),
    (ENV, "media_max_age_s", "inf", "media_max_age_s"),
    (TOML, "url_allow", [1, 2], "url_allow"),
    (TOML, "profile", 5, "profile"),
    (ENV, "cdp_port", "9222", "cdp_port"),
    (TOML, "cdp_port", 9222, "cdp_port"),
    (CLI, "cdp_port", 9222, "cdp_port"),
    (ENV, "control_url", "http://127.0.0.1:9222", "control_url"),
    (ENV, "control_url", "http://127.0.0.1:9221", "cdp_port"),  # derived cdp = 9222
    (ENV, "control_url", "http://127.0.0.1:65535", "cdp_port"),  # derived cdp = 65536
    (ENV, "cdp_port", "0", "cdp_port"),
    (ENV, "cdp_port", "65536", "cdp_port"),
    (ENV, "cdp_port", "-5", "cdp_port"),
    (ENV, "control_url", "http://127.0.0.1:0", "control_url"),
    (ENV, "control_url", "http://127.0.0.1:70000", "control_url"),
    (ENV, "control_url", "http://127.0.0.1:port", "control_url"),
    (ENV, "cdp_port", "18791", "cdp_port"),  # == control port
    (CLI, "cdp_port", 18791, "cdp_port"),
    (ENV, "color", "red", "color"),
    (TOML, "color", "#FF450", "color"),
    (ENV, "color", "#GG4500", "color"),
    (TOML, "color", "#FF4500\n", "color"),
    (ENV, "profile", "a/b", "profile"),
    (ENV, "profile", "..", "profile"),
    (TOML, "profile", "../escape", "profile"),
    (CLI, "profile", "x/../../y", "profile"),
    (ENV, "profile", ".hidden", "profile"),
    (TOML, "profile", "clawd\n", "profile"),
    (ENV, "profile", "p" * 65, "profile"),
    (ENV, "control_url", "ftp://127.0.0.1:18791", "control_url"),  # (https: tests/unit/test_tls.py)
    (TOML, "control_url", "ws://127.0.0.1:18791", "control_url"),
    (CLI, "control_url", "127.0.0.1:18791", "control_url"),
    (ENV, "control_url", "http://:18791", "control_url"),
    (ENV, "cdp_url", "ftp://127.0.0.1:1", "cdp_url"),
    (TOML, "media_max_files", 0, "media_max_files"),
    (ENV, "tab_queue_limit", "0", "tab_queue_limit"),
]


def _toml_literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace("\n", "\\n") + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_literal(v) for v in value) + "]"
    return repr(value)


@pytest.mark.parametrize(("where", "key", "raw", "named"), BAD_VALUES)
def test_bad_value_names_key_and_source(
    paths: Paths, where: str, key: str, raw: Any, named: str
) -> None:
    env: dict[str, str] = {}
    overrides: dict[str, Any] = {}
    if where == ENV:
        env[f"BROWSERD_{key.upper()}"] = raw
        source = f"$BROWSERD_{key.upper()}"
    elif where == TOML:
        source = write_toml(paths, f"{key} = {_toml_literal(raw)}\n")
    else:
        overrides[key] = raw
        source = "the command line"
    with pytest.raises(ConfigError) as info:
        load(paths, env, **overrides)
    message = str(info.value)
    assert repr(named) in message
    assert source in message
    assert info.value.code == "CONFIG_ERROR"
    assert isinstance(info.value, StartupError)


def test_unknown_key_in_toml(paths: Paths) -> None:
    file = write_toml(paths, 'profile = "ok"\nheadles = true\n')
    with pytest.raises(ConfigError) as info:
        load(paths)
    assert "'headles'" in str(info.value) and file in str(info.value)


def test_toml_table_is_an_unknown_key(paths: Paths) -> None:
    file = write_toml(paths, "[browser]\nheadless = true\n")
    with pytest.raises(ConfigError) as info:
        load(paths)
    assert "'browser'" in str(info.value) and file in str(info.value)


def test_invalid_toml_names_the_file(paths: Paths) -> None:
    file = write_toml(paths, "profile = \n")
    with pytest.raises(ConfigError) as info:
        load(paths)
    assert file in str(info.value)


def test_unknown_override_key(paths: Paths) -> None:
    with pytest.raises(ConfigError, match="'nope'"):
        load(paths, nope=1)


def test_unknown_browserd_env_vars_are_ignored(paths: Paths) -> None:
    assert load(paths, {"BROWSERD_NOT_A_SETTING": "x"}).profile == "clawd"


@pytest.mark.parametrize("profile", ["clawd", "a", "Work-2", "x.y_z", "a..b", "p" * 64])
def test_good_profile_names(paths: Paths, profile: str) -> None:
    assert load(paths, {"BROWSERD_PROFILE": profile}).profile == profile


# -- attach / attach-only ------------------------------------------------------


@pytest.mark.parametrize(
    "url", ["http://10.0.0.5:9333", "ws://example.com:9333/devtools/browser/x",
            "http://0.0.0.0:9333"],
)
def test_non_loopback_cdp_url_implies_attach_only(paths: Paths, url: str) -> None:
    s = load(paths, {"BROWSERD_CDP_URL": url})
    assert s.is_attach_only and s.is_attach
    assert s.attach_only is False  # derived, not stored
    assert s.effective_cdp_url == url and s.effective_cdp_port == 9333


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:9333", "http://localhost:9333", "ws://[::1]:9333/devtools/x"],
)
def test_loopback_cdp_url_is_attach_but_not_attach_only(paths: Paths, url: str) -> None:
    s = load(paths, {"BROWSERD_CDP_URL": url})
    assert s.is_attach and not s.is_attach_only
    assert s.effective_cdp_port == 9333


def test_cdp_url_without_port_uses_scheme_default(paths: Paths) -> None:
    assert load(paths, {"BROWSERD_CDP_URL": "wss://r.example/devtools/b/1"}).effective_cdp_port \
        == 443
    assert load(paths, {"BROWSERD_CDP_URL": "http://127.0.0.1"}).effective_cdp_port == 80


def test_attach_only_setting(paths: Paths) -> None:
    s = load(paths, {"BROWSERD_ATTACH_ONLY": "1"})
    assert s.is_attach_only and s.is_attach
    assert s.effective_cdp_url == "http://127.0.0.1:18792"


# -- headless default ----------------------------------------------------------


@pytest.mark.parametrize(
    ("environ", "expected"),
    [({}, True), ({"DISPLAY": ":0"}, False), ({"WAYLAND_DISPLAY": "wayland-0"}, False),
     ({"DISPLAY": ""}, True), ({"DISPLAY": "", "WAYLAND_DISPLAY": ""}, True)],
)
def test_headless_default_on_linux(
    monkeypatch: pytest.MonkeyPatch, environ: dict[str, str], expected: bool
) -> None:
    monkeypatch.setattr(config.sys, "platform", "linux")
    assert default_headless(environ) is expected
    assert Settings().effective_headless(environ) is expected


@pytest.mark.parametrize("platform", ["darwin", "win32"])
def test_headless_default_with_a_desktop(monkeypatch: pytest.MonkeyPatch, platform: str) -> None:
    monkeypatch.setattr(config.sys, "platform", platform)
    assert default_headless({}) is False


def test_explicit_headless_wins_over_display(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(config.sys, "platform", "linux")
    assert Settings(headless=True).effective_headless({"DISPLAY": ":0"}) is True
    assert Settings(headless=False).effective_headless({}) is False


# -- loopback ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "expected"),
    [("127.0.0.1", True), ("127.5.5.5", True), ("::1", True), ("[::1]", True),
     ("localhost", True), ("LOCALHOST", True), ("0.0.0.0", False), ("::", False),
     ("example.com", False), ("10.0.0.1", False), ("", False), ("localhost.example", False)],
)
def test_is_loopback_host(host: str, expected: bool) -> None:
    assert is_loopback_host(host) is expected
