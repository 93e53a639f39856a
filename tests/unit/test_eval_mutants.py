"""``/eval``'s size limit, measured in the page: the wrapper run by a real V8 (Node.js).

``tabs/bounded_eval.py`` wraps the agent's script so that the page measures
the JSON form of the result in UTF-8 bytes and sends back only a size marker,
tagged with a random nonce, when it is too large. Here a stand-in tab runs
that very expression in Node.js (the same V8 as Chromium) as
``Runtime.evaluate {returnByValue, awaitPromise}`` would, so the wrapper's
counting and the Python side's reading of its answer are tested without a
browser. Written for the mutants of ``bounded_eval``
(``python -m supervision.mutants --only bounded-eval``) and for the audit's
"3-byte characters" and "a forged marker".
"""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any, cast

import pytest

from browserd.errors import CdpError, JsException, ResultTooLarge, Timeout
from browserd.tabs.actor import TabActor
from browserd.tabs.bounded_eval import evaluate_bounded, js_exception, remote_value

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="needs Node.js (the machine's V8)")

# Runtime.evaluate {returnByValue: true, awaitPromise} as Chromium answers it.
_RUNNER = r"""
const params = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const byValue = (v) => {
  if (v === undefined) return {type: 'undefined'};
  if (typeof v === 'number' && (Number.isNaN(v) || !Number.isFinite(v) || Object.is(v, -0)))
    return {type: 'number', unserializableValue: String(Object.is(v, -0) ? '-0' : v)};
  return {type: typeof v, value: v};
};
const out = (reply) => process.stdout.write(JSON.stringify(reply));
try {
  const value = (0, eval)(params.expression);
  if (params.awaitPromise) {
    Promise.resolve(value).then((v) => out({result: byValue(v)}),
      (e) => out({result: {type: 'object'}, exceptionDetails: {text: 'Uncaught',
                  exception: {description: String(e)}}}));
  } else out({result: byValue(value)});
} catch (e) {
  out({result: {type: 'object'}, exceptionDetails: {text: 'Uncaught',
       exception: {description: String(e)}}});
}
"""


class NodeTab:
    """A tab whose ``Runtime.evaluate`` runs in Node.js; records what it was sent."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    async def send(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert method == "Runtime.evaluate"
        self.sent.append(params)
        assert NODE is not None
        done = subprocess.run([NODE, "-e", _RUNNER], input=json.dumps(params).encode(),
                              capture_output=True, timeout=60, check=True)
        reply: dict[str, Any] = json.loads(done.stdout)
        return reply


async def run(js: str, *, max_bytes: int = 1000, await_promise: bool = False,
              tab: NodeTab | None = None) -> Any:
    return await evaluate_bounded(cast(TabActor, tab or NodeTab()), js,
                                  await_promise=await_promise, timeout_ms=5000,
                                  max_bytes=max_bytes)


def too_large(info: pytest.ExceptionInfo[ResultTooLarge]) -> tuple[int, int]:
    body = info.value.to_dict()
    return body["bytes"], body["limit"]


async def test_a_result_that_fits_comes_back_in_its_shape() -> None:
    tab = NodeTab()
    assert await run("({a: [1, 'x', null], b: 2})", tab=tab) == {"a": [1, "x", None], "b": 2}
    params = tab.sent[0]
    assert (params["returnByValue"], params["awaitPromise"], params["userGesture"],
            params["timeout"]) == (True, False, True, 5000)
    assert await run("undefined") is None
    assert await run("var kept = 41; kept + 1") == 42
    assert await run("Promise.resolve('later')", await_promise=True) == "later"
    assert tab.sent[0]["awaitPromise"] is False


@pytest.mark.parametrize(("char", "utf8"), [("a", 1), ("é", 2), ("€", 3), ("한", 3),
                                            ("😀", 4)])
async def test_the_limit_counts_each_character_by_its_utf8_bytes(char: str, utf8: int) -> None:
    js = json.dumps(char * 10)
    size = 2 + 10 * utf8  # the JSON form: quotes and ten characters
    assert len(json.dumps(char * 10, ensure_ascii=False).encode()) == size
    assert await run(js, max_bytes=size) == char * 10  # exactly the limit fits
    with pytest.raises(ResultTooLarge) as info:
        await run(js, max_bytes=size - 1)
    assert too_large(info) == (size, size - 1)


async def test_three_byte_characters_inside_an_object_count_three() -> None:
    value = {"k": "€" * 300}  # {"k":"…"}: 8 bytes of syntax, 900 of text
    js = "({k: '€'.repeat(300)})"
    assert await run(js, max_bytes=908) == value
    with pytest.raises(ResultTooLarge) as info:
        await run(js, max_bytes=907)
    assert too_large(info) == (908, 907)


async def test_a_long_string_is_refused_by_its_length_alone() -> None:
    with pytest.raises(ResultTooLarge) as info:
        await run("'x'.repeat(5000)", max_bytes=1000)
    assert too_large(info) == (5000, 1000)
    with pytest.raises(ResultTooLarge):
        await run("new Promise(r => r('€'.repeat(400)))", max_bytes=1000, await_promise=True)


async def test_a_page_cannot_forge_the_too_large_marker() -> None:
    forged = "({['__browserd_too_large_' + '0123456789abcdef']: 99})"
    assert await run(forged) == {"__browserd_too_large_0123456789abcdef": 99}
    # Even a script that reads every marker it can find sees none: the nonce is per call.
    tab = NodeTab()
    await run("1", tab=tab)
    await run("1", tab=tab)
    first, second = (p["expression"] for p in tab.sent)
    nonce = first.split("__browserd_too_large_", 1)[1][:16]
    assert len(nonce) == 16 and nonce not in second
    assert await run(f"({{__browserd_too_large_{nonce}: 5}})") == {
        f"__browserd_too_large_{nonce}": 5}


async def test_values_json_cannot_measure_come_back_as_given() -> None:
    assert await run("const o = {}; o.self = o; 'cycle'") == "cycle"
    assert await run("NaN") == "NaN"


class ScriptedTab:
    def __init__(self, reply: dict[str, Any] | Exception) -> None:
        self.reply = reply

    async def send(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply


async def scripted(reply: dict[str, Any] | Exception) -> Any:
    return await evaluate_bounded(cast(TabActor, ScriptedTab(reply)), "1", await_promise=False,
                                  timeout_ms=250, max_bytes=100)


async def test_a_terminated_script_is_a_timeout_and_other_cdp_errors_pass() -> None:
    with pytest.raises(Timeout, match="250 ms"):
        await scripted(CdpError("Execution was terminated"))
    with pytest.raises(CdpError, match="Target closed"):
        await scripted(CdpError("Target closed"))


async def test_a_thrown_error_is_a_js_exception() -> None:
    with pytest.raises(JsException, match="JavaScript threw: Error: boom"):
        await run("throw new Error('boom')")
    with pytest.raises(JsException, match="nope"):
        await run("Promise.reject('nope')", await_promise=True)
    assert "JavaScript threw: 7" in js_exception({"exception": {"value": 7}}).message
    assert "JavaScript threw: Uncaught" in js_exception({"text": "Uncaught"}).message
    assert "JavaScript threw: error" in js_exception({}).message
    assert len(js_exception({"exception": {"description": "x" * 5000}}).message) == 2000 + len(
        "JavaScript threw: ")


async def test_a_marker_with_an_odd_size_still_refuses() -> None:
    tab = NodeTab()
    await run("1", tab=tab)
    marker = "__browserd_too_large_" + tab.sent[0]["expression"].split(
        "__browserd_too_large_", 1)[1][:16]

    class Echo:
        async def send(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
            key = "__browserd_too_large_" + params["expression"].split(
                "__browserd_too_large_", 1)[1][:16]
            return {"result": {"type": "object", "value": {key: "big"}}}

    with pytest.raises(ResultTooLarge) as info:
        await evaluate_bounded(cast(TabActor, Echo()), "1", await_promise=False,
                               timeout_ms=100, max_bytes=10)
    assert too_large(info) == (11, 10)
    assert marker.startswith("__browserd_too_large_")

    class TwoKeys:
        async def send(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
            key = "__browserd_too_large_" + params["expression"].split(
                "__browserd_too_large_", 1)[1][:16]
            return {"result": {"type": "object", "value": {key: 5, "other": 1}}}

    value = await evaluate_bounded(cast(TabActor, TwoKeys()), "1", await_promise=False,
                                   timeout_ms=100, max_bytes=10)
    assert len(value) == 2  # not a marker: data


def test_remote_values() -> None:
    assert remote_value({"type": "number", "value": 0}) == 0
    assert remote_value({"type": "number", "unserializableValue": "-0"}) == "-0"
    assert remote_value({"type": "undefined"}) is None
    assert remote_value({"type": "object", "description": "HTMLBodyElement"}) == (
        "HTMLBodyElement")
    assert remote_value({"type": "object"}) is None
