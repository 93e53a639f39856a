"""UploadPolicy (which files may be uploaded) and InputState (chooser, held buttons/keys)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from browserd.config import load_settings
from browserd.errors import BadRequest, ConfigError, UploadBlocked, UploadFileMissing
from browserd.paths import Paths
from browserd.tabs.inputstate import InputState
from browserd.uploads import MAX_UPLOAD_FILES, UploadPolicy


@pytest.fixture
def paths(tmp_path: Path) -> Paths:
    return Paths.resolve({"BROWSERD_HOME": str(tmp_path / "home")})


@pytest.fixture
def policy(paths: Paths) -> UploadPolicy:
    policy = UploadPolicy.from_settings(load_settings(paths, environ={}), paths)
    policy.ensure_roots()
    return policy


def test_default_root_is_data_uploads_created_private(paths: Paths, policy: UploadPolicy) -> None:
    root = paths.data_dir / "uploads"
    assert policy.roots == (Path(os.path.realpath(root)),)
    assert root.is_dir() and (root.stat().st_mode & 0o777) == 0o700


def test_files_inside_pass_with_resolved_path_name_and_size(policy: UploadPolicy) -> None:
    root = policy.roots[0]
    (root / "sub").mkdir()
    (root / "sub" / "a.txt").write_text("abc")
    (root / "inner-link.txt").symlink_to(root / "sub" / "a.txt")
    files = policy.check([str(root / "sub" / "a.txt"), "sub/a.txt", "inner-link.txt"])
    assert [f.path for f in files] == [str(root / "sub" / "a.txt")] * 3
    assert [(f.name, f.size) for f in files] == [("a.txt", 3)] * 3


@pytest.mark.parametrize("path", ["/etc/passwd", "../outside.txt", "sub/../../outside.txt",
                                  "link-out.txt", "dir-out/outside.txt", "/nonexistent/x"])
def test_outside_the_roots_is_blocked_existing_or_not(policy: UploadPolicy, tmp_path: Path,
                                                     path: str) -> None:
    root = policy.roots[0]
    (root / "sub").mkdir(exist_ok=True)
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    (root / "link-out.txt").symlink_to(outside)
    (root / "dir-out").symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(UploadBlocked) as info:
        policy.check([path])
    assert info.value.status == 403 and info.value.code == "UPLOAD_BLOCKED"


def test_blocked_wins_over_missing_in_one_request(policy: UploadPolicy) -> None:
    # Every path is checked against the roots before any existence check.
    with pytest.raises(UploadBlocked):
        policy.check(["missing-inside.txt", "/etc/hostname"])


def test_missing_directory_and_unreadable_are_400(policy: UploadPolicy) -> None:
    root = policy.roots[0]
    (root / "dir").mkdir()
    (root / "dangling").symlink_to(root / "gone.txt")
    for path in ("nope.txt", "dir", "dangling"):
        with pytest.raises(UploadFileMissing) as info:
            policy.check([path])
        assert info.value.status == 400 and info.value.code == "FILE_NOT_FOUND"
    if os.geteuid() != 0:  # root reads everything
        (root / "locked.txt").write_text("x")
        (root / "locked.txt").chmod(0)
        with pytest.raises(UploadFileMissing):
            policy.check(["locked.txt"])


def test_bad_strings_and_too_many_files(policy: UploadPolicy) -> None:
    for path in ("", "a\x00b"):
        with pytest.raises(BadRequest):
            policy.check([path])
    with pytest.raises(BadRequest):
        policy.check(["a"] * (MAX_UPLOAD_FILES + 1))
    assert policy.check([]) == ()


def test_configured_roots_replace_the_default(paths: Paths, tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "f.txt").write_text("1")
    settings = load_settings(paths, environ={"BROWSERD_UPLOAD_ROOTS": f"{mine},/srv/none"})
    policy = UploadPolicy.from_settings(settings, paths)
    policy.ensure_roots()
    assert not (paths.data_dir / "uploads").exists()
    assert policy.check(["f.txt"])[0].path == str(mine / "f.txt")
    with pytest.raises(UploadBlocked):
        policy.check([str(paths.data_dir / "uploads" / "f.txt")])
    assert settings.public_dict()["upload_roots"] == [str(mine), "/srv/none"]


def test_browserds_own_files_are_never_uploadable(paths: Paths, policy: UploadPolicy) -> None:
    # The default root holds none of them, and a symlink into them is refused.
    paths.config_dir.mkdir(parents=True)
    paths.token_file.write_text("secret-token")
    cookies = paths.profile_dir("default") / "Default" / "Cookies"
    cookies.parent.mkdir(parents=True)
    cookies.write_text("cookies")
    root = policy.roots[0]
    (root / "token-link").symlink_to(paths.token_file)
    (root / "profile-link").symlink_to(paths.profiles_dir, target_is_directory=True)
    for path in (str(paths.token_file), "token-link", "profile-link/default/Default/Cookies"):
        with pytest.raises(UploadBlocked):
            policy.check([path])


def test_a_root_around_browserds_home_still_refuses_its_own_files(paths: Paths) -> None:
    home = paths.config_dir.parent
    paths.config_dir.mkdir(parents=True)
    paths.token_file.write_text("secret-token")
    (paths.config_dir / "config.toml").write_text("")
    paths.state_dir.mkdir(parents=True)
    (paths.state_dir / "browser.pid").write_text("1")
    cookies = paths.profile_dir("default") / "Cookies"
    cookies.parent.mkdir(parents=True)
    cookies.write_text("cookies")
    paths.uploads_dir.mkdir(parents=True)
    (paths.uploads_dir / "ok.txt").write_text("fine")
    settings = load_settings(paths, environ={"BROWSERD_UPLOAD_ROOTS": str(home)})
    policy = UploadPolicy.from_settings(settings, paths)
    for own in (paths.token_file, paths.config_dir / "config.toml", cookies,
                paths.state_dir / "browser.pid"):
        with pytest.raises(UploadBlocked, match="browserd's own"):
            policy.check([str(own)])
    assert policy.check([str(paths.uploads_dir / "ok.txt")])[0].name == "ok.txt"


def test_relative_configured_root_is_a_config_error(paths: Paths) -> None:
    with pytest.raises(ConfigError, match="upload_roots"):
        load_settings(paths, environ={"BROWSERD_UPLOAD_ROOTS": "relative/dir"})


def test_input_state_chooser_serials_and_held_buttons() -> None:
    state = InputState()
    first = state.chooser_opened(frame_id="F", backend_node_id=5, multiple=False)
    second = state.chooser_opened(frame_id="F", backend_node_id=7, multiple=True,
                                  session_id="S")
    assert (first.serial, second.serial) == (1, 2) and state.chooser is second
    assert second.to_json() == {"multiple": True}
    state.chooser_answered(first)  # no longer the pending one: nothing changes
    assert state.chooser is second
    state.chooser_answered(second)
    assert state.chooser is None
    state.chooser_opened(frame_id="F", backend_node_id=9, multiple=False)
    state.forget_chooser()
    assert state.chooser is None and state.choosers_seen == 3
    assert state.held_button() == "none"
    state.press("right")
    state.press("left")
    assert state.buttons == 3 and state.held_button() == "left"
    state.release("left")
    assert state.held_button() == "right"
