"""Profile specs at their edges, and profile names that could escape their directory.

Written for the mutants of ``profilespec.py`` (``python -m supervision.mutants
--only profile-spec``) and for the audit's "profile names ``.``, ``..``, ``.x``
are refused everywhere": in ``config.toml``, ``BROWSERD_PROFILE``, ``POST
/profiles``' check, the store read back from disk, ``live_fallback`` and the
relay's pairing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from browserd.config import load_settings
from browserd.errors import BadRequest, ConfigError
from browserd.paths import Paths
from browserd.profiles.store import ProfileStore
from browserd.profilespec import (
    DEFAULT_APPROVAL_TIMEOUT_S,
    Driver,
    ProfileOrigin,
    ProfileSpec,
    build_spec,
    check_profile_name,
    parse_driver,
    parse_profile_table,
)
from browserd.relay import PairingStore

DOTTED = [".", "..", ".x", "..x", "./x", "../x", "x/..", "x/y"]


def spec(values: dict[str, Any], name: str = "p") -> ProfileSpec:
    return build_spec(name, values, origin=ProfileOrigin.API, where="here")


# -- names -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", DOTTED)
def test_a_dotted_or_pathlike_profile_name_is_refused_everywhere(tmp_path: Path,
                                                                 name: str) -> None:
    with pytest.raises(BadRequest):
        check_profile_name(name, error=BadRequest)
    with pytest.raises(ConfigError):
        check_profile_name(name)
    with pytest.raises(BadRequest):
        spec({}, name=name)
    with pytest.raises(ConfigError):
        parse_profile_table(name, {}, source="config.toml")
    with pytest.raises(BadRequest):
        spec({"driver": "live", "live_fallback": name})
    with pytest.raises(BadRequest):
        PairingStore(tmp_path).new_code(name)
    paths = Paths.resolve({"BROWSERD_HOME": str(tmp_path)})
    paths.config_dir.mkdir(parents=True, exist_ok=True)
    with pytest.raises(ConfigError):
        load_settings(paths, environ={"BROWSERD_PROFILE": name})
    (paths.config_dir / "config.toml").write_text(f'[profiles."{name}"]\n')
    with pytest.raises(ConfigError):
        load_settings(paths, environ={})
    # A store file naming one (written by hand, or by an older version) is skipped.
    store_file = tmp_path / "profiles.json"
    store_file.write_text(json.dumps({"version": 1, "profiles": {
        name: {"driver": "launch"}, "fine": {"driver": "launch"}}}))
    store = ProfileStore(store_file)
    store.load()
    assert set(store.created) == {"fine"}


def test_names_are_one_to_32_lowercase_letters_digits_or_dashes() -> None:
    for good in ("a", "0", "a-b", "x" * 32, "9-lives"):
        assert check_profile_name(good) == good
    for bad in ("", "-a", "A", "x" * 33, "a_b", "a.b", "a b", 5, None):
        with pytest.raises(ConfigError):
            check_profile_name(bad)
    with pytest.raises(BadRequest) as info:
        check_profile_name("A", error=BadRequest)
    assert info.value.to_dict().get("field") == "name"


# -- drivers and values ------------------------------------------------------------------


def test_drivers() -> None:
    assert parse_driver("cdp", where="w") is Driver.CDP
    assert parse_driver(Driver.LIVE, where="w") is Driver.LIVE
    with pytest.raises(BadRequest, match="unknown driver"):
        parse_driver("warp", where="w")
    assert spec({}).driver is Driver.LAUNCH


@pytest.mark.parametrize("port", [0, -1, 65536, True, "18800", 1.5, 9222])
def test_a_bad_cdp_port_is_refused(port: Any) -> None:
    with pytest.raises(BadRequest):
        spec({"cdp_port": port})


@pytest.mark.parametrize("port", [1, 65535, 18800, 9221, 9223])
def test_a_good_cdp_port_is_kept(port: int) -> None:
    assert spec({"cdp_port": port}).cdp_port == port


@pytest.mark.parametrize(("values", "needle"), [
    ({"color": "red"}, "color"), ({"color": "#12345"}, "color"), ({"color": 5}, "color"),
    ({"color": "#1234567"}, "color"),
    ({"headless": "yes"}, "headless"), ({"executable": 5}, "executable"),
    ({"driver": "cdp"}, "needs cdp_url"),
    ({"driver": "cdp", "cdp_url": "http://h:1", "cdp_port": 18800}, "not cdp_port"),
    ({"driver": "cdp", "cdp_url": "http://h:1", "executable": "/x"}, "not cdp_port"),
    ({"driver": "cdp", "cdp_url": "http://h:1", "headless": True}, "not cdp_port"),
    ({"driver": "cdp", "cdp_url": "ftp://h:1"}, "cdp_url"),
    ({"driver": "cdp", "cdp_url": "http://:1"}, "cdp_url"),
    ({"driver": "cdp", "cdp_url": 5}, "cdp_url"),
    ({"cdp_url": "http://h:1"}, "for driver 'cdp'"),
    ({"driver": "live", "cdp_port": 18800}, "takes no"),
    ({"driver": "live", "executable": "/x"}, "takes no"),
    ({"driver": "extension", "headless": False}, "takes no"),
    ({"driver": "live", "user_data_dir": "  "}, "user_data_dir"),
    ({"driver": "live", "user_data_dir": 5}, "user_data_dir"),
    ({"driver": "live", "approval_timeout_s": 0.5}, "approval_timeout_s"),
    ({"driver": "live", "approval_timeout_s": 601}, "approval_timeout_s"),
    ({"driver": "live", "approval_timeout_s": True}, "approval_timeout_s"),
    ({"driver": "live", "approval_timeout_s": "60"}, "approval_timeout_s"),
    ({"driver": "live", "live_fallback": "p"}, "another profile"),
    ({"driver": "live", "live_browser": "netscape"}, "live_browser"),
    ({"approval_timeout_s": 60}, "for driver 'live'"),
    ({"driver": "cdp", "cdp_url": "http://h:1", "live_fallback": "q"}, "for driver 'live'"),
    ({"driver": "live", "allowed_origins": ["https://a.test"]}, "page guards"),
    ({"driver": "extension", "allowed_origins": ["https://a.test"]}, "page guards"),
    ({"allowed_origins": "https://a.test"}, "list of origin patterns"),
    ({"allowed_origins": [5]}, "list of origin patterns"),
    ({"allowed_origins": ["not an origin at all ::"]}, "allowed_origins"),
])
def test_bad_values_are_refused_with_a_reason(values: dict[str, Any], needle: str) -> None:
    with pytest.raises(BadRequest, match=needle):
        spec(values)


def test_each_driver_keeps_what_it_was_given() -> None:
    launch = spec({"color": "#A0b1C2", "headless": False, "executable": "/opt/c",
                   "cdp_port": 18800, "allowed_origins": ("https://a.test",)})
    assert (launch.color, launch.headless, launch.executable, launch.cdp_port,
            launch.allowed_origins) == ("#A0b1C2", False, "/opt/c", 18800, ("https://a.test",))
    assert launch.to_record() == {"driver": "launch", "color": "#A0b1C2", "headless": False,
                                  "executable": "/opt/c", "cdp_port": 18800,
                                  "allowed_origins": ["https://a.test"]}
    assert spec({}).to_record() == {"driver": "launch"}
    cdp = spec({"driver": "cdp", "cdp_url": "wss://h.test:9/x",
                "allowed_origins": ["https://b.test"]})
    assert (cdp.cdp_url, cdp.allowed_origins) == ("wss://h.test:9/x", ("https://b.test",))
    assert cdp.to_record() == {"driver": "cdp", "cdp_url": "wss://h.test:9/x",
                               "allowed_origins": ["https://b.test"]}
    live = spec({"driver": "live", "user_data_dir": "/home/u/.config/c",
                 "approval_timeout_s": 1, "live_fallback": "other"})
    assert (live.live_browser is not None, live.user_data_dir, live.approval_timeout_s,
            live.live_fallback) == (True, "/home/u/.config/c", 1.0, "other")
    assert live.to_record()["approval_timeout_s"] == 1.0
    assert spec({"driver": "live", "approval_timeout_s": 600}).approval_timeout_s == 600.0
    plain_live = spec({"driver": "live"})
    assert (plain_live.user_data_dir, plain_live.approval_timeout_s,
            plain_live.live_fallback) == (None, None, None)
    assert str(plain_live.live_browser) == "chrome"
    assert 1 <= DEFAULT_APPROVAL_TIMEOUT_S <= 600
    extension = spec({"driver": "extension"})
    assert extension.to_record() == {"driver": "extension"}


def test_a_profile_table_must_be_a_table_of_known_keys() -> None:
    with pytest.raises(ConfigError, match="must be a table"):
        parse_profile_table("p", ["driver"], source="c.toml")
    with pytest.raises(ConfigError, match="unknown key") as info:
        parse_profile_table("p", {"colour": "#000000"}, source="c.toml")
    assert "accepted:" in (info.value.hint or "")
    with pytest.raises(ConfigError, match=r"\[profiles.p\] in c.toml"):
        parse_profile_table("p", {"color": "red"}, source="c.toml")
    made = parse_profile_table("p", {"color": "#000000"}, source="c.toml")
    assert made.origin is ProfileOrigin.CONFIG and made.name == "p"
