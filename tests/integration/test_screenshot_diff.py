"""``/screenshot {since}`` against real Chromium: one box changes, the diff finds it.

A fixed page (no animation, no caret) with a 200x80 box at (100, 50); the box's
colour is changed with /eval between two screenshots. Checked: nothing changed
is ``changed: false``; a changed box is its region (CSS px, also at device scale
2), its crop is a file of its own; the refusals (another tab, another session,
an unknown id, another kind) are clear; the CLI prints what changed.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import trio
from PIL import Image

from tests.conftest import PageServer, ServiceInfo, add_route
from tests.integration.helpers import html_route, js, navigate

pytestmark = pytest.mark.chromium

BOX = {"x": 100, "y": 50, "width": 200, "height": 80}
_PAGE = """<!doctype html><html><head><title>diff</title><style>
body {{ margin: 0; background: #fff; }}
#box {{ position: absolute; left: {x}px; top: {y}px; width: {width}px; height: {height}px;
        background: rgb(0, 0, 255); }}
p {{ position: absolute; left: 400px; top: 300px; font: 16px sans-serif; }}
</style></head><body><div id="box"></div><p>Some text that stays</p></body></html>"""

add_route("/diff-box", html_route(_PAGE.format(**BOX)))


@pytest.fixture
async def box_tab(api: httpx.AsyncClient, tab: str, pages: PageServer) -> AsyncIterator[str]:
    await navigate(api, tab, pages.url("/diff-box"))
    yield tab


async def shot(api: httpx.AsyncClient, tab: str, **body: Any) -> dict[str, Any]:
    r = await api.post("/screenshot", json={"targetId": tab, **body})
    assert r.status_code == 200, r.text
    answer: dict[str, Any] = r.json()
    return answer


async def refused(api: httpx.AsyncClient, tab: str, status: int, code: str,
                  **body: Any) -> dict[str, Any]:
    r = await api.post("/screenshot", json={"targetId": tab, **body})
    assert (r.status_code, r.json()["code"]) == (status, code), r.text
    answer: dict[str, Any] = r.json()
    return answer


def near(region: dict[str, int], box: dict[str, int], slack: int = 2) -> bool:
    return all(abs(region[k] - box[k]) <= slack for k in ("x", "y", "width", "height"))


async def test_nothing_changed_then_one_box_changed(api: httpx.AsyncClient, box_tab: str
                                                    ) -> None:
    first = await shot(api, box_tab)
    assert first["mediaId"] == first["mediaUrl"].rpartition("/")[2]
    same = await shot(api, box_tab, since=first["mediaId"])
    assert same["diff"] == {"since": first["mediaId"], "changed": False, "region": None,
                            "changedPixels": 0, "ratio": 0.0, "tolerance": 16}
    await js(api, box_tab, "document.getElementById('box').style.background = 'rgb(255,0,0)'")
    changed = await shot(api, box_tab, since=first["mediaId"], inline=True)
    diff = changed["diff"]
    assert diff["changed"] is True and near(diff["region"], BOX), diff
    assert diff["changedPixels"] == pytest.approx(200 * 80, rel=0.05)
    assert diff["ratio"] == pytest.approx(200 * 80 / (1280 * 720), rel=0.05)
    # The crop is a media item of its own: the new shot's pixels inside the region.
    r = await api.get(diff["mediaUrl"])
    assert r.status_code == 200 and r.headers["content-type"] == "image/png"
    crop = Image.open(io.BytesIO(r.content)).convert("RGB")
    assert crop.size == (diff["width"], diff["height"])
    assert crop.getpixel((crop.width // 2, crop.height // 2)) == (255, 0, 0)
    assert diff["mediaId"] != changed["mediaId"] and diff["bytes"] == len(r.content)
    import base64
    assert base64.b64decode(diff["data"]) == r.content
    # The new shot is a base of its own: against it, nothing changed.
    again = await shot(api, box_tab, since=changed["mediaId"])
    assert again["diff"]["changed"] is False


async def test_the_region_is_in_css_pixels_at_device_scale_2(api: httpx.AsyncClient,
                                                             box_tab: str) -> None:
    r = await api.post("/emulate", json={"targetId": box_tab, "viewport": {
        "width": 800, "height": 600, "deviceScaleFactor": 2}})
    assert r.status_code == 200, r.text
    first = await shot(api, box_tab)
    assert (first["width"], first["height"]) == (1600, 1200)
    await js(api, box_tab, "document.getElementById('box').style.background = 'rgb(0,128,0)'")
    diff = (await shot(api, box_tab, since=first["mediaId"]))["diff"]
    assert diff["changed"] and near(diff["region"], BOX), diff
    assert (diff["width"], diff["height"]) == pytest.approx((400, 160), abs=4)


async def test_an_element_shot_is_diffed_from_its_own_corner(api: httpx.AsyncClient,
                                                              box_tab: str) -> None:
    first = await shot(api, box_tab, selector="#box")
    await js(api, box_tab, "document.getElementById('box').style.borderTop = "
                           "'10px solid rgb(255,255,0)'; document.getElementById('box')"
                           ".style.height = '70px'")
    diff = (await shot(api, box_tab, selector="#box", since=first["mediaId"]))["diff"]
    assert diff["changed"] and near(diff["region"], {"x": 0, "y": 0, "width": 200,
                                                     "height": 10}), diff


async def test_refusals_say_what_is_wrong(api: httpx.AsyncClient, box_tab: str) -> None:
    first = await shot(api, box_tab)
    # Another tab of the same scope: 409 naming the screenshot's tab.
    r = await api.post("/tabs/open", json={"url": "about:blank"})
    other = r.json()["targetId"]
    try:
        body = await refused(api, other, 409, "CONFLICT", since=first["mediaId"])
        assert body["sinceTargetId"] == box_tab and "another tab" in body["error"]
    finally:
        await api.post("/tabs/close", json={"targetId": other})
    # Unknown (or never a screenshot of ours): 404, the same for a malformed name.
    unknown = "screenshot-20200101-000000-" + "0" * 24 + ".png"
    assert "hint" in await refused(api, box_tab, 404, "NOT_FOUND", since=unknown)
    await refused(api, box_tab, 404, "NOT_FOUND", since="../etc/passwd")
    # Taken another way or in another format: 400 naming the field.
    body = await refused(api, box_tab, 400, "BAD_REQUEST", since=first["mediaId"],
                         fullPage=True)
    assert body["field"] == "since" and "viewport" in body["error"]
    await refused(api, box_tab, 400, "BAD_REQUEST", since=first["mediaId"], format="jpeg")
    # Another size: 409, and the new screenshot is saved to diff against next time.
    await api.post("/emulate", json={"targetId": box_tab, "viewport": {"width": 640,
                                                                        "height": 480}})
    body = await refused(api, box_tab, 409, "CONFLICT", since=first["mediaId"])
    assert (body["sinceWidth"], body["width"]) == (1280, 640)
    assert (await api.get(body["mediaUrl"])).status_code == 200


async def test_another_sessions_screenshot_is_unknown(api: httpx.AsyncClient, box_tab: str,
                                                      pages: PageServer) -> None:
    r = await api.post("/sessions", json={"name": "diff-other"})
    assert r.status_code == 200, r.text
    session = {"X-Browserd-Session": r.json()["sessionId"]}
    try:
        r = await api.post("/tabs/open", json={"url": pages.url("/diff-box")}, headers=session)
        theirs = await api.post("/screenshot", json={"targetId": r.json()["targetId"]},
                                headers=session)
        assert theirs.status_code == 200, theirs.text
        await refused(api, box_tab, 404, "NOT_FOUND", since=theirs.json()["mediaId"])
    finally:
        await api.delete(f"/sessions/{session['X-Browserd-Session']}")


async def test_the_cli_prints_what_changed(service: ServiceInfo, api: httpx.AsyncClient,
                                           box_tab: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BROWSERD_")}
    env |= {"BROWSERD_HOME": str(service.home), "BROWSERD_CONTROL_URL": service.base_url}

    async def browserd(*argv: str) -> str:
        proc = await trio.run_process([sys.executable, "-m", "browserd", *argv], env=env,
                                      capture_stdout=True, capture_stderr=True, check=False)
        assert proc.returncode == 0, proc.stderr.decode()
        return str(proc.stdout.decode())

    path = (await browserd("screenshot", "--target", box_tab)).strip()
    assert (await browserd("screenshot", "--target", box_tab, "--since", path)).splitlines(
        )[1] == f"no change since {os.path.basename(path)}"
    await js(api, box_tab, "document.getElementById('box').style.background = 'rgb(1,2,3)'")
    lines = (await browserd("screenshot", "--target", box_tab, "--since", path)).splitlines()
    assert lines[1].startswith("changed: x=") and lines[2].endswith(".png"), lines
