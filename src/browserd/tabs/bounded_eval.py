"""``/eval`` with a size limit checked in the page, before the result crosses CDP.

``Runtime.evaluate`` sends a string result inline whatever the serialization
asked for, so a 200 MB result would reach browserd whole (the service peaked
at 767 MiB). Instead the caller's script runs inside a small wrapper (an
indirect ``eval``, which ``Runtime.evaluate`` allows even under a page's
CSP): the wrapper keeps the value in the page and measures its JSON form in
UTF-8 bytes. Only a value within ``max_bytes`` is then fetched by value, in
exactly the shape ``returnByValue`` always gave; a larger one is refused with
:class:`~browserd.errors.ResultTooLarge` and released in the page.

The script runs as a global script, so ``var`` and function declarations
become globals as before; top-level ``let``/``const`` stay local to that one
evaluation (use ``var`` or ``globalThis`` to keep values between calls).

The measure uses the page's own ``JSON.stringify`` (and ``toJSON``
methods): a page that replaces them can make its values look smaller than
they are. The transport's own message limit still applies then.
"""

from __future__ import annotations

from typing import Any

import trio

from ..errors import BrowserdError, CdpError, JsException, ResultTooLarge, Timeout
from ..snapshot import js_literal
from .actor import TabActor

OBJECT_GROUP = "browserd-eval"

# The caller's script, as a string, is evaluated by an indirect eval (global
# scope, completion value). The holder keeps the value in the page.
_WRAPPER = """(() => {
  const max = %(max)d;
  const utf8Bytes = (s) => {
    if (s.length > max) return s.length;  // UTF-8 is never shorter than UTF-16
    let n = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x80) n += 1;
      else if (c < 0x800) n += 2;
      else if (c >= 0xd800 && c < 0xdc00 && i + 1 < s.length) { n += 4; i++; }
      else n += 3;
      if (n > max) return n;
    }
    return n;
  };
  const hold = (value) => {
    let size = -1;
    try {
      if (typeof value === 'string' && value.length > max) size = value.length;
      else {
        const json = JSON.stringify(value);
        size = typeof json === 'string' ? utf8Bytes(json) : 0;
      }
    } catch (e) { size = -1; }
    return {value, size};
  };
  const value = (0, eval)(%(source)s);
  return %(await)s ? Promise.resolve(value).then(hold) : hold(value);
})()"""

_SIZE = "function () { return this.size; }"
_VALUE = "function () { return this.value; }"


async def evaluate_bounded(tab: TabActor, js: str, *, await_promise: bool, timeout_ms: int,
                           max_bytes: int) -> Any:
    """Evaluate ``js`` in the main world; its result by value if it fits ``max_bytes``.

    Raises JsException when the script throws (or its promise rejects),
    Timeout when ``Runtime.evaluate``'s own ``timeout`` ended it, and
    ResultTooLarge when the JSON form of the result is above ``max_bytes``
    (the value never leaves the page). A value JSON cannot measure (a
    cycle, a BigInt) is returned as ``returnByValue`` gives it. The page's
    copy is released afterwards (bounded, best effort); on cancellation it
    is left to the next evaluation's release or the next navigation.
    """
    expression = _WRAPPER % {"max": max_bytes, "source": js_literal(js),
                             "await": "true" if await_promise else "false"}
    params: dict[str, Any] = {"expression": expression, "returnByValue": False,
                              "awaitPromise": await_promise, "userGesture": True,
                              "objectGroup": OBJECT_GROUP, "timeout": timeout_ms}
    try:
        reply = await tab.send("Runtime.evaluate", params)
    except CdpError as exc:
        if "Execution was terminated" in exc.message:
            raise Timeout(f"the script did not finish within {timeout_ms} ms and was "
                          "terminated", hint="the tab has recovered; simplify the script "
                          "or raise timeoutMs") from None
        raise
    details = reply.get("exceptionDetails")
    if details:
        raise js_exception(details)
    holder = reply.get("result", {}).get("objectId")
    if not isinstance(holder, str):
        raise BrowserdError("the evaluation wrapper returned no result")
    try:
        size = (await _call(tab, holder, _SIZE)).get("value")
        if isinstance(size, (int, float)) and size > max_bytes:
            raise ResultTooLarge(
                f"the result is more than {max_bytes} bytes of JSON (at least {int(size)}); "
                "it was left in the page", bytes=int(size), limit=max_bytes)
        return remote_value(await _call(tab, holder, _VALUE))
    finally:
        # Not shielded: when cancelled (a dialog, a deadline) the renderer may be
        # blocked, and the next evaluation's release frees this group anyway.
        with trio.move_on_after(1):
            try:
                await tab.send("Runtime.releaseObjectGroup", {"objectGroup": OBJECT_GROUP})
            except BrowserdError:
                pass


async def _call(tab: TabActor, object_id: str, function: str) -> dict[str, Any]:
    reply = await tab.send("Runtime.callFunctionOn", {
        "objectId": object_id, "functionDeclaration": function, "returnByValue": True})
    details = reply.get("exceptionDetails")
    if details:
        raise js_exception(details)
    result = reply.get("result", {})
    return result if isinstance(result, dict) else {}


def js_exception(details: dict[str, Any]) -> JsException:
    """The JsException for a CDP ``exceptionDetails`` (the thrown value's text)."""
    thrown = details.get("exception") or {}
    text = thrown.get("description") or thrown.get("value") or details.get("text", "error")
    return JsException(f"JavaScript threw: {str(text)[:2000]}",
                       hint="fix the expression; page errors are returned as data")


def remote_value(remote: dict[str, Any]) -> Any:
    """A RemoteObject fetched by value as JSON (``undefined`` → None)."""
    if "value" in remote:
        return remote["value"]
    if "unserializableValue" in remote:
        return remote["unserializableValue"]
    if remote.get("type") == "undefined":
        return None
    return remote.get("description")
