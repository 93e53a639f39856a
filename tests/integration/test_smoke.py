import pytest
import trio

pytestmark = pytest.mark.chromium


async def test_open_eval_close(api, pages):
    with trio.fail_after(30):
        r = await api.post("/tabs/open", json={"url": pages.url("/hello.html")})
        assert r.status_code == 200, r.text
        tab = r.json()
        assert tab["url"].endswith("/hello.html")
        r = await api.post("/eval", json={"js": "document.title", "targetId": tab["targetId"]})
        assert r.json()["result"] == "Hello"
        r = await api.post("/tabs/close", json={"targetId": tab["targetId"]})
        assert r.status_code == 200
        ids = [t["targetId"] for t in (await api.get("/tabs")).json()["tabs"]]
        assert tab["targetId"] not in ids
