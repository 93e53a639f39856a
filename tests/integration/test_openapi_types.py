"""The typed answers of ``/openapi.json`` hold for the real service.

- The main routes (tabs, navigate, snapshot, find, input, eval, screenshot,
  console, network, status, profiles, sessions, a two-step ``/act``; a
  session record and its replay) are called on a real page and every
  answer — and a few error bodies — is validated against the schema its
  operation declares, ``$ref`` s resolved against the served document.
- A TypeScript client generated from the document by openapi-typescript
  compiles code that reads the answers (``tabs[0].targetId``, a snapshot's
  ``text``, a click's ``effects.navigated``) under ``tsc --strict``, and
  refuses code that misuses them; the same code does not compile against a
  document whose answers are untyped (``{"type": "object"}``, what it was).
  Needs node and ``tests/js/node_modules`` (skipped, saying so, without).
"""

from __future__ import annotations

import copy
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import orjson
import pytest
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from tests.conftest import PageServer, ServiceInfo, add_route
from tests.integration.helpers import html_route

pytestmark = pytest.mark.chromium

NODE_BIN = Path(__file__).resolve().parents[1] / "js" / "node_modules" / ".bin"
OPENAPI_TS = NODE_BIN / "openapi-typescript"
TSC = NODE_BIN / "tsc"
needs_node = pytest.mark.skipif(
    not (OPENAPI_TS.exists() and TSC.exists() and shutil.which("node")),
    reason="needs node and tests/js/node_modules (openapi-typescript, typescript): "
           "npm ci in tests/js")

PAGE = b"""<!doctype html><title>Typed</title>
<h1>Typed answers</h1>
<label>Name <input id="name"></label>
<button id="log" onclick="console.log('clicked')">Log</button>
<a id="next" href="/typed_next.html">Next</a>"""
NEXT = b"<!doctype html><title>Next</title><p>the next page</p>"


class Conformance:
    """Validates answers against the operation they came from, in the served document."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc
        self.registry: Registry[Any] = Registry().with_resource(
            "urn:browserd:openapi", Resource.from_contents(doc, default_specification=DRAFT202012))
        self.checked: list[str] = []

    def _operation(self, method: str, path: str) -> dict[str, Any]:
        for template, item in self.doc["paths"].items():
            if re.fullmatch(re.sub(r"\{[^}]+\}", "[^/]+", template), path) and method in item:
                op: dict[str, Any] = item[method]
                return op
        raise AssertionError(f"{method.upper()} {path} is not in /openapi.json")

    def check(self, response: httpx.Response) -> dict[str, Any]:
        method, path = response.request.method.lower(), response.request.url.path
        declared = self._operation(method, path)["responses"]
        status = str(response.status_code)
        assert status in declared, f"{method} {path} answered an undeclared {status}"
        schema = declared[status]["content"]["application/json"]["schema"]
        assert schema != {"type": "object"}, f"{method} {path}: {status} is untyped"
        rooted = {"$ref": "urn:browserd:openapi#" + schema["$ref"][1:]}
        body: dict[str, Any] = response.json()
        errors = list(jsonschema.Draft202012Validator(rooted, registry=self.registry)
                      .iter_errors(body))
        assert not errors, (f"{method} {path} -> {status}: "
                            + "; ".join(f"{list(e.absolute_path)}: {e.message[:200]}"
                                        for e in errors[:5]))
        self.checked.append(f"{method.upper()} {path} {status}")
        return body


async def test_the_main_answers_conform_to_their_schemas(
        api: httpx.AsyncClient, pages: PageServer, tab: str) -> None:
    add_route("/typed.html", html_route(PAGE))
    add_route("/typed_next.html", html_route(NEXT))
    conform = Conformance((await api.get("/openapi.json")).json())
    check = conform.check

    async def post(path: str, **body: Any) -> dict[str, Any]:
        return check(await api.post(path, json={"targetId": tab, **body}))

    async def get(path: str, **params: Any) -> dict[str, Any]:
        return check(await api.get(path, params=params))

    check(await api.get("/status"))
    check(await api.get("/profiles"))
    check(await api.get("/sessions"))
    listed = check(await api.get("/tabs"))
    assert tab in [t["targetId"] for t in listed["tabs"]]
    await post("/navigate", url=pages.url("/typed.html"))
    snap = await get("/snapshot", targetId=tab, nodes="true")
    assert "Typed answers" in snap["text"]
    await get("/snapshot", targetId=tab, format="read")
    await get("/snapshot", targetId=tab, since=snap["snapshotId"])  # a diff
    found = await get("/find", targetId=tab, role="button", name="Log")
    assert found["count"] == 1
    await post("/click", ref=found["matches"][0]["ref"], snapshot="diff")
    await post("/type", selector="#name", text="Ada")
    await post("/press", key="Tab")
    assert (await post("/eval", js="document.querySelector('#name').value"))["result"] == "Ada"
    shot = await post("/screenshot")
    assert shot["mime"] == "image/png" and shot["width"] > 0
    assert (await post("/screenshot", since=shot["mediaId"]))["diff"]["changed"] is False
    await post("/eval", js="document.body.style.background = 'rgb(0, 0, 0)'")
    assert (await post("/screenshot", since=shot["mediaId"]))["diff"]["changed"] is True
    console = await get("/console", targetId=tab)
    assert any(m["text"] == "clicked" for m in console["messages"])
    await get("/network", targetId=tab)
    act = await post("/act", actions=[{"kind": "type", "selector": "#name", "text": "!"},
                                      {"kind": "click", "selector": "#next"}])
    assert act["ok"] is True and [s["kind"] for s in act["steps"]] == ["type", "click"]
    assert act["steps"][1]["result"]["effects"]["navigated"].endswith("/typed_next.html")
    failed = await post("/act", actions=[{"kind": "press", "key": "Tab"},
                                         {"kind": "click", "selector": "#gone",
                                          "timeoutMs": 300}])
    assert failed["ok"] is False and failed["failedAt"] == 1
    opened = check(await api.post("/tabs/open", json={"url": pages.url("/typed_next.html")}))
    check(await api.post("/tabs/close", json={"targetId": opened["targetId"]}))
    # errors are typed too
    assert (await post("/click", selector="#nowhere", timeoutMs=300))["code"] == "NO_MATCH"
    assert (await post("/navigate", url=3))["field"] == "url"
    assert (await get("/snapshot", targetId="no-such-tab"))["code"] == "TAB_NOT_FOUND"
    assert len(conform.checked) >= 20


async def test_the_record_answers_conform_to_their_schemas(
        api: httpx.AsyncClient, pages: PageServer, tab: str) -> None:
    add_route("/typed.html", html_route(PAGE))
    add_route("/typed_next.html", html_route(NEXT))
    check = Conformance((await api.get("/openapi.json")).json()).check
    await api.post("/navigate", json={"targetId": tab, "url": pages.url("/typed.html")})
    started = check(await api.post("/record/start", json={"targetId": tab, "video": True}))
    record_id = started["record"]["id"]
    try:
        check(await api.post("/click", json={"targetId": tab, "selector": "#log"}))
        check(await api.post("/record/stop"))
        assert record_id in [r["id"] for r in check(await api.get("/records"))["records"]]
        record = check(await api.get(f"/records/{record_id}"))
        assert "click" in [step["kind"] for step in record["steps"]]
        check(await api.post(f"/records/{record_id}/replay", json={"targetId": tab}))
    finally:
        await api.post("/record/stop")  # (404 once stopped)
        check(await api.delete(f"/records/{record_id}"))


# -- the typed client --------------------------------------------------------------

def _untyped(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with every JSON 200 answer ``{"type": "object"}``, as it used to be."""
    old = copy.deepcopy(doc)
    for item in old["paths"].values():
        for op in item.values():
            content = op["responses"]["200"]["content"]
            if "application/json" in content:
                content["application/json"]["schema"] = {"type": "object"}
    return old


_READS = """\
type Answer<P extends keyof paths, M extends keyof paths[P]> =
  paths[P][M] extends { responses: { 200: { content: { "application/json": infer A } } } }
    ? A : never;
declare const tabs: Answer<"/tabs", "get">;
declare const snap: Answer<"/snapshot", "get">;
declare const click: Answer<"/click", "post">;
"""

_GOOD = """\
import type { paths, components } from "./%s";
%s
const count: number = tabs.tabs.length;
const first: string = tabs.tabs[0].targetId;
const text: string | undefined = snap.text;
const snapshotId: string = snap.snapshotId;
const navigated: string | undefined = click.effects.navigated;
declare const failure: components["schemas"]["Error"];
const code: string = failure.code;
export { count, first, text, snapshotId, navigated, code };
"""

#: Each line misuses a typed answer: tsc must refuse every one of them.
_BAD_LINES = [
    "const a: number = snap.snapshotId;",
    "const b: string = tabs.running;",
    "const c: boolean = click.effects.navigated;",
    "const d: string = tabs.tabs[0].lastFocusedAt;",
]


def _generate(doc: dict[str, Any], workdir: Path, name: str) -> subprocess.Popen[bytes]:
    spec = workdir / f"{name}.json"
    spec.write_bytes(orjson.dumps(doc))
    return subprocess.Popen([str(OPENAPI_TS), str(spec), "-o", str(workdir / f"{name}.ts")],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=workdir)


@needs_node
def test_a_generated_typescript_client_types_the_answers(service: ServiceInfo,
                                                         tmp_path: Path) -> None:
    with service.sync_client() as client:
        doc = client.get("/openapi.json").json()
    generators = [_generate(doc, tmp_path, "api"), _generate(_untyped(doc), tmp_path, "old")]
    for generator in generators:
        out, _ = generator.communicate(timeout=120)
        assert generator.returncode == 0, out.decode(errors="replace")[-2000:]
    (tmp_path / "good.ts").write_text(_GOOD % ("api", _READS))
    (tmp_path / "old.ts").write_text(_GOOD % ("old", _READS))
    bad_head = 'import type { paths } from "./api";\n' + _READS
    (tmp_path / "bad.ts").write_text(bad_head + "\n".join(_BAD_LINES) + "\nexport {};\n")
    first_bad = bad_head.count("\n") + 1
    compiled = subprocess.run(
        [str(TSC), "--strict", "--noEmit", "--target", "es2022", "--module", "esnext",
         "--moduleResolution", "bundler", "--skipLibCheck", "good.ts", "bad.ts", "old.ts"],
        cwd=tmp_path, capture_output=True, timeout=120, check=False)
    report = compiled.stdout.decode(errors="replace")
    errors = re.findall(r"^(\w+)\.ts\((\d+),\d+\): error", report, re.M)
    assert compiled.returncode != 0 and errors, report
    assert not [e for e in errors if e[0] == "good"], report  # the typed client reads them
    bad = {int(line) for file, line in errors if file == "bad"}
    assert bad == set(range(first_bad, first_bad + len(_BAD_LINES))), report
    assert [e for e in errors if e[0] == "old"], report  # untyped: `tabs.tabs` is an error
