"""Executable detection with fake browsers in temporary directories."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from browserd.browser import executable
from browserd.browser.executable import find_executable
from browserd.errors import ExecutableNotFound


def fake_exe(path: Path, *, mode: int = 0o755) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(mode)
    return path


@pytest.fixture
def bindir(tmp_path: Path) -> Path:
    d = tmp_path / "bin"
    d.mkdir()
    return d


@pytest.fixture
def nodirs(tmp_path: Path) -> list[Path]:
    """Linux's usual install dirs, replaced by empty ones (the host may have Chromium)."""
    dirs = [tmp_path / "usr-bin", tmp_path / "opt"]
    for d in dirs:
        d.mkdir()
    return dirs


def linux(setting: str | None, path: Path, dirs: list[Path], **env: str) -> executable.Executable:
    return find_executable(setting, environ={"PATH": str(path), **env}, platform="linux",
                           home=path, linux_dirs=dirs)


# -- explicit choices ------------------------------------------------------------


def test_env_wins_over_setting(tmp_path: Path, nodirs: list[Path]) -> None:
    a = fake_exe(tmp_path / "a" / "browser-a")
    b = fake_exe(tmp_path / "b" / "browser-b")
    found = linux(str(b), tmp_path, nodirs, BROWSERD_BROWSER=str(a))
    assert found.path == a and found.kind == "custom"
    assert linux(str(b), tmp_path, nodirs).path == b


def test_env_name_wins_over_setting_path(bindir: Path, nodirs: list[Path]) -> None:
    fake_exe(bindir / "google-chrome")
    other = fake_exe(bindir.parent / "other" / "browser")
    found = linux(str(other), bindir, nodirs, BROWSERD_BROWSER="chrome")
    assert found.path == bindir / "google-chrome" and found.kind == "chrome"


def test_empty_env_falls_back_to_setting(tmp_path: Path, nodirs: list[Path]) -> None:
    b = fake_exe(tmp_path / "b" / "browser-b")
    assert linux(str(b), tmp_path, nodirs, BROWSERD_BROWSER="").path == b


@pytest.mark.parametrize("source", ["setting", "env"])
def test_missing_path_is_an_error(tmp_path: Path, nodirs: list[Path], source: str) -> None:
    missing = str(tmp_path / "nope" / "chrome")
    with pytest.raises(ExecutableNotFound) as info:
        if source == "env":
            linux(None, tmp_path, nodirs, BROWSERD_BROWSER=missing)
        else:
            linux(missing, tmp_path, nodirs)
    assert missing in str(info.value) and info.value.hint


def test_non_executable_path_is_an_error(tmp_path: Path, nodirs: list[Path]) -> None:
    plain = fake_exe(tmp_path / "plain", mode=0o644)
    if os.access(plain, os.X_OK):
        pytest.skip("running as a user for whom every file is executable")
    with pytest.raises(ExecutableNotFound):
        linux(str(plain), tmp_path, nodirs)


def test_directory_path_is_an_error(tmp_path: Path, nodirs: list[Path]) -> None:
    with pytest.raises(ExecutableNotFound):
        linux(str(tmp_path), tmp_path, nodirs)


def test_tilde_path(tmp_path: Path, nodirs: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    exe = fake_exe(tmp_path / "apps" / "mybrowser")
    assert linux("~/apps/mybrowser", tmp_path, nodirs).path == exe


@pytest.mark.parametrize(
    ("setting", "binary", "kind"),
    [("chromium", "chromium", "chromium"), ("chromium", "chromium-browser", "chromium"),
     ("chrome", "google-chrome", "chrome"), ("Chrome", "google-chrome-stable", "chrome"),
     ("edge", "microsoft-edge", "edge"), ("brave", "brave-browser", "brave")],
)
def test_names_resolve_via_path(
    bindir: Path, nodirs: list[Path], setting: str, binary: str, kind: str
) -> None:
    exe = fake_exe(bindir / binary)
    found = linux(setting, bindir, nodirs)
    assert (found.path, found.kind) == (exe, kind)


def test_named_browser_only_looks_for_that_browser(bindir: Path, nodirs: list[Path]) -> None:
    fake_exe(bindir / "chromium")
    with pytest.raises(ExecutableNotFound) as info:
        linux("brave", bindir, nodirs)
    assert "brave-browser on $PATH" in str(info.value)


def test_named_browser_found_in_extra_dirs(bindir: Path, nodirs: list[Path]) -> None:
    exe = fake_exe(nodirs[1] / "microsoft-edge-stable")
    assert linux("edge", bindir, nodirs).path == exe


def test_other_name_on_path_is_custom(bindir: Path, nodirs: list[Path]) -> None:
    exe = fake_exe(bindir / "vivaldi")
    found = linux("vivaldi", bindir, nodirs)
    assert (found.path, found.kind) == (exe, "custom")


def test_unknown_name_not_on_path(bindir: Path, nodirs: list[Path]) -> None:
    with pytest.raises(ExecutableNotFound, match="unknown browser 'netscape'"):
        linux("netscape", bindir, nodirs)


# -- Linux detection order -------------------------------------------------------

LINUX_ORDER = [("chromium", "chromium"), ("google-chrome", "chrome"),
               ("microsoft-edge", "edge"), ("brave-browser", "brave")]


@pytest.mark.parametrize("first", range(len(LINUX_ORDER)))
def test_linux_order(bindir: Path, nodirs: list[Path], first: int) -> None:
    for binary, _ in LINUX_ORDER[first:]:
        fake_exe(bindir / binary)
    found = linux(None, bindir, nodirs)
    binary, kind = LINUX_ORDER[first]
    assert (found.path, found.kind) == (bindir / binary, kind)


def test_linux_path_before_usual_dirs(bindir: Path, nodirs: list[Path]) -> None:
    fake_exe(nodirs[0] / "chromium")
    on_path = fake_exe(bindir / "chromium")
    assert linux(None, bindir, nodirs).path == on_path


def test_linux_usual_dirs_when_not_on_path(bindir: Path, nodirs: list[Path]) -> None:
    exe = fake_exe(nodirs[1] / "google-chrome")
    assert linux(None, bindir, nodirs).path == exe


def test_linux_nothing_found_lists_every_place(bindir: Path, nodirs: list[Path]) -> None:
    with pytest.raises(ExecutableNotFound) as info:
        linux(None, bindir, nodirs)
    err = info.value
    tried = err.details["tried"]
    for names in executable._LINUX_NAMES.values():
        for name in names:
            assert f"{name} on $PATH" in tried
            for d in nodirs:
                assert str(d / name) in tried
    assert len(tried) == len(set(tried))
    for place in tried:
        assert place in str(err)
    assert "apt-get" in err.hint
    assert err.to_dict()["tried"] == tried


def test_default_linux_dirs_are_searched(bindir: Path) -> None:
    brave = executable._LINUX_NAMES["brave"]
    if any(os.path.exists(f"{d}/{n}") for d in executable._LINUX_EXTRA_DIRS for n in brave):
        pytest.skip("brave is installed on this host")
    with pytest.raises(ExecutableNotFound) as info:
        find_executable("brave", environ={"PATH": str(bindir)}, platform="linux", home=bindir)
    assert "/usr/bin/brave-browser" in info.value.details["tried"]


# -- /usr/bin/chromium → the real binary -------------------------------------------


def test_wrapper_maps_to_real_binary_only_when_it_exists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    usr_bin = tmp_path / "usr" / "bin"
    wrapper = fake_exe(usr_bin / "chromium")
    real = tmp_path / "usr" / "lib" / "chromium" / "chromium"
    monkeypatch.setattr(executable, "_REAL_BINARIES", {str(wrapper): str(real)})
    found = find_executable(None, environ={"PATH": str(usr_bin)}, platform="linux",
                            home=tmp_path, linux_dirs=[])
    assert found.path == wrapper  # the real binary does not exist yet
    fake_exe(real)
    found = find_executable(None, environ={"PATH": str(usr_bin)}, platform="linux",
                            home=tmp_path, linux_dirs=[])
    assert (found.path, found.kind) == (real, "chromium")
    assert find_executable(str(wrapper), environ={}, platform="linux").path == real
    real.chmod(0o644)
    if not os.access(real, os.X_OK):  # root may execute anything
        assert find_executable(str(wrapper), environ={}, platform="linux").path == wrapper


def test_real_binary_map_is_debian_layout() -> None:
    assert executable._REAL_BINARIES == {"/usr/bin/chromium": "/usr/lib/chromium/chromium"}


# -- macOS -----------------------------------------------------------------------

MAC_ORDER = [
    ("canary", "Google Chrome Canary.app/Contents/MacOS/Google Chrome Canary"),
    ("chromium", "Chromium.app/Contents/MacOS/Chromium"),
    ("chrome", "Google Chrome.app/Contents/MacOS/Google Chrome"),
    ("edge", "Microsoft Edge.app/Contents/MacOS/Microsoft Edge"),
    ("brave", "Brave Browser.app/Contents/MacOS/Brave Browser"),
]


def mac(tmp_path: Path, setting: str | None = None) -> executable.Executable:
    roots = [tmp_path / "Applications", tmp_path / "home" / "Applications"]
    return find_executable(setting, environ={"PATH": ""}, platform="darwin",
                           home=tmp_path / "home", mac_roots=roots)


@pytest.mark.parametrize("first", range(len(MAC_ORDER)))
@pytest.mark.parametrize("root", ["Applications", "home/Applications"])
def test_mac_order(tmp_path: Path, first: int, root: str) -> None:
    for _, rel in MAC_ORDER[first:]:
        fake_exe(tmp_path / root / rel)
    kind, rel = MAC_ORDER[first]
    found = mac(tmp_path)
    assert (found.path, found.kind) == (tmp_path / root / rel, kind)


def test_mac_system_applications_before_home(tmp_path: Path) -> None:
    rel = MAC_ORDER[2][1]
    fake_exe(tmp_path / "home" / "Applications" / rel)
    system = fake_exe(tmp_path / "Applications" / rel)
    assert mac(tmp_path).path == system


def test_mac_kind_order_beats_location(tmp_path: Path) -> None:
    fake_exe(tmp_path / "Applications" / MAC_ORDER[2][1])  # Chrome in /Applications
    chromium = fake_exe(tmp_path / "home" / "Applications" / MAC_ORDER[1][1])
    assert mac(tmp_path).path == chromium


def test_mac_named_browser(tmp_path: Path) -> None:
    for _, rel in MAC_ORDER:
        fake_exe(tmp_path / "Applications" / rel)
    found = mac(tmp_path, "edge")
    assert (found.path, found.kind) == (tmp_path / "Applications" / MAC_ORDER[3][1], "edge")


def test_mac_nothing_found(tmp_path: Path) -> None:
    with pytest.raises(ExecutableNotFound) as info:
        mac(tmp_path)
    tried = info.value.details["tried"]
    assert tried == [str(tmp_path / root / rel) for _, rel in MAC_ORDER
                     for root in ("Applications", "home/Applications")]
    assert "/Applications" in info.value.hint


def test_mac_default_roots(tmp_path: Path) -> None:
    if any(os.path.exists(f"/Applications/{rel}") for _, rel in MAC_ORDER):
        pytest.skip("a real browser is installed in /Applications")
    with pytest.raises(ExecutableNotFound) as info:
        find_executable(None, environ={}, platform="darwin", home=tmp_path)
    tried = info.value.details["tried"]
    assert tried[:2] == [f"/Applications/{MAC_ORDER[0][1]}",
                         str(tmp_path / "Applications" / MAC_ORDER[0][1])]
