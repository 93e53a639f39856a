"""TLS end to end: ``browserd serve`` with a self-signed certificate.

On 127.0.0.1 (``control_url = https://…``): the pinned Python client and the CLI
(token from ``BROWSERD_TOKEN``, pin from ``BROWSERD_TLS_FINGERPRINT``) reach it;
a wrong pin is TLS_PIN_MISMATCH; ``token --remote`` prints the fingerprint of
the certificate actually served; plain HTTP is not served; Origins are
``https://``; ``/ws``, ``/events`` and ``/mcp`` work over TLS; the CDP gateway
serves TLS and Playwright's ``connect_over_cdp`` drives the browser over ``wss://``.

Off loopback, in a network namespace this test makes (a veth pair inside it,
10.213.7.1; nothing leaves it): plain HTTP refuses to start even with
``allow_remote_control``, while the same address over TLS starts and is reached
by a pinned client inside the namespace (the token still required).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import shutil
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import httpx
import orjson
import pytest
import trio
import trio_websocket
from supervision.harness import free_port_pair

from browserd.client import Client
from browserd.errors import TlsPinMismatch
from browserd.tls import pem_fingerprint

NS_ADDRESS = "10.213.7.1"


@attrs.frozen
class TlsService:
    proc: subprocess.Popen[bytes]
    home: Path
    host: str
    port: int
    token: str
    pin: str
    ca: Path  # the served certificate alone (a trust anchor for verifying clients)

    @property
    def url(self) -> str:
        return f"https://{self.host}:{self.port}"

    @property
    def cdp_port(self) -> int:
        return self.port + 1

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def context(self) -> ssl.SSLContext:
        """Verifies the certificate properly (chain and the name 127.0.0.1) against itself."""
        return ssl.create_default_context(cafile=str(self.ca))

    def log(self) -> str:
        return (self.home / "serve.log").read_text(errors="replace")


def serve_env(home: Path, url: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BROWSERD_")}
    return {**env, "BROWSERD_HOME": str(home), "BROWSERD_CONTROL_URL": url,
            "BROWSERD_HEADLESS": "1", **extra}


def start_tls_service(home: Path, *, host: str = "127.0.0.1", prefix: tuple[str, ...] = (),
                      env: dict[str, str] | None = None, port: int | None = None,
                      wait_browser: bool = True, timeout: float = 40.0) -> TlsService:
    """``browserd serve`` on ``https://host:port`` with ``tls = "self-signed"`` (``prefix``:
    e.g. ``ip netns exec NS``), ready once it logs that it listens (and, on loopback,
    ``/healthz`` answers over verified TLS)."""
    port = port or free_port_pair()
    home.mkdir(parents=True, exist_ok=True)
    log_path = home / "serve.log"
    full_env = serve_env(home, f"https://{host}:{port}", BROWSERD_TLS="self-signed",
                         **(env or {}))
    with open(log_path, "ab") as log:
        proc = subprocess.Popen([*prefix, sys.executable, "-m", "browserd", "serve"],
                                env=full_env, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout
    pem = home / "config" / "tls" / "self-signed.pem"
    ca = home / "ca.pem"
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"browserd exited {proc.returncode}:\n{log_path.read_text()}")
        if "browserd listening on https://" in log_path.read_text(errors="replace"):
            data = pem.read_bytes()
            ca.write_bytes(data[data.index(b"-----BEGIN CERTIFICATE-----"):])
            info = TlsService(proc=proc, home=home, host=host, port=port,
                              token=(home / "config" / "token").read_text().strip(),
                              pin=pem_fingerprint(data), ca=ca)
            if prefix or _healthz_ready(info, wait_browser):
                return info
        time.sleep(0.1)
    proc.kill()
    proc.wait()
    raise RuntimeError(f"browserd did not get ready:\n{log_path.read_text()}")


def _healthz_ready(info: TlsService, wait_browser: bool) -> bool:
    try:
        r = httpx.get(f"{info.url}/healthz", verify=info.context(), timeout=2)
    except httpx.HTTPError:
        return False
    return r.status_code == 200 and (not wait_browser or r.json()["browser"] == "open")


def stop(info: TlsService) -> None:
    if info.proc.poll() is None:
        info.proc.terminate()
        try:
            info.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            info.proc.kill()
            info.proc.wait()


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TlsService]:
    info = start_tls_service(tmp_path_factory.mktemp("tls"))
    yield info
    stop(info)


# -- loopback over TLS ----------------------------------------------------------------------


@pytest.mark.chromium
def test_the_pinned_client_reaches_the_service_and_a_wrong_pin_does_not(
        svc: TlsService) -> None:
    status = Client(svc.url, svc.token, fingerprint=svc.pin, timeout=20).get("/status")
    assert status["controlUrl"] == svc.url and status["running"] is True
    wrong = hashlib.sha256(b"not the certificate").hexdigest()
    with pytest.raises(TlsPinMismatch):
        Client(svc.url, svc.token, fingerprint=wrong, timeout=20).get("/status")


@pytest.mark.chromium
def test_a_remote_style_cli_uses_the_env_token_and_pin(svc: TlsService, tmp_path: Path) -> None:
    """A client with a home of its own (no token file): BROWSERD_TOKEN and the pin."""
    env = serve_env(tmp_path / "elsewhere", svc.url, BROWSERD_TOKEN=svc.token,
                    BROWSERD_TLS_FINGERPRINT=svc.pin.replace(":", "").lower())
    run = [sys.executable, "-m", "browserd", "--json", "status"]
    r = subprocess.run(run, env=env, capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert orjson.loads(r.stdout)["controlUrl"] == svc.url
    env["BROWSERD_TLS_FINGERPRINT"] = "00" * 32
    r = subprocess.run(run, env=env, capture_output=True, timeout=60)
    assert r.returncode == 1 and orjson.loads(r.stderr)["code"] == "TLS_PIN_MISMATCH"
    del env["BROWSERD_TLS_FINGERPRINT"]  # no pin: a self-signed certificate does not verify
    r = subprocess.run(run, env=env, capture_output=True, timeout=60)
    assert r.returncode == 1 and b"BROWSERD_TLS_FINGERPRINT" in r.stderr


async def test_the_mcp_stdio_bridge_connects_with_the_pin(svc: TlsService,
                                                          tmp_path: Path) -> None:
    """`browserd mcp` on a remote-style home: the token from the env, the pin, tools answer."""
    from mcp import Client as McpClient
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = serve_env(tmp_path / "mcp-home", svc.url, BROWSERD_TOKEN=svc.token,
                    BROWSERD_TLS_FINGERPRINT=svc.pin)
    params = StdioServerParameters(command=sys.executable, args=["-m", "browserd", "mcp"],
                                   env={**env, "PYTHONPATH": os.pathsep.join(sys.path)})
    with trio.fail_after(60), open(tmp_path / "mcp.log", "a") as errlog:
        async with McpClient(stdio_client(params, errlog=errlog)) as client:
            result = await client.call_tool("tabs", {})
            assert not result.is_error, result
    env["BROWSERD_TLS_FINGERPRINT"] = "00" * 32  # a wrong pin: refused, whichever way
    params = StdioServerParameters(command=sys.executable, args=["-m", "browserd", "mcp"],
                                   env={**env, "PYTHONPATH": os.pathsep.join(sys.path)})
    refused = ""
    with trio.fail_after(60), open(tmp_path / "mcp.log", "a") as errlog:
        try:
            async with McpClient(stdio_client(params, errlog=errlog)) as client:
                result = await client.call_tool("tabs", {})
                assert result.is_error, result
                refused = str(result.content)
        except Exception:  # the bridge refused to start: it said why on stderr
            refused = (tmp_path / "mcp.log").read_text()
    assert "TLS_PIN_MISMATCH" in refused or "fingerprint" in refused.lower(), refused


@pytest.mark.chromium
def test_token_remote_prints_the_fingerprint_of_the_certificate_served(
        svc: TlsService) -> None:
    env = serve_env(svc.home, svc.url, BROWSERD_TLS="self-signed")
    r = subprocess.run([sys.executable, "-m", "browserd", "token", "--remote"], env=env,
                       capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr
    printed = orjson.loads(r.stdout)
    with socket.create_connection(("127.0.0.1", svc.port), timeout=10) as raw:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
        with context.wrap_socket(raw) as tls:
            der = tls.getpeercert(binary_form=True)
    assert der is not None
    assert printed == {"controlUrl": svc.url, "token": svc.token,
                       "fingerprint": ":".join(f"{b:02X}" for b in hashlib.sha256(der).digest())}


@pytest.mark.chromium
def test_plain_http_is_not_served_and_origins_are_https(svc: TlsService) -> None:
    with pytest.raises(httpx.HTTPError):
        httpx.get(f"http://127.0.0.1:{svc.port}/healthz", timeout=5)
    with httpx.Client(base_url=svc.url, verify=svc.context(), headers=svc.headers,
                      timeout=20) as api:
        ours = api.get("/status", headers={"Origin": svc.url})
        assert ours.status_code == 200, ours.text
        plain = api.get("/status", headers={"Origin": f"http://127.0.0.1:{svc.port}"})
        assert plain.status_code == 403 and plain.json()["code"] == "FORBIDDEN_ORIGIN"
        assert api.get("/status", headers={"Authorization": ""}).status_code == 401
    # Browsers speak HTTP/2 over TLS (ALPN): Host is then :authority, and passes the gate.
    with httpx.Client(base_url=svc.url, verify=svc.context(), headers=svc.headers,
                      http2=True, timeout=20) as h2:
        r = h2.get("/status", headers={"Origin": svc.url})
        assert (r.http_version, r.status_code) == ("HTTP/2", 200), r.text
        assert h2.get("/status", headers={"Origin": "https://evil.test"}).status_code == 403


@pytest.mark.chromium
async def test_ws_events_and_mcp_work_over_tls(svc: TlsService) -> None:
    context = svc.context()
    async with trio_websocket.open_websocket_url(
            f"wss://127.0.0.1:{svc.port}/ws", ssl_context=context,
            extra_headers=[("Authorization", f"Bearer {svc.token}")]) as ws:
        await ws.send_message(orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "status"}))
        with trio.fail_after(20):
            answer = orjson.loads(await ws.get_message())
    assert answer["id"] == 1 and answer["result"]["controlUrl"] == svc.url
    async with httpx.AsyncClient(base_url=svc.url, verify=context, headers=svc.headers,
                                 timeout=60) as api:
        lines: list[str] = []

        async def read_events(scope: trio.CancelScope) -> None:
            async with api.stream("GET", "/events") as events:
                assert events.status_code == 200
                async for line in events.aiter_lines():
                    lines.append(line)
                    scope.cancel()  # the stream is open over TLS: end it from outside

        with trio.fail_after(20):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(read_events, nursery.cancel_scope)
        assert lines and lines[0].startswith("retry:")
        r = await api.post("/mcp", headers={"Accept": "application/json, text/event-stream"},
                           json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                               "protocolVersion": "2025-06-18", "capabilities": {},
                               "clientInfo": {"name": "tls-test", "version": "1"}}})
    assert r.status_code == 200, r.text
    assert r.json()["result"]["serverInfo"]["name"]


@pytest.mark.chromium
def test_playwright_drives_the_browser_over_wss_through_the_gateway(
        svc: TlsService, monkeypatch: pytest.MonkeyPatch) -> None:
    from playwright.sync_api import sync_playwright

    gateway = f"https://127.0.0.1:{svc.cdp_port}"
    version = httpx.get(f"{gateway}/json/version", headers=svc.headers, verify=svc.context(),
                        timeout=20)
    assert version.status_code == 200, version.text
    with pytest.raises(httpx.HTTPError):  # the gateway is TLS only, too
        httpx.get(f"http://127.0.0.1:{svc.cdp_port}/json/version", headers=svc.headers,
                  timeout=5)
    assert version.json()["webSocketDebuggerUrl"].startswith("wss://"), version.text
    path = version.json()["webSocketDebuggerUrl"].split("/", 3)[3]
    # Node (Playwright's driver) verifies the certificate against this extra trust anchor.
    monkeypatch.setenv("NODE_EXTRA_CA_CERTS", str(svc.ca))
    with sync_playwright() as pw:
        browser = pw.chromium.connect_over_cdp(f"wss://127.0.0.1:{svc.cdp_port}/{path}",
                                               headers=svc.headers, timeout=30_000)
        try:
            page = browser.contexts[0].new_page()
            page.set_content("<title>over-wss</title>")
            assert page.evaluate("() => [document.title, 20 + 22]") == ["over-wss", 42]
            with httpx.Client(base_url=svc.url, verify=svc.context(), headers=svc.headers,
                              timeout=20) as api:
                deadline = time.monotonic() + 15
                while "over-wss" not in (titles := [t["title"] for t in
                                                    api.get("/tabs").json()["tabs"]]):
                    assert time.monotonic() < deadline, titles  # one of browserd's tabs
                    time.sleep(0.1)
        finally:
            browser.close()


# -- off loopback, in a network namespace ---------------------------------------------------


def _ip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)


@pytest.fixture
def netns() -> Iterator[str]:
    """A network namespace with a veth pair inside it, ``NS_ADDRESS`` on one end."""
    if shutil.which("ip") is None:
        pytest.fail("the non-loopback test needs iproute2's `ip` (apt-get install iproute2)")
    name = f"browserd-tls-{os.getpid()}-{secrets.token_hex(3)}"
    made = _ip("netns", "add", name)
    if made.returncode != 0:
        pytest.fail(f"cannot make a network namespace here (`ip netns add`: "
                    f"{made.stderr.strip()}); the non-loopback bind test needs root or "
                    "CAP_SYS_ADMIN")
    try:
        for step in (("link", "set", "lo", "up"),
                     ("link", "add", "v0", "type", "veth", "peer", "name", "v1"),
                     ("addr", "add", f"{NS_ADDRESS}/24", "dev", "v0"),
                     ("link", "set", "v0", "up"), ("link", "set", "v1", "up")):
            done = _ip("-n", name, *step)
            if done.returncode != 0:
                pytest.fail(f"cannot set up the namespace ({' '.join(step)}): {done.stderr}")
        yield name
    finally:
        _ip("netns", "del", name)


def test_plain_http_off_loopback_refuses_to_start_in_a_namespace(
        netns: str, tmp_path: Path) -> None:
    url = f"http://{NS_ADDRESS}:18791"
    env = serve_env(tmp_path / "home", url, BROWSERD_ALLOW_REMOTE_CONTROL="1",
                    BROWSERD_ENABLED="0")
    r = subprocess.run(["ip", "netns", "exec", netns, sys.executable, "-m", "browserd", "serve"],
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert "plain HTTP" in r.stderr and "non-loopback" in r.stderr, r.stderr
    assert 'tls = "self-signed"' in r.stderr  # the hint says what to do
    assert not (tmp_path / "home" / "config" / "tls").exists()


CLIENT_SCRIPT = """
import http.client, json, sys
from browserd.client import Client
from browserd.errors import BrowserdError
from browserd.tls import pinned_context
url, token, pin, host, port = sys.argv[1:]
out = {"status": Client(url, token, fingerprint=pin, timeout=20).get("/status")["controlUrl"]}
try:
    Client(url, token, fingerprint="00" * 32, timeout=20).get("/status")
except BrowserdError as exc:
    out["wrong_pin"] = exc.code
out["anonymous"] = []
for method, path in (("GET", "/tabs"), ("GET", "/status"), ("POST", "/tabs/open"),
                     ("POST", "/stop")):
    anon = http.client.HTTPSConnection(host, int(port), context=pinned_context(), timeout=20)
    anon.request(method, path, body=b"{}" if method == "POST" else None,
                 headers={"Host": f"{host}:{port}", "Content-Type": "application/json"})
    r = anon.getresponse()
    cors = [k for k in r.headers if k.lower().startswith("access-control-")]
    out["anonymous"].append([r.status, r.getheader("X-Content-Type-Options"), cors])
    anon.close()
try:
    Client(f"http://{host}:{port}", token, timeout=20).get("/status")
except BrowserdError as exc:
    out["plain"] = exc.code
print(json.dumps(out))
"""


def test_tls_off_loopback_starts_in_a_namespace_and_takes_pinned_clients(
        netns: str, tmp_path: Path) -> None:
    """The control for the refusal above: the same address, with TLS, serves."""
    prefix = ("ip", "netns", "exec", netns)
    info = start_tls_service(tmp_path / "home", host=NS_ADDRESS, prefix=prefix, port=18791,
                             env={"BROWSERD_ALLOW_REMOTE_CONTROL": "1", "BROWSERD_ENABLED": "0"})
    try:
        r = subprocess.run([*prefix, sys.executable, "-c", CLIENT_SCRIPT, info.url, info.token,
                            info.pin, NS_ADDRESS, "18791"], capture_output=True, text=True,
                           timeout=90)
        assert r.returncode == 0, r.stderr + info.log()
        seen: dict[str, Any] = orjson.loads(r.stdout)
        assert seen == {"status": info.url, "wrong_pin": "TLS_PIN_MISMATCH",
                        "anonymous": [[401, "nosniff", []]] * 4, "plain": "CONFIG_ERROR"}, seen
        assert f"listening on https://{NS_ADDRESS}:18791" in info.log()
    finally:
        with contextlib.suppress(Exception):
            stop(info)


# -- the deploy recipes (TLS is how they reach agents) ---------------------------------------


DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def _starts_with(env: dict[str, str], tmp_path: Path) -> None:
    """These settings load and pass the start-up policy (bind, TLS): no refusal at start."""
    from browserd.config import load_settings
    from browserd.paths import Paths
    from browserd.service import check_bind_policy

    check_bind_policy(load_settings(Paths.resolve({"BROWSERD_HOME": str(tmp_path)}),
                                    environ=env))


def _image_env() -> dict[str, str]:
    """The Containerfile's ENV (the environment the image starts with)."""
    text = (DEPLOY / "container" / "Containerfile").read_text()
    block = text.split("\nENV ", 1)[1].split("\n\n")[0].replace("\\\n", " ")
    return dict(pair.split("=", 1) for pair in block.split())


def test_the_kubernetes_manifests_validate_and_their_settings_start(tmp_path: Path) -> None:
    import kubernetes_validate
    import yaml

    docs = [doc for path in sorted((DEPLOY / "kubernetes").glob("*.yaml"))
            for doc in yaml.safe_load_all(path.read_text()) if doc]
    kinds = {}
    for doc in docs:
        kubernetes_validate.validate(doc, "1.30.0", strict=True)  # offline: shipped schemas
        kinds[doc["kind"]] = doc
    assert {"StatefulSet", "Service", "Secret"} <= set(kinds)
    spec = kinds["StatefulSet"]["spec"]
    assert spec["volumeClaimTemplates"] and spec["serviceName"] == "browserd"
    assert kinds["Service"]["spec"]["clusterIP"] == "None"
    pod = spec["template"]["spec"]
    main = next(c for c in pod["containers"] if c["name"] == "browserd")
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        get = main[probe]["httpGet"]
        assert (get["path"], get["scheme"]) == ("/healthz", "HTTPS")
        assert get["httpHeaders"] == [{"name": "Host", "value": "127.0.0.1:18791"}]
    annotations = spec["template"]["metadata"]["annotations"]
    assert annotations["prometheus.io/path"] == "/metrics"
    secrets_used = {v["secret"]["secretName"] for v in pod["volumes"] if "secret" in v}
    assert secrets_used == {"browserd-token", "browserd-tls"}
    env = {e["name"]: e["value"] for e in main["env"] if "value" in e}
    env["BROWSERD_CONTROL_URL"] = env["BROWSERD_CONTROL_URL"].replace(
        "$(POD_NAME)", "browserd-0").replace("$(POD_NAMESPACE)", "agents")
    assert env["BROWSERD_CONTROL_URL"].startswith("https://browserd-0.browserd.agents.svc.")
    assert main["image"] == pod["initContainers"][0]["image"]
    _starts_with({**_image_env(), **env}, tmp_path)  # the pod's env over the image's


def test_the_container_recipe_serves_tls_as_a_non_root_user(tmp_path: Path) -> None:
    text = (DEPLOY / "container" / "Containerfile").read_text()
    assert text.startswith("# ") and "FROM docker.io/library/debian:" in text
    assert "apt-get install" in text and " chromium " in text
    assert "\nUSER browserd\n" in text and 'VOLUME ["/var/lib/browserd"]' in text
    health = next(line for line in text.splitlines() if line.strip().startswith("CMD [\"py"))
    assert "https://127.0.0.1:18791/healthz" in health
    env = _image_env()
    assert env["BROWSERD_CONTROL_URL"] == "https://0.0.0.0:18791"
    _starts_with(env, tmp_path)


def test_the_systemd_template_verifies(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed here (Debian: apt-get install systemd)")
    text = (DEPLOY / "systemd" / "browserd@.service").read_text()
    assert "%i" in text and "BROWSERD_HOME=%S/browserd/%i" in text
    assert "EnvironmentFile=/etc/browserd/%i.env" in text
    # verify checks that ExecStart's program exists: point it at this Python.
    unit = tmp_path / "browserd@.service"
    unit.write_text(text.replace("/opt/browserd/bin/python", sys.executable))
    r = subprocess.run([analyze, "verify", str(tmp_path / "browserd@ci.service")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and not (r.stdout + r.stderr).strip(), r.stdout + r.stderr
    example = {}
    for line in text.splitlines():
        if line.startswith("#     BROWSERD_"):
            key, _, value = line[6:].partition("=")
            example[key] = value
    assert example["BROWSERD_TLS"] == "self-signed"
    _starts_with(example, tmp_path)
