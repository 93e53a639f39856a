"""Control API security against the real service and a real Chromium (RELIABILITY.md
S7-S9, and the audit log): a non-loopback bind refuses to start without TLS and an
opt-in, another Chrome on the CDP port is refused untouched, eval off is 403 and runs
nothing, the URL policy blocks schemes and our own ports, nothing from the API reaches
Chromium's argv, and the audit log records every request but never the token.

Requests over HTTP (S1, S3-S5): test_security_requests.py; hostile pages in real
browsers (S6): test_security_pages.py. The detectors: _security_detectors.py.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
from supervision import chromium as plain
from supervision.harness import LOOPBACK_TLS

from tests.conftest import PageServer, ServiceInfo, free_port_pair, start_service, stop_service
from tests.integration._rawcdp import open_cdp
from tests.integration._security_detectors import (
    MARKER_TITLE,
    HitLog,
    Marker,
    assert_hardened,
    assert_refused,
    assert_untouched,
    browser_barrier,
    eval_payload,
    hits,
    marker,
    new_tag,
    observe,
)
from tests.integration.helpers import ok, post
from tests.integration.test_lifecycle import profile_processes

__all__ = ["hits", "marker"]

pytestmark = pytest.mark.chromium


# -- S7: the bind policy --------------------------------------------------------------


def _serve_env(home: Path, control_url: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BROWSERD_")}
    return {**env, "BROWSERD_HOME": str(home), "BROWSERD_CONTROL_URL": control_url,
            "BROWSERD_HEADLESS": "1", **extra}


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


async def test_s7_non_loopback_bind_without_opt_in_refuses_to_start(tmp_path: Path) -> None:
    """``[::]`` with no opt-in and a LAN address with an explicit ``false``: both refuse."""
    cases = [("[::]", {}), ("192.0.2.10", {"BROWSERD_ALLOW_REMOTE_CONTROL": "0"})]
    ports = [free_port_pair() for _ in cases]
    done: dict[str, subprocess.CompletedProcess[bytes]] = {}

    async def serve(i: int, host: str, port: int, extra: dict[str, str]) -> None:
        env = _serve_env(tmp_path / f"home{i}", f"http://{host}:{port}", **extra)
        done[host] = await trio.run_process(
            [sys.executable, "-m", "browserd", "serve"], env=env,
            capture_stdout=True, capture_stderr=True, check=False)

    with trio.fail_after(40):
        async with trio.open_nursery() as nursery:
            for i, ((host, extra), port) in enumerate(zip(cases, ports, strict=True)):
                nursery.start_soon(serve, i, host, port, extra)
    for i, ((host, _), port) in enumerate(zip(cases, ports, strict=True)):
        r = done[host]
        err = r.stderr.decode(errors="replace")
        assert r.returncode != 0, (host, err)
        assert "non-loopback" in err and "allow_remote_control" in err, err
        assert not _listening(port) and not _listening(port + 1)
        profile = tmp_path / f"home{i}" / "data" / "profiles" / "clawd"
        assert not profile.exists(), "nothing was launched"


async def test_s7_remote_bind_over_plain_http_refuses_even_with_opt_in(tmp_path: Path) -> None:
    """``allow_remote_control`` opens a non-loopback bind only over TLS: plain HTTP would
    carry the token in clear. (Over TLS, off loopback, the token is still required:
    tests/integration/test_tls.py, in a network namespace of its own.)"""
    port = free_port_pair()
    env = _serve_env(tmp_path / "home", f"http://0.0.0.0:{port}",
                     BROWSERD_ALLOW_REMOTE_CONTROL="1", BROWSERD_ENABLED="0")
    with trio.fail_after(40):
        r = await trio.run_process([sys.executable, "-m", "browserd", "serve"], env=env,
                                   capture_stdout=True, capture_stderr=True, check=False)
    err = r.stderr.decode(errors="replace")
    assert r.returncode != 0, err
    assert "plain HTTP" in err and 'tls = "self-signed"' in err, err
    assert not _listening(port) and not _listening(port + 1)


# -- S8: another Chrome on our DevTools port ------------------------------------------


@contextlib.asynccontextmanager
async def plain_chromium(cdp_port: int, profile: Path) -> AsyncIterator[subprocess.Popen[bytes]]:
    """A Chromium that browserd did not launch, listening on ``cdp_port``; killed on exit."""
    chromium = await trio.to_thread.run_sync(functools.partial(
        plain.launch_chromium, profile, cdp_port=cdp_port))
    try:
        yield chromium.proc
    finally:
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(chromium.stop)
        shutil.rmtree(profile, ignore_errors=True)


async def test_s8_another_chrome_on_the_cdp_port_is_refused_untouched(tmp_path: Path) -> None:
    """The CDP port is browserd's gateway: another Chrome holding it stops the service
    at start with PORT_IN_USE naming it; nothing is launched and nobody drives it."""
    port = free_port_pair()
    with trio.fail_after(60):
        async with (
            plain_chromium(port + 1, tmp_path / "other-chrome") as chrome,
            httpx.AsyncClient(base_url=f"http://127.0.0.1:{port + 1}", timeout=10,
                              verify=LOOPBACK_TLS) as devtools,
        ):
            version = (await devtools.get("/json/version")).json()
            targets = sorted((t["id"], t["type"], t["url"])
                             for t in (await devtools.get("/json/list")).json())
            assert targets, "the other Chrome has a page"
            home = tmp_path / "home"
            with pytest.raises(RuntimeError, match="browserd exited 1") as refused:
                await trio.to_thread.run_sync(functools.partial(
                    start_service, home, port=port, wait_browser=False))
            log = str(refused.value)
            assert "PORT_IN_USE" in log or "already held" in log, log
            assert f"CDP gateway port {port + 1} is already held by pid {chrome.pid}" in log
            assert not profile_processes(home / "data" / "profiles" / "clawd")
            # The other Chrome is alive and nobody drove it: same browser, same targets.
            assert chrome.poll() is None
            assert (await devtools.get("/json/version")).json() == version
            after = sorted((t["id"], t["type"], t["url"])
                           for t in (await devtools.get("/json/list")).json())
            assert after == targets
            token = (home / "config" / "token").read_text().strip()
            assert token not in log


# -- S9: capabilities, URL policy, argv -------------------------------------------------


@pytest.fixture(scope="module")
def locked_down(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceInfo]:
    """A private instance with evaluate_enabled = false (and a real browser)."""
    info = start_service(tmp_path_factory.mktemp("locked"),
                         env={"BROWSERD_EVALUATE_ENABLED": "0"})
    yield info
    stop_service(info)


async def test_s9_wait_needs_eval_unless_url_or_load_state(locked_down: ServiceInfo) -> None:
    """/wait for a selector or text runs the page's script: refused with eval off;
    waiting for a URL or a load state needs none and works."""
    with trio.fail_after(30):
        async with locked_down.client() as api:
            r = await api.post("/tabs/open", json={"url": "about:blank"})
            tab = r.json()["targetId"]
            for body in ({"selector": "p"}, {"text": "x"}, {"textGone": "x"}):
                r = await post(api, "/wait", tab, **body)
                assert r.status_code == 403 and r.json()["code"] == "EVAL_DISABLED", body
            r = await post(api, "/act", tab, actions=[{"kind": "wait", "selector": "p"}])
            assert r.status_code == 403
            await ok(api, "/wait", tab, url="about:blank", timeoutMs=2000)
            await ok(api, "/wait", tab, loadState="load", timeoutMs=2000)


async def test_s9_eval_disabled_is_403_and_runs_nothing(
    locked_down: ServiceInfo, pages: PageServer, hits: HitLog,
) -> None:
    tag = new_tag()
    with trio.fail_after(40):
        async with locked_down.client() as api:
            r = await api.post("/tabs/open", json={"url": pages.url("/sec_marker.html")})
            assert r.status_code == 200, r.text
            target = r.json()["targetId"]
            for i, extra in enumerate(({"targetId": target}, {}, {"await": True},
                                       {"targetId": "no-such-tab"}, {"timeoutMs": 1})):
                r = await api.post("/eval", json={"js": eval_payload(pages, tag, f"off{i}"),
                                                  **extra})
                assert_refused(r, 403, "EVAL_DISABLED")
            # Ask the browser itself, through the CDP gateway (token, no Origin).
            ws = f"ws://127.0.0.1:{locked_down.cdp_port}/devtools/page/{target}"
            async with open_cdp(ws, token=locked_down.token) as cdp:
                reply = await cdp.send("Runtime.evaluate", {
                    "expression": "[typeof window.__sec_pwned, document.title]",
                    "returnByValue": True})
                assert reply["result"]["value"] == ["undefined", MARKER_TITLE]

                async def cdp_eval(js: str) -> Any:
                    reply = await cdp.send("Runtime.evaluate", {
                        "expression": js, "awaitPromise": True, "returnByValue": True})
                    return reply["result"]["value"]

                # a barrier instead of a fixed wait: see assert_untouched
                await browser_barrier(cdp_eval, pages.url("/sec_marker.html"))
            assert hits.matching(tag) == []
            await api.post("/tabs/close", json={"targetId": target})


def blocked_urls(service: ServiceInfo, pages: PageServer) -> list[tuple[str, str]]:
    cp, cdp = service.port, service.cdp_port
    return [
        ("file:///etc/passwd", "URL_BLOCKED"),
        ("file:///etc/hostname", "URL_BLOCKED"),
        ("FILE:///etc/passwd", "URL_BLOCKED"),
        ("chrome://settings", "URL_BLOCKED"),
        ("chrome://version/", "URL_BLOCKED"),
        ("javascript:alert(1)", "URL_BLOCKED"),
        ("data:text/html,x", "URL_BLOCKED"),
        ("data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==", "URL_BLOCKED"),
        ("view-source:" + pages.url("/hello.html"), "URL_BLOCKED"),
        ("view-source:file:///etc/passwd", "URL_BLOCKED"),
        ("devtools://devtools/bundled/inspector.html", "URL_BLOCKED"),
        ("filesystem:http://127.0.0.1/temporary/x", "URL_BLOCKED"),
        ("blob:http://127.0.0.1/1234", "URL_BLOCKED"),
        ("about:version", "URL_BLOCKED"),
        (f"http://127.0.0.1:{cp}/tabs", "URL_BLOCKED"),
        (f"http://localhost:{cdp}/json", "URL_BLOCKED"),
        (f"http://127.1:{cdp}/json/version", "URL_BLOCKED"),
        (f"http://0x7f.0.0.1:{cp}/status", "URL_BLOCKED"),
        (f"http://2130706433:{cdp}/json/list", "URL_BLOCKED"),
        (f"http://[::1]:{cp}/", "URL_BLOCKED"),
        (f"http://[::ffff:127.0.0.1]:{cdp}/json", "URL_BLOCKED"),
        (f"http://sub.localhost:{cp}/", "URL_BLOCKED"),
        (f"http://0.0.0.0:{cdp}/json/new?x", "URL_BLOCKED"),
        (f"http://LOCALHOST:{cp}/", "URL_BLOCKED"),
        (f"http:\\\\127.0.0.1:{cp}\\tabs", "URL_BLOCKED"),
        ("--remote-allow-origins=*", "BAD_URL"),
        (f"127.0.0.1:{cp}/tabs", "BAD_URL"),
        ("http://example.test/ --remote-allow-origins=*", "BAD_URL"),
    ]


async def test_s9_url_policy_blocks_schemes_and_our_ports_and_no_tab_goes_there(
    api: httpx.AsyncClient, service: ServiceInfo, pages: PageServer, marker: Marker,
) -> None:
    tag = new_tag()
    with trio.fail_after(40):
        before = await observe(api, service.cdp_port)
        for i, (url, code) in enumerate(blocked_urls(service, pages)):
            variants: list[tuple[str, dict[str, Any]]] = [
                ("/tabs/open", {"url": url}),
                ("/navigate", {"url": url, "targetId": marker.target_id}),
                # /act's navigate step goes through the same policy, even after a harmless step
                ("/act", {"targetId": marker.target_id, "actions": [
                    {"kind": "wait", "loadState": "load"}, {"kind": "navigate", "url": url}]}),
            ]
            if i % 4 == 0:  # the current tab, navigated in place
                variants.append(("/tabs/open", {"url": url, "newTab": False}))
            for path, body in variants:
                r = await api.post(path, json=body)
                assert_refused(r, 403 if code == "URL_BLOCKED" else 400, code)
                if path == "/act":  # the refusal names the step
                    assert r.json()["index"] == 1, r.text
        await assert_untouched(api, service, before, tag, marker)
        after = await observe(api, service.cdp_port)
        ports = (f":{service.port}", f":{service.cdp_port}")
        for url in after.pages.values():
            assert url.startswith(("http://", "https://", "about:blank")), url
            assert not any(p in url for p in ports), url


def _cmdline(pid: int) -> list[bytes]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")


async def test_s9_nothing_from_the_api_reaches_chromium_argv(
    locked_down: ServiceInfo,
) -> None:
    """Switch-shaped values are refused; a relaunch uses exactly the same argv as before."""
    injections: list[tuple[str, dict[str, Any]]] = [
        ("/start", {"headless": "--no-sandbox"}),
        ("/start", {"headless": "--remote-allow-origins=*"}),
        ("/start", {"headless": ["--remote-allow-origins=*"]}),
        ("/start", {"headless": True, "args": ["--remote-allow-origins=*"]}),
        ("/start", {"flags": "--remote-allow-origins=*"}),
        ("/start", {"executable": "/bin/sh"}),
        ("/tabs/open", {"url": "--remote-allow-origins=*"}),
        ("/tabs/open", {"url": "about:blank", "newTab": "--new-window"}),
        ("/tabs/open", {"url": "http://example.test/ --remote-allow-origins=*"}),
        ("/tabs/open", {"url": "http://example.test/\n--remote-allow-origins=*"}),
        ("/navigate", {"url": "--user-data-dir=/tmp/browserd-evil"}),
    ]
    with trio.fail_after(60):
        async with locked_down.client() as api:
            first = (await api.get("/status")).json()
            argv = _cmdline(first["pid"])
            assert not [a for a in argv if a.startswith(b"--remote-allow-origins")]
            for path, payload in injections:
                r = await api.post(path, json=payload)
                assert r.status_code == 400, (path, payload, r.text)
                assert_hardened(r)
            assert (await api.get("/status")).json()["pid"] == first["pid"]
            assert _cmdline(first["pid"]) == argv
            # Relaunch, with a bad start in between: the new browser's argv is the old one.
            r = await api.post("/stop")
            assert r.json() == {"ok": True, "stopped": True}
            for path, payload in injections[:6]:
                r = await api.post(path, json=payload)
                assert r.status_code == 400, (path, payload, r.text)
            assert (await api.get("/status")).json()["state"] != "running"
            second = (await api.post("/start", json={"headless": True})).json()
            assert second["state"] == "running" and second["pid"] != first["pid"]
            assert _cmdline(second["pid"]) == argv


# -- the audit log ---------------------------------------------------------------------

AUDIT_RE = re.compile(
    r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} who=(?P<who>\S+) profile=(?P<profile>\S+) "
    r"session=(?P<session>\S+) (?P<method>[A-Z]+) "
    r"(?P<path>/\S*) tab=(?P<tab>\S+) url=(?P<url>\S+) outcome=(?P<outcome>\S+) "
    r"ms=(?P<ms>\d+(?:\.\d+)?)$")


async def test_audit_log_records_requests_and_never_the_token(
    locked_down: ServiceInfo, pages: PageServer,
) -> None:
    """One whole line per request (method, path, outcome, duration); no token, no forged lines."""
    token = locked_down.token
    nonce = secrets.token_hex(6)
    forged = f"2026-01-01 00:00:00,000 who=forged-{nonce} POST /stop tab=- url=- outcome=ok ms=1.0"
    with trio.fail_after(30):
        async with locked_down.client() as api:
            assert (await api.get("/tabs")).status_code == 200
            r = await api.post("/tabs/open", json={"url": f"file:///audit-{nonce}"})
            assert r.json()["code"] == "URL_BLOCKED"
            r = await api.post("/eval", json={"js": "1"})
            assert r.json()["code"] == "EVAL_DISABLED"
            # Client-supplied text that tries to end the line and forge an entry.
            for url in (f"http://example.test/\n{forged}", f"http://example.test/\r\n{forged}",
                        f"http://example.test/\u2028{forged}"):
                r = await api.post("/tabs/open", json={"url": url})
                assert r.json()["code"] == "BAD_URL"
            r = await api.delete("/tabs/x%0A" + forged.replace(" ", "%20").replace("/", ""))
            assert r.json()["code"] == "TAB_NOT_FOUND"
            # The token where a careless client might put it.
            r = await api.post("/tabs/open", json={
                "url": f"http://127.0.0.1:{locked_down.port}/tabs?token={token}"})
            assert r.json()["code"] == "URL_BLOCKED"  # (the caller's own URL is echoed)
            r = await api.post("/tabs/open", json={
                "url": f"http://127.0.0.1:{locked_down.port}/{token}"})
            assert r.json()["code"] == "URL_BLOCKED"
            r = await api.post("/navigate", json={"url": f"file:///{token}", "targetId": token})
            assert r.json()["code"] == "URL_BLOCKED"
            assert (await api.delete(f"/tabs/{token}")).json()["code"] == "TAB_NOT_FOUND"
            r = await api.get("/tabs", params={"token": token})
            assert r.status_code == 400 and token not in r.text
        async with httpx.AsyncClient(base_url=locked_down.base_url, timeout=10,
                                     verify=LOOPBACK_TLS) as anon:
            assert (await anon.get(f"/tabs?token={token}")).status_code == 401
            assert (await anon.get(f"/{token}")).status_code == 401
            r = await anon.get("/tabs", headers={"Authorization": f"Bearer {token}x"})
            assert r.status_code == 401
            assert token not in r.text
    logs = locked_down.home / "logs"
    text = (logs / "audit.log").read_text()
    lines = text.splitlines()
    entries = [AUDIT_RE.match(line) for line in lines]
    assert all(entries), [line for line, m in zip(lines, entries, strict=True) if not m]
    matched = [m for m in entries if m is not None]
    seen = {(m["method"], m["path"], m["outcome"]) for m in matched}
    assert {("GET", "/tabs", "ok"), ("POST", "/tabs/open", "URL_BLOCKED"),
            ("POST", "/eval", "EVAL_DISABLED"), ("POST", "/tabs/open", "BAD_URL"),
            ("DELETE", "/tabs/[redacted]", "TAB_NOT_FOUND")} <= seen, seen
    assert any(m["url"] == f"file:///audit-{nonce}" for m in matched), "the URL is recorded"
    assert not [m for m in matched if m["who"] == f"forged-{nonce}"], "a forged entry"
    assert all(float(m["ms"]) >= 0 for m in matched)
    assert {m["who"] for m in matched if m["path"] == "/tabs"} != {token}
    for name in ("audit.log", "browserd.log"):
        assert token not in (logs / name).read_text(), f"the token leaked into {name}"
    assert token not in locked_down.log_text(), "the token leaked into stderr"
    assert token[:12] not in text and token[-12:] not in text
