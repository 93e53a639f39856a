"""The kinds that wait on, move or answer the page: wait, navigate and dialog.

Each :class:`~.spec.ActionSpec` here is the whole of its kind (see :mod:`.spec`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ....argfields import Field, timeout_field
from ....errors import BadRequest, EvalDisabled
from ....records.model import Call
from ....records.playwright import Writer, lit
from ... import page
from ...actor import TabActor
from ..dialog import handle_dialog
from ..records import AnswerDialog, Navigate, RouteWait, Wait
from ..wait import LOAD_STATES, wait
from .spec import WAIT_UNTIL, ActionSpec, BuildContext, PerformContext, Recording

__all__ = ["DIALOG", "NAVIGATE", "PERSON_WAITS", "WAIT"]

#: The waits only ``/wait`` runs (:class:`RouteWait`): on something of that run (a
#: download, the person, a tab request, a held action), not on the page; a record's
#: replay and its scripts leave them out.
PERSON_WAITS = ("download", "handoff", "tabRequest", "confirmation")
_PAGE_WAITS = ("selector", "text", "textGone", "url", "loadState")


# -- wait ----------------------------------------------------------------------------


def _build_wait(args: Mapping[str, Any], ctx: BuildContext) -> Wait | RouteWait:
    given = ([k for k in _PAGE_WAITS if args.get(k) is not None]
             + [k for k in PERSON_WAITS if args.get(k)])
    if len(given) != 1:
        raise BadRequest("give exactly one of selector, text, textGone, url, loadState, "
                         "download, handoff, tabRequest or confirmation"
                         + (f" (got {', '.join(given)})" if given else ""), field="selector")
    if given[0] in ("selector", "text", "textGone") and not ctx.evaluate_enabled:
        raise EvalDisabled("JavaScript evaluation is disabled in settings, "
                           "and selector/text waits run JavaScript too",
                           hint="wait for url or loadState, or enable evaluate_enabled")
    if given[0] in PERSON_WAITS:
        value = args.get(given[0])
        return RouteWait(condition=given[0],
                         request_id=value if isinstance(value, str) else None)
    return Wait(selector=args.get("selector"), text=args.get("text"),
                text_gone=args.get("textGone"), url=args.get("url"),
                load_state=args.get("loadState"))


async def _wait(tab: TabActor, action: Wait, ctx: PerformContext) -> dict[str, Any]:
    return await wait(tab, action, timeout_ms=max(1, int(ctx.timeout_s * 1000)),
                      evaluate_enabled=ctx.evaluate_enabled)


def _script_wait(w: Writer, call: Call, loc: str | None, index: int) -> None:
    args = call.args
    if any(args.get(k) for k in PERSON_WAITS):
        w.comment(f"step {index}: a wait only browserd can do is left out")
    elif args.get("selector") is not None:
        w.stmt(f"page.locator({lit(args['selector'])}).first.{w.m('wait_for', 'waitFor')}()")
    elif args.get("text") is not None:
        w.stmt(f"page.{w.m('get_by_text', 'getByText')}({lit(args['text'])}).first."
               f"{w.m('wait_for', 'waitFor')}()")
    elif args.get("textGone") is not None:
        opts = "state=\"hidden\"" if w.py else "{ state: \"hidden\" }"
        w.stmt(f"page.{w.m('get_by_text', 'getByText')}({lit(args['textGone'])}).first."
               f"{w.m('wait_for', 'waitFor')}({opts})")
    elif args.get("url") is not None:
        w.stmt(f"page.{w.m('wait_for_url', 'waitForURL')}({lit(args['url'])})")
    elif args.get("loadState") is not None:
        state = lit(args["loadState"])
        w.stmt(f"page.{w.m('wait_for_load_state', 'waitForLoadState')}({state})")


def _trace_wait(call: Call, selector: str | None, params: dict[str, Any]
                ) -> tuple[str, str, str]:
    args = call.args
    if args.get("selector") is not None or args.get("text") is not None:
        return "Frame", "waitForSelector", "locator.waitFor"
    if args.get("url") is not None:
        return "Frame", "waitForURL", "page.waitForURL"
    if args.get("loadState") is not None:
        return "Frame", "waitForLoadState", "page.waitForLoadState"
    return "Browserd", "wait", "browserd.wait"


WAIT = ActionSpec(
    kind="wait", summary="Wait for a selector, text, text gone, URL or load state",
    fields=(Field(name="selector", type="string", max_length=4000,
                  description="until an element matching it is visible"),
            Field(name="text", type="string", max_length=2000,
                  description="until the page's visible text contains it"),
            Field(name="textGone", type="string", max_length=2000,
                  description="until the page's visible text no longer contains it"),
            Field(name="url", type="string", max_length=8192,
                  description="until the URL matches this glob (* within a segment, ** "
                              "across)"),
            Field(name="loadState", type="string", enum=LOAD_STATES,
                  description="until the document has got this far"),
            Field(name="download", type="boolean",
                  description="until the tab's next download has finished (/wait only)"),
            Field(name="handoff", type="boolean",
                  description="until the person ends the tab's handoff (/wait only)"),
            Field(name="tabRequest", type="string", max_length=64,
                  description="until the person answers this tab request (/wait only)"),
            Field(name="confirmation", type="string", max_length=64,
                  description="until the person answers this held action, then run it "
                              "(/wait only)"),
            timeout_field(15_000)),
    route_only=PERSON_WAITS, record=Wait, build=_build_wait, perform=_wait, settles=False,
    own_timeout=True,
    recording=Recording(names=(), script=_script_wait, trace=_trace_wait))


# -- navigate ------------------------------------------------------------------------


def _build_navigate(args: Mapping[str, Any], ctx: BuildContext) -> Navigate:
    return Navigate(url=ctx.check_url(args["url"]), wait_until=args["waitUntil"])


async def _navigate(tab: TabActor, action: Navigate, ctx: PerformContext) -> dict[str, Any]:
    ctx.progress.sent = True
    return await page.navigate(tab, action.url, wait_until=action.wait_until,
                               timeout_s=ctx.timeout_s)


def _script_navigate(w: Writer, call: Call, loc: str | None, index: int) -> None:
    w.stmt(f"page.goto({lit(call.args.get('url'))})")


def _trace_navigate(call: Call, selector: str | None, params: dict[str, Any]
                    ) -> tuple[str, str, str]:
    return "Frame", "goto", "page.goto"


NAVIGATE = ActionSpec(
    kind="navigate", summary="Navigate a tab and wait for it to load",
    fields=(Field(name="url", type="string", required=True, max_length=8192,
                  description="the URL to open (http, https, or another scheme the URL "
                              "policy allows)"),
            Field(name="waitUntil", type="string", default="load", enum=page.WAIT_UNTIL,
                  description="how far the new document must load before the answer "
                              "(none: do not wait)"),
            timeout_field(30_000)),
    record=Navigate, build=_build_navigate, perform=_navigate, settles=False,
    own_timeout=True,
    recording=Recording(names=(), script=_script_navigate, trace=_trace_navigate))


# -- dialog --------------------------------------------------------------------------


def _build_dialog(args: Mapping[str, Any], ctx: BuildContext) -> AnswerDialog:
    return AnswerDialog(accept=args["accept"], prompt_text=args.get("promptText"),
                        wait_until=args["waitUntil"])


async def _dialog(tab: TabActor, action: AnswerDialog, ctx: PerformContext
                  ) -> dict[str, Any]:
    ctx.progress.sent = True
    return await handle_dialog(tab, accept=action.accept, prompt_text=action.prompt_text)


def _script_dialog(w: Writer, call: Call, loc: str | None, index: int) -> None:
    """Nothing here: the handler set before the step that opened the dialog answers it."""


def _script_dialog_ahead(w: Writer, call: Call) -> None:
    accept = bool(call.args.get("accept"))
    prompt = call.args.get("promptText")
    answer = ("accept" + (f"({lit(prompt)})" if prompt is not None else "()")) if accept \
        else "dismiss()"
    if w.py:
        w.lines.append(f"page.once(\"dialog\", lambda dialog: dialog.{answer})")
    else:
        w.lines.append(f"page.once(\"dialog\", (dialog) => dialog.{answer});")


def _trace_dialog(call: Call, selector: str | None, params: dict[str, Any]
                  ) -> tuple[str, str, str]:
    if call.args.get("accept"):
        return "Dialog", "accept", "dialog.accept"
    return "Dialog", "dismiss", "dialog.dismiss"


DIALOG = ActionSpec(
    kind="dialog", summary="Accept or dismiss the open JavaScript dialog",
    fields=(Field(name="accept", type="boolean", required=True,
                  description="true: OK / accept; false: Cancel / dismiss"),
            Field(name="promptText", type="string", max_length=100_000,
                  description="the text to enter into a prompt() before accepting it"),
            WAIT_UNTIL, timeout_field(10_000)),
    record=AnswerDialog, build=_build_dialog, perform=_dialog, settles=True,
    during_dialog=True,
    recording=Recording(names=(), script=_script_dialog, script_ahead=_script_dialog_ahead,
                        trace=_trace_dialog))
