"""Page operations on one tab: navigate, eval, query, DOM dump.

Every function here is called while holding the tab's work slot
(``async with tab.work()``) and under a deadline the caller owns. Page
content is untrusted: it is returned as data and never interpreted.
"""

from __future__ import annotations

from typing import Any

import orjson
import trio

from ..errors import (
    BadUrl,
    BrowserdError,
    CdpError,
    DialogOpen,
    JsException,
    Timeout,
    UrlBlocked,
)
from ..redact import loggable_url
from ..snapshot import js_literal as js_literal  # one escaper for every page module
from .actor import TabActor
from .bounded_eval import evaluate_bounded
from .effects import observing
from .navwait import WAIT_UNTIL, Probe, wait_navigation
from .pagejs import page_function
from .remote import exception_text
from .tabview import Halt

DEFAULT_EVAL_MAX_BYTES = 8 * 1024 * 1024

__all__ = ["WAIT_UNTIL", "evaluate_value", "navigate", "page_info", "run_eval", "terminate"]

_PAGE_INFO = page_function("pageInfo").call()
"""The document's {url, title, status}, asked in the page's main world."""


async def navigate(
    tab: TabActor, url: str, *, wait_until: str = "load", timeout_s: float = 30.0
) -> dict[str, Any]:
    """Navigate the main frame and wait for ``wait_until``; the answer carries ``loadState``
    and ``effects``.

    ``wait_until`` (:data:`~browserd.tabs.navwait.WAIT_UNTIL`): "load",
    "domcontentloaded", "commit" (the new document has replaced the old one)
    or "none" (answer once Chromium has accepted it). The wait is the one
    navigation waiter's (:func:`~browserd.tabs.navwait.wait_navigation`), on
    the tab's own events (the page's worlds are not touched). ``effects`` is
    what the effects :class:`~browserd.tabs.effects.Observer` saw
    meanwhile, as for history moves: ``navigated`` (the URL committed),
    ``newTabs``, ``downloads``, ``blocked``, ``dialog``. A navigation whose
    response became a download (Chromium's ``isDownload``) does not commit:
    the answer names the page the tab stayed on, with ``effects.downloads``
    once reported (≤ :data:`~browserd.tabs.effects.DOWNLOAD_GRACE_S`).

    Raises UrlBlocked when the navigation guard stopped a hop of it, BadUrl
    when Chromium refuses the URL or the load fails at the network level,
    Timeout when the wait exceeds ``timeout_s`` (the page keeps loading),
    DialogOpen if a dialog blocks the page, as :meth:`TabActor.check_usable`
    when the tab crashed or went away meanwhile. Cancellation abandons the
    wait (the navigation goes on in the browser).
    """
    if wait_until not in WAIT_UNTIL:
        raise ValueError(f"wait_until must be one of {WAIT_UNTIL}")
    deadline = trio.current_time() + timeout_s
    timeout = Timeout(f"navigation to {url} did not reach {wait_until!r} within "
                      f"{timeout_s:.1f} s", hint="the page is still loading; use waitUntil: "
                      "'none' or raise timeoutMs")
    with observing(tab) as observer:
        async with observer.watching():
            guard_mark = tab.navguard.mark() if tab.navguard is not None else 0
            with trio.move_on_at(deadline) as scope:
                result = await _send_navigate(tab, url)
            if scope.cancelled_caught:
                raise timeout
            download = bool(result.get("isDownload"))
            if result.get("errorText") and not download:
                _raise_if_blocked(tab, guard_mark, url)
                raise BadUrl(f"navigation to {url} failed: {result['errorText']}",
                             hint="check the URL and that the site is reachable")
            if download:  # no document: the download is reported just after, if not yet
                with trio.move_on_at(deadline):
                    await observer.download_grace()
            loader_id = result.get("loaderId")
            if loader_id and wait_until != "none" and not download:
                arrival = await wait_navigation(
                    tab, wait_until=wait_until, until=deadline, after=observer.mark,
                    loader_id=loader_id, probe=Probe.NEVER, changed=observer.wait_changed)
                dialog = tab.view().dialog
                if arrival.halted is Halt.DIALOG and dialog is not None:
                    raise DialogOpen(f"a {dialog.type} dialog opened while loading",
                                     dialog=dialog.to_json())
                if arrival.halted is not None:
                    tab.check_usable()  # TargetCrashed, BrowserGone, TabBroken
                if not arrival.reached(wait_until):
                    raise timeout
    out: dict[str, Any] = {"ok": True, "targetId": tab.target_id}
    out.update(await page_info(tab))
    out["loadState"] = tab.view().load_state.value
    out["effects"] = observer.effects()
    return out


def _raise_if_blocked(tab: TabActor, mark: int, url: str) -> None:
    """UrlBlocked (403) when the navigation guard stopped a hop of this navigation.

    ``redirectedFrom`` is the URL the chain started from; URLs are shown as
    ``scheme://host:port/path`` only (:func:`~browserd.redact.loggable_url`).
    """
    guard = tab.navguard
    if guard is None:
        return
    blocks = [b for b in guard.blocks_since(mark, target_id=tab.target_id)
              if b.target_id == tab.target_id and b.main_frame]
    if not blocks:
        return
    block = blocks[0]
    redirected_from = block.redirected_from or loggable_url(url)
    raise UrlBlocked(
        f"the navigation was redirected to {block.url}, which the URL policy blocks "
        f"({block.reason}); the request was not sent",
        url=block.url, reason=block.reason, redirectedFrom=redirected_from,
    )


async def _send_navigate(tab: TabActor, url: str) -> dict[str, Any]:
    """Page.navigate; a dialog that opens first (``beforeunload``) is DialogOpen at once.

    Chromium answers Page.navigate only after a ``beforeunload`` prompt is
    closed, so the command is abandoned and the dialog reported instead; the
    navigation goes on when ``/dialog`` accepts it. With a dialog already
    open the command is sent as before (navigating away closes an alert).
    """
    if tab.view().dialog is not None:
        return await tab.send("Page.navigate", {"url": url})
    result, dialog = await tab.race_dialog(lambda: tab.send("Page.navigate", {"url": url}))
    if dialog is not None:
        raise DialogOpen(f"a {dialog.type} dialog opened before leaving the page: "
                         f"{dialog.message[:200]}", dialog=dialog.to_json(),
                         hint="accept it with POST /dialog {accept: true} to leave the page, "
                         "or dismiss it to stay")
    assert result is not None
    return result


async def page_info(tab: TabActor) -> dict[str, Any]:
    """URL, title and HTTP status of the current document (bounded, best effort)."""
    try:
        with trio.fail_after(5):
            value = await evaluate_value(tab, _PAGE_INFO)
        if isinstance(value, dict):
            view = tab.view()
            tab.note_target_info(title=str(value.get("title") or view.title))
            return {"url": value.get("url") or view.url, "title": value.get("title") or "",
                    "status": value.get("status") or None}
    except (BrowserdError, trio.TooSlowError):
        pass
    view = tab.view()
    return {"url": view.url, "title": view.title, "status": None}


async def evaluate_value(tab: TabActor, expression: str, *, await_promise: bool = False,
                         context_id: int | None = None, timeout_ms: int | None = None) -> Any:
    """Runtime.evaluate returning the value by value; a thrown error is JsException."""
    params: dict[str, Any] = {"expression": expression, "returnByValue": True,
                              "awaitPromise": await_promise, "userGesture": True}
    if context_id is not None:
        params["contextId"] = context_id
    if timeout_ms is not None:
        params["timeout"] = timeout_ms
    try:
        result = await tab.send("Runtime.evaluate", params)
    except CdpError as exc:
        # Runtime.evaluate's own ``timeout`` ended the script: a deadline, not a fault.
        if timeout_ms is not None and "Execution was terminated" in exc.message:
            raise Timeout(f"the script did not finish within {timeout_ms} ms and was terminated",
                          hint="the tab has recovered; simplify the script or raise timeoutMs"
                          ) from None
        raise
    details = result.get("exceptionDetails")
    if details:
        raise JsException(f"JavaScript threw: {exception_text(details, limit=2000)}",
                          hint="fix the expression; page errors are returned as data")
    remote = result.get("result", {})
    if "value" in remote:
        return remote["value"]
    if "unserializableValue" in remote:
        return remote["unserializableValue"]
    if remote.get("type") == "undefined":
        return None
    return remote.get("description")


async def run_eval(tab: TabActor, js: str, *, await_promise: bool, timeout_s: float,
                   max_bytes: int = DEFAULT_EVAL_MAX_BYTES) -> dict[str, Any]:
    """/eval: evaluate in the page's main world with a hard deadline.

    A runaway script is ended by ``Runtime.terminateExecution`` (answered
    even while the renderer is busy) and reported as 504; the tab recovers.
    A dialog opened by the script is 409 DIALOG_OPEN. A result whose JSON
    is above ``max_bytes`` is 422 RESULT_TOO_LARGE and never leaves the page
    (see :mod:`.bounded_eval`).
    """
    timeout_ms = max(1, int(timeout_s * 1000))
    with trio.move_on_after(timeout_s + 0.1) as scope:
        value, dialog = await tab.race_dialog(
            lambda: evaluate_bounded(tab, js, await_promise=await_promise,
                                     timeout_ms=timeout_ms, max_bytes=max_bytes)
        )
    if scope.cancelled_caught:
        await terminate(tab)
        raise Timeout(f"the script did not finish within {timeout_s:.1f} s and was terminated",
                      hint="the tab has recovered; simplify the script or raise timeoutMs")
    if dialog is not None:
        raise DialogOpen(f"the script opened a {dialog.type} dialog: {dialog.message[:200]}",
                         dialog=dialog.to_json())
    try:
        orjson.dumps(value)
    except TypeError:
        value = repr(value)
    return {"ok": True, "targetId": tab.target_id, "url": tab.view().url, "result": value}


async def terminate(tab: TabActor) -> None:
    """End whatever script runs in the tab (bounded; errors ignored)."""
    with trio.move_on_after(2):
        try:
            await tab.send("Runtime.terminateExecution")
        except (BrowserdError, CdpError):
            pass
