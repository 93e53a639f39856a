"""A recorded form fill exported as a Playwright trace, opened by Playwright's own viewer.

``playwright show-trace`` (the installed driver) serves the viewer over HTTP; a headless
Chromium opens it and reads the action list.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
import trio

from tests.integration.test_records import Session, _record_fill, session

__all__ = ["session"]

pytestmark = pytest.mark.chromium

_PLAYWRIGHT = Path(sys.executable).parent / "playwright"


def _viewer_actions(trace: Path) -> list[str]:
    """The action list Playwright's trace viewer shows for ``trace``."""
    from playwright.sync_api import sync_playwright

    server = subprocess.Popen([str(_PLAYWRIGHT), "show-trace", "--host", "127.0.0.1",
                               "--port", "0", str(trace)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert server.stdout is not None
        line = ""
        while "Listening on" not in line:
            line = server.stdout.readline()
            assert line or server.poll() is None, "show-trace ended"
        url = re.search(r"http://\S+", line)
        assert url is not None, line
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium")
            try:
                page = browser.new_page()
                page.set_default_timeout(10_000)
                page.goto(url.group(0))
                items = page.get_by_role("treeitem")
                items.first.wait_for()
                return [t.split("\n")[0] for t in items.all_inner_texts()]
            finally:
                browser.close()
    finally:
        server.terminate()
        server.wait(timeout=10)
        if server.stdout is not None:
            server.stdout.close()


async def test_a_recorded_fill_opens_in_playwrights_trace_viewer(
        session: Session, pages: Any, tmp_path: Path) -> None:
    with trio.fail_after(60):
        record_id, _ = await _record_fill(session, pages.url("/records-form"))
        r = await session.get(f"/records/{record_id}", format="trace")
        assert r.status_code == 200, r.text
        assert r.headers["content-type"] == "application/zip"
        assert r.headers["content-disposition"] == f'attachment; filename="{record_id}.zip"'
        with zipfile.ZipFile(io.BytesIO(r.content)) as zf:
            names = zf.namelist()
            trace_text = zf.read("trace.trace").decode()
        assert sum(n.startswith("resources/") for n in names) >= 2  # the shots
        assert '"Ada Lovelace"' in trace_text
        trace = tmp_path / f"{record_id}.zip"
        trace.write_bytes(r.content)
        actions = await trio.to_thread.run_sync(_viewer_actions, trace)
        assert actions == ["page.goto", "locator.pressSequentially", "locator.selectOption",
                           "locator.click", "locator.click"], actions
        await session.api.delete(f"/records/{record_id}", headers=session.headers)
