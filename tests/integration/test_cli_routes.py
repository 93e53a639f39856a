"""The CLI covers every route: history, scroll, inspection, batches, inline images, pipes.

Each verb runs as ``python -m browserd ...`` against the shared service (see
tests/integration/test_cli.py); pages are tests/pages/nav_*.html and one
large generated index (``add_route``). ``| head -1`` runs in a real shell
pipeline: the reader goes away while the CLI still writes.
"""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import trio

from tests.conftest import PageServer, ServiceInfo, add_route
from tests.integration.helpers import html_route
from tests.integration.test_cli import cli, ok

pytestmark = pytest.mark.chromium

BIG_INDEX = ("<!doctype html><html><head><title>CLI index</title></head><body><h1>Index</h1>"
             + "".join(f'<p><a href="/cli_mod_{i}.html">module number {i} of the index</a></p>'
                       for i in range(3000))
             + "</body></html>")


@pytest.fixture
def index_url(pages: PageServer) -> str:
    add_route("/cli_index.html", html_route(BIG_INDEX))
    return pages.url("/cli_index.html")


async def test_history_scroll_and_inspection_verbs(service: ServiceInfo, api: httpx.AsyncClient,
                                                   pages: PageServer, tmp_path: Path) -> None:
    a, b = pages.url("/nav_a.html"), pages.url("/nav_b.html")
    target = (await ok(service, "open", a, "--json")).json()["targetId"]
    try:
        with trio.fail_after(90):
            await ok(service, "navigate", b, "--target", target)
            run = await ok(service, "back", "--target", target)
            assert run.out.strip().startswith(f"{target}  'nav a'  {a}"), run.out
            run = await ok(service, "forward", "--target", target, "--wait-until", "load")
            assert f"'nav b'  {b}  [200]" in run.out, run.out
            data = (await ok(service, "reload", "--ignore-cache", "--json",
                             "--target", target)).json()
            assert data["url"] == b and data["loadState"] in ("domcontentloaded", "load")
            run = await cli(service, "forward", "--target", target)
            assert run.rc == 1 and "hint:" in run.err and "no history entry" in run.err, run

            await ok(service, "navigate", pages.url("/nav_scroll.html"), "--target", target)
            run = await ok(service, "scroll", "--to", "bottom", "--target", target)
            assert run.out.startswith("page at x=0 y=") and "(bottom)" in run.out, run.out
            data = (await ok(service, "scroll", "--dy", "-300", "--json",
                             "--target", target)).json()
            assert data["atBottom"] is False and data["method"] == "wheel"
            await ok(service, "hover", "--selector", "#farButton", "--target", target)

            run = await ok(service, "query", "button", "--target", target)
            assert "far away button" in run.out
            run = await ok(service, "dom", "--format", "text", "--selector", "#first",
                           "--target", target)
            assert run.out.strip() == "first line of the box"
            await ok(service, "eval", "console.warn('from the page')", "--target", target)
            run = await ok(service, "console", "--level", "warn", "--target", target)
            assert "warn  from the page" in run.out
            run = await ok(service, "wait", "--selector", "#farButton", "--target", target)
            run = await ok(service, "act", '[{"kind": "press", "key": "Home"}, '
                           '{"kind": "wait", "selector": "#box"}]', "--target", target)
            assert run.out.splitlines() == ["0: press ok", "1: wait ok"], run.out

            data = (await ok(service, "screenshot", "--inline", "--json",
                             "--target", target)).json()
            image = base64.b64decode(data["data"])
            assert image[:8] == b"\x89PNG\r\n\x1a\n" and len(image) == data["bytes"]
            name = data["mediaUrl"].rsplit("/", 1)[1]
            out = tmp_path / "copy.png"
            await ok(service, "media", name, "--out", str(out))
            assert out.read_bytes() == image
    finally:
        await api.post("/tabs/close", json={"targetId": target})


@pytest.mark.parametrize("verb", ["snapshot", "dom"])
async def test_a_closed_pipe_ends_quietly(service: ServiceInfo, api: httpx.AsyncClient,
                                          index_url: str, verb: str) -> None:
    target = (await ok(service, "open", index_url, "--json")).json()["targetId"]
    try:
        with trio.fail_after(60):
            env = {k: v for k, v in os.environ.items() if not k.startswith("BROWSERD_")}
            env |= {"BROWSERD_HOME": str(service.home), "BROWSERD_CONTROL_URL": service.base_url}
            argv = [verb, "--target", target, "--max-chars", "5000000"]
            full = await cli(service, *argv)
            assert full.rc == 0 and len(full.out) > 100_000  # more than a pipe holds (64 KiB)
            script = (f"set -o pipefail; {sys.executable} -m browserd --boundary off "
                      f"{' '.join(argv)} | head -1")
            proc = await trio.run_process(["bash", "-c", script], env=env, capture_stdout=True,
                                          capture_stderr=True, check=False)
            err = proc.stderr.decode()
            assert "Traceback" not in err and "BrokenPipe" not in err, err
            assert err == "" and proc.returncode == 0, (proc.returncode, err)
            assert proc.stdout.decode().count("\n") == 1
            assert proc.stdout.decode() == full.out.splitlines(keepends=True)[0]
    finally:
        await api.post("/tabs/close", json={"targetId": target})


def test_a_closed_pipe_is_a_real_broken_pipe() -> None:
    """The shell's pipe really breaks: a plain Python writer in its place shows the traceback."""
    script = (f"{sys.executable} -c \"import sys; [print('x' * 100) for _ in range(100000)]\""
              " | head -1")
    proc = subprocess.run(["bash", "-c", script], capture_output=True, timeout=60, check=False)
    assert b"BrokenPipeError" in proc.stderr
