"""Finding the user's browser (DevToolsActivePort) and the consent scope's state."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import trio

from browserd.browser.live import (
    LiveBrowser,
    live_ws_url,
    parse_live_browser,
    read_active_port,
    user_data_dir,
)
from browserd.errors import BadRequest, BrowserStarting, LiveBrowserNotFound
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


async def test_a_browser_that_never_answers_awaits_approval_then_is_refused_once(
    tmp_path: Path,
) -> None:
    """The user never clicks Allow: ``awaiting_approval``, then a refusal, no retry."""
    from browserd.config import Settings
    from browserd.paths import Paths
    from browserd.supervisor import BrowserSupervisor

    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    held: list[trio.SocketStream] = []
    user_dir = tmp_path / "user"
    user_dir.mkdir()
    (user_dir / "DevToolsActivePort").write_text(f"{port}\n/devtools/browser/held\n")
    sup = BrowserSupervisor(
        Settings(live_user_data_dir=str(user_dir), approval_timeout_s=1.0),
        Paths.resolve({"BROWSERD_HOME": str(tmp_path / "home")}))
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            async def accept_and_hold() -> None:  # a prompt nobody answers
                while True:
                    held.append(await listeners[0].accept())

            async def start() -> None:
                with pytest.raises(LiveBrowserNotFound):
                    await sup.start()

            nursery.start_soon(accept_and_hold)
            await nursery.start(sup.run)
            nursery.start_soon(start)
            while sup.state != "awaiting_approval":
                await trio.sleep(0.01)
            with pytest.raises(BrowserStarting, match="allow remote debugging"):
                sup.require_runtime()
            while sup.state != "failed":
                await trio.sleep(0.05)
            assert isinstance(sup.last_error, LiveBrowserNotFound)
            assert "did not accept the connection within 1 s" in sup.last_error.message
            assert "no answer within 1 s" in sup.last_error.message
            assert len(held) == 1  # asked once: never again without a new /start
            nursery.cancel_scope.cancel()
    for stream in held:
        await stream.aclose()
    for listener in listeners:
        await listener.aclose()
