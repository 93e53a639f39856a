"""Paths: BROWSERD_HOME puts everything under one dir; else platformdirs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from browserd.paths import Paths, ensure_private_dir

XDG_VARS = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME")


def test_browserd_home_puts_everything_under_one_dir(tmp_path: Path) -> None:
    p = Paths.resolve({"BROWSERD_HOME": str(tmp_path)})
    assert p.config_dir == tmp_path / "config"
    assert p.data_dir == tmp_path / "data"
    assert p.cache_dir == tmp_path / "cache"
    assert p.log_dir == tmp_path / "logs"
    assert p.config_file == tmp_path / "config" / "config.toml"
    assert p.token_file == tmp_path / "config" / "token"
    assert p.profiles_dir == tmp_path / "data" / "profiles"
    assert p.profile_dir("clawd") == tmp_path / "data" / "profiles" / "clawd"
    assert p.media_dir == tmp_path / "cache" / "media"
    assert p.state_dir == tmp_path / "data" / "run"
    for value in p.as_dict().values():
        assert Path(value).is_relative_to(tmp_path)
    assert set(p.as_dict()) == {"config_dir", "data_dir", "cache_dir", "log_dir"}


def test_nothing_is_created(tmp_path: Path) -> None:
    p = Paths.resolve({"BROWSERD_HOME": str(tmp_path / "home")})
    _ = (p.token_file, p.media_dir, p.profile_dir("x"), p.state_dir)
    assert not (tmp_path / "home").exists()


def test_relative_and_tilde_home_become_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert Paths.resolve({"BROWSERD_HOME": "rel"}).config_dir == tmp_path / "rel" / "config"
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    assert Paths.resolve({"BROWSERD_HOME": "~/bd"}).data_dir == tmp_path / "user" / "bd" / "data"


def test_empty_browserd_home_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    for var in XDG_VARS:
        monkeypatch.delenv(var, raising=False)
    p = Paths.resolve({"BROWSERD_HOME": ""})
    assert p.config_dir.is_relative_to(tmp_path) and "browserd" in p.config_dir.parts


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="XDG layout is Linux's")
def test_platformdirs_layout_from_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("BROWSERD_HOME", raising=False)
    for var in XDG_VARS:
        monkeypatch.delenv(var, raising=False)
    p = Paths.resolve()
    assert p.config_dir == tmp_path / ".config" / "browserd"
    assert p.data_dir == tmp_path / ".local" / "share" / "browserd"
    assert p.cache_dir == tmp_path / ".cache" / "browserd"
    assert p.log_dir.is_relative_to(tmp_path / ".local" / "state" / "browserd")
    assert p.token_file == tmp_path / ".config" / "browserd" / "token"
    assert p.profiles_dir == tmp_path / ".local" / "share" / "browserd" / "profiles"
    assert p.profile_dir("clawd") == p.profiles_dir / "clawd"
    assert p.media_dir == tmp_path / ".cache" / "browserd" / "media"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="XDG layout is Linux's")
def test_platformdirs_layout_from_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for var, sub in zip(XDG_VARS, ("cfg", "data", "cache", "state"), strict=True):
        monkeypatch.setenv(var, str(tmp_path / sub))
    p = Paths.resolve({})  # an explicit environ without BROWSERD_HOME
    assert p.config_dir == tmp_path / "cfg" / "browserd"
    assert p.data_dir == tmp_path / "data" / "browserd"
    assert p.cache_dir == tmp_path / "cache" / "browserd"
    assert p.log_dir.is_relative_to(tmp_path / "state" / "browserd")
    assert p.token_file == tmp_path / "cfg" / "browserd" / "token"
    assert p.profile_dir("work") == tmp_path / "data" / "browserd" / "profiles" / "work"
    assert p.media_dir == tmp_path / "cache" / "browserd" / "media"


def test_browserd_home_from_process_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BROWSERD_HOME", str(tmp_path))
    assert Paths.resolve().token_file == tmp_path / "config" / "token"


def test_ensure_private_dir(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b"
    ensure_private_dir(target)
    assert target.is_dir() and (target.stat().st_mode & 0o777) == 0o700
    ensure_private_dir(target)  # idempotent
