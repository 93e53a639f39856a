"""Routes for page input: click, type, press, hover, select, wait, act, dialog.

Each handler validates its fields (the route table below, plus the rules
a table cannot say: exactly one target, modifiers ⊆ Alt|Control|Meta|Shift),
resolves the runtime and the tab, takes the tab's work slot — only /dialog
may run while a JavaScript dialog is open; everything else gets 409
DIALOG_OPEN at once — and runs the action under the request's deadline
(``timeoutMs``, plus a short grace for recovering a hung page). All page
work itself is in :mod:`browserd.tabs.input`.
"""

from __future__ import annotations

from typing import Any

import trio

from ..errors import BadRequest, EvalDisabled, Timeout
from ..system import System
from ..tabs import input as inp
from .page_routes import TARGET, timeout_field
from .schema import Field, Route, parse_args

GRACE_S = 3.0
"""Time beyond ``timeoutMs`` for recovering a hung page and answering."""
MAX_ACTIONS = 100

REF = Field(name="ref", type="string", max_length=32, description="a ref from GET /snapshot")
SELECTOR = Field(name="selector", type="string", max_length=4000, description="a CSS selector")
TEXT_TARGET = Field(name="text", type="string", max_length=2000,
                    description="visible text of the element (buttons and links first)")
MODIFIERS = Field(name="modifiers", type="array", items="string",
                  description="held modifiers: any of Alt, Control, Meta, Shift")

_KIND_FIELDS: dict[str, tuple[Field, ...]] = {
    "click": (REF, SELECTOR, TEXT_TARGET,
              Field(name="button", type="string", default="left",
                    enum=("left", "right", "middle")),
              Field(name="clickCount", type="integer", default=1, minimum=1, maximum=3),
              MODIFIERS, timeout_field(15_000)),
    "type": (Field(name="text", type="string", required=True, max_length=100_000,
                   description="the text to type"),
             REF, SELECTOR,
             Field(name="clear", type="boolean", default=False,
                   description="empty the field first"),
             Field(name="submit", type="boolean", default=False,
                   description="press Enter afterwards"),
             Field(name="slowly", type="boolean", default=False,
                   description="one key event per character (for pages that listen to keys)"),
             timeout_field(15_000)),
    "press": (Field(name="key", type="string", required=True, max_length=100,
                    description='a key ("Enter", "a", "ArrowDown") or chord ("Control+a")'),
              MODIFIERS, timeout_field(15_000)),
    "hover": (REF, SELECTOR, TEXT_TARGET, timeout_field(15_000)),
    "select": (REF, SELECTOR, TEXT_TARGET,
               Field(name="values", type="array", items="string", required=True,
                     description="option values or visible labels"),
               timeout_field(15_000)),
    "wait": (Field(name="selector", type="string", max_length=4000,
                   description="until an element matching it is visible"),
             Field(name="text", type="string", max_length=2000,
                   description="until the page's visible text contains it"),
             Field(name="textGone", type="string", max_length=2000,
                   description="until the page's visible text no longer contains it"),
             Field(name="url", type="string", max_length=8192,
                   description="until the URL matches this glob (* within a segment, ** across)"),
             Field(name="loadState", type="string", enum=inp.LOAD_STATES),
             Field(name="download", type="boolean",
                   description="until the tab's next download has finished (/wait only)"),
             timeout_field(15_000)),
    "navigate": (Field(name="url", type="string", required=True, max_length=8192),
                 Field(name="waitUntil", type="string", default="load",
                       enum=("load", "domcontentloaded", "none")),
                 timeout_field(30_000)),
    "dialog": (Field(name="accept", type="boolean", required=True),
               Field(name="promptText", type="string", max_length=100_000),
               timeout_field(10_000)),
}


def _check(kind: str, args: dict[str, Any], system: System) -> None:
    """The rules beyond field types; BadRequest / EvalDisabled / UrlBlocked before any work."""
    if kind in ("click", "hover", "select"):
        given = [k for k in ("ref", "selector", "text") if args.get(k) is not None]
        if len(given) != 1:
            raise BadRequest("give exactly one of ref, selector or text"
                             + (f" (got {', '.join(given)})" if given else ""),
                             field="ref", hint='e.g. {"ref": "e12"} from GET /snapshot')
    if kind == "type" and args.get("ref") is not None and args.get("selector") is not None:
        raise BadRequest("give at most one of ref or selector", field="ref")
    modifiers = args.get("modifiers") or []
    bad = [m for m in modifiers if m not in inp.MODIFIER_BITS]
    if bad:
        raise BadRequest(f"unknown modifier(s): {', '.join(map(repr, bad))}", field="modifiers",
                         hint="modifiers are Alt, Control, Meta and Shift")
    if kind == "press":
        inp.parse_chord(args["key"], modifiers)
    if kind == "select" and not args.get("values"):
        raise BadRequest("values must name at least one option", field="values")
    if kind == "wait":
        given = [k for k in ("selector", "text", "textGone", "url", "loadState")
                 if args.get(k) is not None] + (["download"] if args.get("download") else [])
        if len(given) != 1:
            raise BadRequest("give exactly one of selector, text, textGone, url, loadState "
                             "or download"
                             + (f" (got {', '.join(given)})" if given else ""), field="selector")
        if given[0] in ("selector", "text", "textGone") and not system.settings.evaluate_enabled:
            raise EvalDisabled("JavaScript evaluation is disabled in settings, "
                               "and selector/text waits run JavaScript too",
                               hint="wait for url or loadState, or enable evaluate_enabled")
    if kind == "navigate":
        args["url"] = system.url_policy.check(args["url"])


async def _run(system: System, kind: str, args: dict[str, Any]) -> dict[str, Any]:
    _check(kind, args, system)
    if kind == "wait" and args.get("download"):  # navdl
        from .download_routes import wait_download

        return await wait_download(system, args)
    rt = system.supervisor.require_runtime()
    timeout_s = args["timeoutMs"] / 1000
    deadline = trio.current_time() + timeout_s
    with trio.fail_at(deadline + GRACE_S):
        tab = await rt.tabs.resolve(args["targetId"])
        async with tab.work(allow_dialog=kind == "dialog"):
            remaining = deadline - trio.current_time()
            if remaining <= 0:
                raise Timeout(f"the tab was busy for all of {args['timeoutMs']} ms; "
                              "nothing was sent", uncertain=False)
            result = await inp.perform(tab, kind, args, timeout_s=remaining,
                                       evaluate_enabled=system.settings.evaluate_enabled)
    return {"targetId": tab.target_id, **result}


def _handler(kind: str) -> Any:
    async def handle(system: System, args: dict[str, Any]) -> dict[str, Any]:
        return await _run(system, kind, args)

    handle.__name__ = f"input_{kind}"
    return handle


def _steps(system: System, actions: list[Any]) -> list[inp.Step]:
    """Validate every action before any runs; BadRequest names the action at fault."""
    if not actions:
        raise BadRequest("actions must list at least one action", field="actions")
    if len(actions) > MAX_ACTIONS:
        raise BadRequest(f"at most {MAX_ACTIONS} actions per batch", field="actions")
    steps: list[inp.Step] = []
    for index, action in enumerate(actions):
        try:
            if not isinstance(action, dict):
                raise BadRequest("an action must be an object with a kind", field="actions")
            kind = action.get("kind")
            if kind == "wait" and action.get("download"):  # navdl: /wait only
                raise BadRequest("download waits are for POST /wait, not /act",
                                 field="actions")
            if kind not in _KIND_FIELDS:
                raise BadRequest(f"unknown kind {kind!r}; kinds: {', '.join(_KIND_FIELDS)}",
                                 field="actions")
            body = {k: v for k, v in action.items() if k != "kind"}
            args = parse_args(_KIND_FIELDS[kind], query={}, body=body)
            _check(kind, args, system)
        except BadRequest as exc:
            raise BadRequest(f"actions[{index}]: {exc.message}", hint=exc.hint or None,
                             field="actions", index=index) from None
        steps.append(inp.Step(kind=kind, args=args, timeout_s=args["timeoutMs"] / 1000))
    return steps


async def act(system: System, args: dict[str, Any]) -> dict[str, Any]:
    steps = _steps(system, args["actions"])
    rt = system.supervisor.require_runtime()
    timeout_s = args["timeoutMs"] / 1000
    deadline = trio.current_time() + timeout_s
    with trio.fail_at(deadline + GRACE_S):
        tab = await rt.tabs.resolve(args["targetId"])
        async with tab.work(allow_dialog=False):
            remaining = deadline - trio.current_time()
            if remaining <= 0:
                raise Timeout(f"the tab was busy for all of {args['timeoutMs']} ms; "
                              "no action was run", uncertain=False)
            return await inp.act(tab, steps, timeout_s=remaining,
                                 evaluate_enabled=system.settings.evaluate_enabled)


_SUMMARIES = {
    "click": "Click an element (real mouse at its centre; DOM click when covered)",
    "type": "Type text into an element or the focused one",
    "press": "Press a key or chord on the focused element",
    "hover": "Move the mouse over an element",
    "select": "Choose options of a <select> by value or label",
    "wait": "Wait for a selector, text, text gone, URL or load state",
    "dialog": "Accept or dismiss the open JavaScript dialog",
}


def input_routes() -> list[Route]:
    routes = [
        Route(path=f"/{kind}", methods=("POST",), handler=_handler(kind), tag="input",
              summary=summary, fields=(TARGET, *_KIND_FIELDS[kind]))
        for kind, summary in _SUMMARIES.items()
    ]
    routes.append(Route(
        path="/act", methods=("POST",), handler=act, tag="input",
        summary="Run a batch of actions in order on one tab; stop at the first failure",
        fields=(TARGET,
                Field(name="actions", type="array", items="object", required=True,
                      description="[{kind: click|type|press|hover|select|wait|navigate|dialog,"
                                  " ...that kind's fields}]"),
                timeout_field(60_000))))
    return routes
