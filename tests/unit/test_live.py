"""Finding the user's browser (DevToolsActivePort) and the consent scope's state."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from browserd.browser.live import (
    LiveBrowser,
    live_ws_url,
    parse_live_browser,
    read_active_port,
    user_data_dir,
)
from browserd.errors import BadRequest, LiveBrowserNotFound
from browserd.tabs.consent import ConsentScope


def test_default_user_data_directories_on_macos_and_linux(tmp_path: Path) -> None:
    home = tmp_path
    assert user_data_dir(LiveBrowser.CHROME, home=home, platform="darwin", environ={}) == (
        home / "Library/Application Support/Google/Chrome")
    assert user_data_dir(LiveBrowser.BRAVE, home=home, platform="linux", environ={}) == (
        home / ".config/BraveSoftware/Brave-Browser")
    assert user_data_dir(LiveBrowser.CHROMIUM, home=home, platform="linux",
                         environ={"XDG_CONFIG_HOME": "/xdg"}) == Path("/xdg/chromium")
    with pytest.raises(BadRequest, match="chrome-canary"):
        parse_live_browser("netscape", where="x")


def test_devtools_active_port_gives_the_browser_endpoint(tmp_path: Path) -> None:
    (tmp_path / "DevToolsActivePort").write_text("40123\n/devtools/browser/abc-123\n")
    assert read_active_port(tmp_path) == (40123, "/devtools/browser/abc-123")
    assert live_ws_url(tmp_path) == "ws://127.0.0.1:40123/devtools/browser/abc-123"


@pytest.mark.parametrize("content", [
    "", "40123\n", "port\n/devtools/browser/x\n", "70000\n/devtools/browser/x\n",
    "40123\n/json/list\n", "40123\n/devtools/browser/a b\n", "1\n/devtools/browser/x" + "y" * 5000,
])
def test_anything_but_a_devtools_active_port_file_is_not_found(tmp_path: Path,
                                                               content: str) -> None:
    (tmp_path / "DevToolsActivePort").write_text(content)
    with pytest.raises(LiveBrowserNotFound) as info:
        read_active_port(tmp_path)
    assert info.value.status == 503 and "chrome://inspect" in info.value.hint


def test_missing_directory_file_or_a_fifo_is_not_found_and_never_hangs(tmp_path: Path) -> None:
    with pytest.raises(LiveBrowserNotFound, match="no browser with remote debugging"):
        read_active_port(tmp_path / "nowhere")
    os.mkfifo(tmp_path / "DevToolsActivePort")
    with pytest.raises(LiveBrowserNotFound, match="cannot read"):
        read_active_port(tmp_path)


def test_consent_scope_files_pages_and_forgets_them() -> None:
    scope = ConsentScope()
    scope.hide({"targetId": "H1", "title": "<b>bank</b>", "url": "https://bank.example/"})
    scope.hide({"targetId": "H2", "title": "mail", "url": "https://mail.example/"})
    scope.note_opened("A1")
    assert [p["targetId"] for p in scope.offerable()] == ["H1", "H2"]
    assert scope.offerable()[0]["title"] == "<b>bank</b>"  # untrusted text, kept as data
    assert scope.allowed == {"A1"} and scope.agent_opened == {"A1"}
    scope.hide({"targetId": "A1", "title": "", "url": "about:blank"})  # released
    assert scope.allowed == set() and "A1" in scope.hidden
    scope.forget("H1")
    assert [p["targetId"] for p in scope.offerable()] == ["H2", "A1"]
