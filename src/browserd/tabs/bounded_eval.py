"""``/eval`` with a size limit checked in the page, before the result crosses CDP.

``Runtime.evaluate`` sends a string result inline whatever the serialization
asked for, so a 200 MB result would reach browserd whole (the service peaked
at 767 MiB). Instead the caller's script runs inside a small wrapper (an
indirect ``eval``, which ``Runtime.evaluate`` allows even under a page's
CSP) that measures the value's JSON form in UTF-8 bytes and, in the same
round trip, returns the value itself when it fits ``max_bytes`` (so it comes
back in exactly the shape ``returnByValue`` always gave) or else a marker
holding only the size, tagged with a per-call random nonce that the page
cannot guess. A larger value never leaves the page:
:class:`~browserd.errors.ResultTooLarge`.

The script runs as a global script, so ``var`` and function declarations
become globals as before; top-level ``let``/``const`` stay local to that one
evaluation (use ``var`` or ``globalThis`` to keep values between calls).

The measure uses the page's own ``JSON.stringify`` (and ``toJSON``
methods): a page that replaces them can make an object look smaller than it
is (a string is measured by its length, which a page cannot fake). The
transport's own message limit still applies then.
"""

from __future__ import annotations

import secrets
from typing import Any

from ..errors import CdpError, JsException, ResultTooLarge, Timeout
from .actor import TabActor
from .pagejs import page_function

# The caller's script, as a string, is evaluated by an indirect eval (global
# scope, completion value) inside boundedEval; one round trip, so no page task
# runs in between.
_BOUNDED_EVAL = page_function("boundedEval")


async def evaluate_bounded(tab: TabActor, js: str, *, await_promise: bool, timeout_ms: int,
                           max_bytes: int) -> Any:
    """Evaluate ``js`` in the main world; its result by value if it fits ``max_bytes``.

    Raises JsException when the script throws (or its promise rejects),
    Timeout when ``Runtime.evaluate``'s own ``timeout`` ended it, and
    ResultTooLarge when the JSON form of the result is above ``max_bytes``
    (the value never leaves the page). A value JSON cannot measure (a
    cycle, a BigInt) is returned as ``returnByValue`` gives it. Cancellation
    abandons the reply; nothing is left behind in the page.
    """
    marker = "__browserd_too_large_" + secrets.token_hex(8)
    expression = _BOUNDED_EVAL.call(js, max_bytes, marker, await_promise)
    params: dict[str, Any] = {"expression": expression, "returnByValue": True,
                              "awaitPromise": await_promise, "userGesture": True,
                              "timeout": timeout_ms}
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
    remote = reply.get("result", {})
    value = remote_value(remote if isinstance(remote, dict) else {})
    if isinstance(value, dict) and len(value) == 1 and marker in value:
        size = value[marker]
        shown = int(size) if isinstance(size, (int, float)) else max_bytes + 1
        raise ResultTooLarge(
            f"the result is more than {max_bytes} bytes of JSON (at least {shown}); "
            "it was left in the page", bytes=shown, limit=max_bytes)
    return value


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


__all__ = ["evaluate_bounded", "js_exception", "remote_value"]
