"""Routes for page input: click, type, press, hover, select, wait, act, dialog,
and the gestures (upload, drag, mouse, keyboard: :mod:`browserd.http.gestures`).

Each handler validates its fields (the route table below, plus the rules
a table cannot say: exactly one target, modifiers ⊆ Alt|Control|Meta|Shift),
resolves the runtime and the tab, takes the tab's work slot — only /dialog
may run while a JavaScript dialog is open; everything else gets 409
DIALOG_OPEN at once — and runs the action under the request's deadline
(``timeoutMs``, plus a short grace for recovering a hung page). All page
work itself is in :mod:`browserd.tabs.actions`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs
import trio

from ...downloads import wait_next_download
from ...errors import BadRequest, BrowserdError, EvalDisabled, Timeout
from ...system import System
from ...tabs import actions as inp
from ...tabs import page, snapshots
from ...tabs.actions.records import Action
from ...tabs.actor import TabActor
from ...tabs.locator import ElementTarget
from ..answers import returns
from ..confirmations import wait_for_confirmation
from ..facts import ACTS, DIALOG, HANDOFF, SETS, Cli, Words, by_hand
from ..fields import (
    LOCATOR,
    MODIFIERS,
    REF,
    SELECTOR,
    TARGET,
    TEXT_TARGET,
    WAIT_UNTIL,
    timeout_field,
)
from ..gestures import FILES, GESTURE_FIELDS, GESTURE_SUMMARIES, checked_files, gesture_action
from ..handoffs import WaitHandoff, WaitTabRequest, wait_for_handoff, wait_for_tab_request
from ..schema import Field, Route, kinds_schema, parse_args
from ..tabwork import on_tab

__all__ = ["input_routes"]

GRACE_S = 3.0
"""Time beyond ``timeoutMs`` for recovering a hung page and answering."""
MAX_ACTIONS = 100

_KIND_FIELDS: dict[str, tuple[Field, ...]] = {
    "click": (REF, SELECTOR, TEXT_TARGET, *LOCATOR,
              Field(name="button", type="string", default="left",
                    enum=("left", "right", "middle"), description="the mouse button"),
              Field(name="clickCount", type="integer", default=1, minimum=1, maximum=3,
                    description="1: click, 2: double-click, 3: triple-click"),
              MODIFIERS, FILES, WAIT_UNTIL, timeout_field(15_000)),
    "type": (Field(name="text", type="string", max_length=100_000,
                   description="the text to type"),
             Field(name="secret", type="string", max_length=64,
                   description="the name of a vault secret to type instead of text (typed "
                               "only on the secret's origin; its value is never answered)"),
             REF, SELECTOR, *LOCATOR,
             Field(name="clear", type="boolean", default=False,
                   description="empty the field first"),
             Field(name="submit", type="boolean", default=False,
                   description="press Enter afterwards"),
             Field(name="slowly", type="boolean", default=False,
                   description="one key event per character (for pages that listen to keys)"),
             WAIT_UNTIL, timeout_field(15_000)),
    "press": (Field(name="key", type="string", required=True, max_length=100,
                    description='a key ("Enter", "a", "ArrowDown") or chord ("Control+a")'),
              MODIFIERS, WAIT_UNTIL, timeout_field(15_000)),
    "hover": (REF, SELECTOR, TEXT_TARGET, *LOCATOR, WAIT_UNTIL, timeout_field(15_000)),
    "select": (REF, SELECTOR, TEXT_TARGET, *LOCATOR,
               Field(name="values", type="array", items="string", required=True,
                     description="option values or visible labels"),
               WAIT_UNTIL, timeout_field(15_000)),
    "wait": (Field(name="selector", type="string", max_length=4000,
                   description="until an element matching it is visible"),
             Field(name="text", type="string", max_length=2000,
                   description="until the page's visible text contains it"),
             Field(name="textGone", type="string", max_length=2000,
                   description="until the page's visible text no longer contains it"),
             Field(name="url", type="string", max_length=8192,
                   description="until the URL matches this glob (* within a segment, ** across)"),
             Field(name="loadState", type="string", enum=inp.LOAD_STATES,
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
    "navigate": (Field(name="url", type="string", required=True, max_length=8192,
                       description="the URL to open (http, https, or another scheme the URL "
                                   "policy allows)"),
                 Field(name="waitUntil", type="string", default="load",
                       enum=page.WAIT_UNTIL),
                 timeout_field(30_000)),
    "dialog": (Field(name="accept", type="boolean", required=True,
                     description="true: OK / accept; false: Cancel / dismiss"),
               Field(name="promptText", type="string", max_length=100_000,
                     description="the text to enter into a prompt() before accepting it"),
               WAIT_UNTIL, timeout_field(10_000)),
    **GESTURE_FIELDS,
}


#: The fields of each ``/act`` action kind (a wait for a download, handoff, tab request
#: or confirmation is ``/wait``'s alone).
_ACT_KIND_FIELDS = {kind: tuple(f for f in fields if kind != "wait" or f.name not in (
    "download", "handoff", "tabRequest", "confirmation")) for kind, fields in _KIND_FIELDS.items()}


def _target(args: dict[str, Any], *, text: bool = True) -> ElementTarget:
    return ElementTarget(ref=args.get("ref"), selector=args.get("selector"),
                         text=args.get("text") if text else None, role=args.get("role"),
                         name=args.get("name"), exact=bool(args.get("exact")),
                         nth=args.get("nth"))


def _action(kind: str, args: dict[str, Any], system: System
            ) -> Action | WaitDownload | WaitHandoff | WaitTabRequest:
    """The action record for validated ``args``: the one place that reads the camelCase.

    Checks the rules beyond field types (exactly one target, known modifiers
    and keys, exactly one wait condition, the URL policy) and raises
    BadRequest / EvalDisabled / UrlBlocked before any work.
    """
    modifiers = tuple(args.get("modifiers") or ())
    bad = [m for m in modifiers if m not in inp.MODIFIER_BITS]
    if bad:
        raise BadRequest(f"unknown modifier(s): {', '.join(map(repr, bad))}", field="modifiers",
                         hint="modifiers are Alt, Control, Meta and Shift")
    if kind == "click":
        target = _target(args)
        target.check()
        files = None if args.get("files") is None else checked_files(system, args["files"])
        return inp.Click(target=target, button=args["button"], click_count=args["clickCount"],
                         modifiers=modifiers, files=files, wait_until=args["waitUntil"])
    if kind == "hover":
        target = _target(args)
        target.check()
        return inp.Hover(target=target, wait_until=args["waitUntil"])
    if kind == "select":
        target = _target(args)
        target.check()
        if not args.get("values"):
            raise BadRequest("values must name at least one option", field="values")
        return inp.Select(target=target, values=tuple(args["values"]),
                          wait_until=args["waitUntil"])
    if kind == "type":
        typed_into = None
        if any(args.get(k) is not None for k in ("ref", "selector", "role", "name")):
            typed_into = _target(args, text=False)  # (text is what to type)
            typed_into.check()
        if (args.get("text") is None) == (args.get("secret") is None):
            raise BadRequest("give text or secret (a vault secret's name), not both",
                             field="text")
        text, origin, secret = args.get("text"), None, args.get("secret")
        if secret is not None:
            text, origin = system.vault.for_typing(secret)
        assert text is not None
        return inp.TypeText(text=text, target=typed_into, clear=args["clear"],
                            submit=args["submit"], slowly=args["slowly"],
                            wait_until=args["waitUntil"], origin=origin, secret=secret)
    if kind == "press":
        inp.parse_chord(args["key"], modifiers)
        return inp.Press(key=args["key"], modifiers=modifiers, wait_until=args["waitUntil"])
    if kind == "wait":
        given = [k for k in ("selector", "text", "textGone", "url", "loadState")
                 if args.get(k) is not None] + [k for k in ("download", "handoff",
                                                            "tabRequest", "confirmation")
                                                if args.get(k)]
        if len(given) != 1:
            raise BadRequest("give exactly one of selector, text, textGone, url, loadState, "
                             "download, handoff, tabRequest or confirmation"
                             + (f" (got {', '.join(given)})" if given else ""), field="selector")
        if given[0] in ("selector", "text", "textGone") and not system.settings.evaluate_enabled:
            raise EvalDisabled("JavaScript evaluation is disabled in settings, "
                               "and selector/text waits run JavaScript too",
                               hint="wait for url or loadState, or enable evaluate_enabled")
        if given[0] == "download":
            return WaitDownload()
        if given[0] == "handoff":
            return WaitHandoff()
        if given[0] == "tabRequest":
            return WaitTabRequest(request_id=args["tabRequest"])
        if given[0] == "confirmation":
            return WaitTabRequest(request_id=args["confirmation"], confirmation=True)
        return inp.Wait(selector=args.get("selector"), text=args.get("text"),
                        text_gone=args.get("textGone"), url=args.get("url"),
                        load_state=args.get("loadState"))
    if kind == "navigate":
        return inp.Navigate(url=system.url_policy.check(args["url"]),
                            wait_until=args["waitUntil"])
    if kind == "dialog":
        return inp.AnswerDialog(accept=args["accept"], prompt_text=args.get("promptText"),
                                wait_until=args["waitUntil"])
    if kind in GESTURE_FIELDS:
        return gesture_action(kind, args, system)
    raise BadRequest(f"unknown kind {kind!r}; kinds: {', '.join(_KIND_FIELDS)}",
                     field="kind")


async def _run(system: System, kind: str, args: dict[str, Any]) -> dict[str, Any]:
    action = _action(kind, args, system)
    if isinstance(action, WaitDownload):
        return await _wait_download(system, args)
    if isinstance(action, WaitHandoff):
        return await wait_for_handoff(system, args["targetId"], args["timeoutMs"])
    if isinstance(action, WaitTabRequest) and action.confirmation:
        return await wait_for_confirmation(system, action.request_id, args["timeoutMs"])
    if isinstance(action, WaitTabRequest):
        return await wait_for_tab_request(system, action.request_id, args["timeoutMs"])
    timeout_s = args["timeoutMs"] / 1000
    deadline = trio.current_time() + timeout_s

    async def run(tab: TabActor) -> dict[str, Any]:
        remaining = deadline - trio.current_time()
        if remaining <= 0:
            raise Timeout(f"the tab was busy for all of {args['timeoutMs']} ms; "
                          "nothing was sent", uncertain=False)
        result = await inp.perform(tab, action, timeout_s=remaining,
                                   evaluate_enabled=system.settings.evaluate_enabled)
        snap = await snapshot_after(tab, args.get("snapshot") or "none")
        return {"targetId": tab.target_id, **result, **({"snapshot": snap} if snap else {})}

    answer = await on_tab(system, args["targetId"], run, deadline_s=timeout_s + GRACE_S)
    await system.downloads.wait_listed(_downloads_in(answer))
    return answer


def _downloads_in(answer: dict[str, Any]) -> list[str]:
    """The download ids an action's answer reports (its effects, or its steps' effects)."""
    parts = [answer, *(step.get("result") or {} for step in answer.get("steps") or ()
                       if isinstance(step, dict))]
    return [str(d.get("id")) for part in parts if isinstance(part, dict)
            for d in (part.get("effects") or {}).get("downloads") or () if isinstance(d, dict)]


@attrs.frozen
class WaitDownload:
    """``/wait {download: true}``: not a page action (it runs beside the tab's work)."""


async def _wait_download(system: System, args: dict[str, Any]) -> dict[str, Any]:
    """``{ok, targetId, waitedMs, download}``, or 504 TIMEOUT when none finished in time.

    Does not take the tab's work slot: the click that starts the download
    may run meanwhile. Cancellation (client gone) ends the wait only.
    """
    runtime = system.supervisor.require_runtime()
    timeout_s = args["timeoutMs"] / 1000
    started = trio.current_time()
    with trio.fail_after(timeout_s + GRACE_S):
        tab = await runtime.tabs.resolve(args["targetId"])
    with trio.move_on_after(max(0.0, timeout_s - (trio.current_time() - started))) as scope:
        record = await wait_next_download(system.downloads, tab, session_id=system.session_id)
    waited = round((trio.current_time() - started) * 1000)
    if scope.cancelled_caught:
        raise Timeout(f"no download of this tab finished within {waited} ms",
                      hint="raise timeoutMs, or list downloads with GET /downloads",
                      waitedMs=waited)
    return {"ok": True, "targetId": tab.target_id, "waitedMs": waited,
            "download": record.to_json()}


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
            if kind not in _KIND_FIELDS:
                raise BadRequest(f"unknown kind {kind!r}; kinds: {', '.join(_KIND_FIELDS)}",
                                 field="actions")
            body = {k: v for k, v in action.items() if k != "kind"}
            args = parse_args(_KIND_FIELDS[kind], query={}, body=body)
            action_record = _action(kind, args, system)
            if isinstance(action_record, WaitDownload | WaitHandoff | WaitTabRequest):
                raise BadRequest("download, handoff and tab request waits are for POST /wait, "
                                 "not /act",
                                 field="actions")
        except BrowserdError as exc:  # keeps its code (FILE_NOT_FOUND, URL_BLOCKED…), details
            details = {**exc.details, "field": "actions", "index": index}
            raise type(exc)(f"actions[{index}]: {exc.message}", hint=exc.hint or None,
                            **details) from None
        steps.append(inp.Step(action=action_record, timeout_s=args["timeoutMs"] / 1000))
    return steps


async def act(system: System, args: dict[str, Any]) -> dict[str, Any]:
    steps = _steps(system, args["actions"])
    timeout_s = args["timeoutMs"] / 1000
    deadline = trio.current_time() + timeout_s

    async def run(tab: TabActor) -> dict[str, Any]:
        remaining = deadline - trio.current_time()
        if remaining <= 0:
            raise Timeout(f"the tab was busy for all of {args['timeoutMs']} ms; "
                          "no action was run", uncertain=False)
        result = await inp.act(tab, steps, timeout_s=remaining,
                               evaluate_enabled=system.settings.evaluate_enabled)
        snap = await snapshot_after(tab, args["snapshot"])
        return result if snap is None else {**result, "snapshot": snap}

    answer = await on_tab(system, args["targetId"], run, deadline_s=timeout_s + GRACE_S)
    await system.downloads.wait_listed(_downloads_in(answer))
    return answer


_SUMMARIES = {
    "click": "Click an element (real mouse at its centre; DOM click when covered)",
    "type": "Type text into an element or the focused one",
    "press": "Press a key or chord on the focused element",
    "hover": "Move the mouse over an element",
    "select": "Choose options of a <select> by value or label",
    "wait": "Wait for a selector, text, text gone, URL or load state",
    "dialog": "Accept or dismiss the open JavaScript dialog",
    **GESTURE_SUMMARIES,
}


#: ``snapshot`` on an input action (and ``/act``): what of the page to answer after it.
SNAPSHOT_AFTER = Field(name="snapshot", type="string", default="none",
                       enum=("none", "diff", "full"),
                       description="after the action, answer the page: its changes since the "
                                   "tab's latest snapshot (diff) or the whole snapshot (full)")


async def snapshot_after(tab: TabActor, mode: str) -> dict[str, Any] | None:
    """The ``snapshot`` of an input action's answer (None for ``none``)."""
    if mode == "none":
        return None
    latest = tab.refs.snapshots.latest()
    since = latest[0] if mode == "diff" and latest is not None else None
    return await snapshots.take_snapshot(tab, since=since)


def _kind_route(kind: str, **facts: Any) -> Route:
    """The ``/<kind>`` route of an action kind: its fields, its summary, and ``facts``."""
    return Route(path=f"/{kind}", methods=("POST",), handler=_handler(kind), tag="input",
                 summary=_SUMMARIES[kind], name=kind,
                 fields=(TARGET, *_KIND_FIELDS[kind],
                         *((SNAPSHOT_AFTER,) if kind != "wait" else ())), **facts)


def _typing_needs(args: Mapping[str, Any]) -> tuple[str, ...]:
    """Typing a vault secret needs ``secrets``."""
    return ("secrets",) if args.get("secret") is not None else ()


def _files_needs(args: Mapping[str, Any]) -> tuple[str, ...]:
    """Giving local files (a click that fills the chooser, a drop) needs ``files``."""
    return ("files",) if args.get("files") is not None else ()


def _act_needs(args: Mapping[str, Any]) -> tuple[str, ...]:
    """An ``/act`` batch needs what its steps need (an upload: ``files``, as ``/upload``
    does; a typed secret: ``secrets``), in the order the steps first need it."""
    found: list[str] = []
    for step in args.get("actions") or ():
        if not isinstance(step, dict):
            continue
        kind = step.get("kind")
        needs = (("files",) if kind == "upload" else _files_needs(step)
                 if kind in ("click", "drag") else _typing_needs(step) if kind == "type"
                 else ())
        found += [scope for scope in needs if scope not in found]
    return tuple(found)


#: Input acts on the page: not beside a dialog, not while a person has the tab.
_INPUT = DIALOG | HANDOFF


def input_routes() -> list[Route]:
    return [
        _kind_route("click", group="core", hints=ACTS, needs="act", extra_needs=_files_needs,
                    answer=returns("ClickAnswer"), blocked_by=_INPUT,
                    cli=Cli(positional=("ref?",))),
        _kind_route("type", group="core", hints=ACTS, needs="act", extra_needs=_typing_needs,
                    answer=returns("InputAnswer"), blocked_by=_INPUT,
                    cli=Cli(positional=("ref?", "text"))),
        _kind_route("press", group="core", hints=ACTS, needs="act",
                    answer=returns("InputAnswer"), blocked_by=_INPUT,
                    cli=Cli(positional=("key",))),
        _kind_route("hover", group="core", hints=ACTS, needs="act",
                    answer=returns("HoverAnswer"), blocked_by=_INPUT,
                    cli=Cli(positional=("ref?",))),
        _kind_route("select", group="core", hints=SETS, needs="act",
                    answer=returns("SelectAnswer"), blocked_by=_INPUT, cli=Cli(words=Words(
                        metavar="REF VALUE", placer="select",
                        help="the <select>'s ref, then the values or labels to choose (with "
                             "--selector/--text/--role/--name: values only)"))),
        # A wait reads the page: a person may hold the tab meanwhile (wait for them with it).
        _kind_route("wait", group="core", hints=ACTS, needs="act",
                    answer=returns("WaitAnswer"), blocked_by=DIALOG, cli=Cli()),
        # The one input an open dialog lets through: answering it.
        _kind_route("dialog", group="core", hints=ACTS, needs="act",
                    answer=returns("DialogAnswer"), blocked_by=HANDOFF, cli=Cli()),
        _kind_route("upload", group="core", hints=SETS, needs="files",
                    answer=returns("UploadAnswer"), blocked_by=_INPUT, cli=by_hand("upload"),
                    tool_text="Set the files of a file input (ref or selector), or, with "
                              "files only, answer the file chooser an earlier action opened "
                              "(effects: fileChooser)"),
        _kind_route("drag", group="core", hints=ACTS, needs="act", extra_needs=_files_needs,
                    answer=returns("DragAnswer"), blocked_by=_INPUT, cli=by_hand("drag")),
        _kind_route("mouse", group="page", hints=ACTS, needs="act",
                    answer=returns("MouseAnswer"), blocked_by=_INPUT, cli=by_hand("mouse")),
        _kind_route("keyboard", group="page", hints=ACTS, needs="act",
                    answer=returns("KeyboardAnswer"), blocked_by=_INPUT,
                    cli=by_hand("keyboard")),
        Route(path="/act", methods=("POST",), handler=act, tag="input",
              summary="Run a batch of actions in order on one tab; stop at the first failure",
              fields=(TARGET,
                      Field(name="actions", type="array", items="object", required=True,
                            item_schema=kinds_schema(_ACT_KIND_FIELDS),
                            description="[{kind: click|type|press|hover|select|wait|navigate|"
                                        "dialog|upload|drag|mouse|keyboard, ...that kind's "
                                        "fields}]"),
                      timeout_field(60_000), SNAPSHOT_AFTER),
              name="act", group="page", hints=ACTS, needs="act",
              answer=returns("ActAnswer", "every step's outcome (a failed step is still 200)"),
              blocked_by=_INPUT, cli=Cli(positional=("actions",)), extra_needs=_act_needs),
    ]
