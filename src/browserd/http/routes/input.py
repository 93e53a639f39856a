"""Routes for page input: one ``/<kind>`` per action kind, and ``/act`` (a batch of them).

What a kind takes, how its arguments become a record (checked once, with one
message, by the kind's spec and its record) and how it runs are its
:class:`~browserd.tabs.actions.kinds.ActionSpec`'s
(:data:`~browserd.tabs.actions.kinds.ACTION_SPECS`); this module declares
the routes' own facts (group, hints, scope, answer, what blocks them, CLI)
and runs a call: build the record, take the tab's work slot under the
route's blockers (:func:`browserd.http.tabwork.on_tab`: only /dialog may run
while a JavaScript dialog is open; everything else gets 409 DIALOG_OPEN at
once) and perform it under the request's deadline (``timeoutMs``, plus a
short grace for recovering a hung page). A wait for a download, the person,
a tab request or a held action is ``/wait``'s alone and holds no work slot.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import trio

from ...downloads import wait_next_download
from ...errors import BadRequest, BrowserdError, Timeout
from ...system import System
from ...tabs import actions as inp
from ...tabs import snapshots
from ...tabs.actions.kinds import ACTION_SPECS, READ_KINDS, ActionSpec
from ...tabs.actions.records import RouteWait
from ...tabs.actor import TabActor
from ..answers import returns
from ..confirmations import wait_for_confirmation
from ..facts import (
    ACTS,
    DIALOG,
    HANDOFF,
    NOT_HELD,
    SETS,
    Cli,
    HeldAs,
    HeldByAction,
    HeldSteps,
    Render,
    Words,
    by_hand,
    held,
)
from ..fields import TARGET, timeout_field
from ..handoffs import wait_for_handoff, wait_for_tab_request
from ..schema import Field, Route, kinds_schema, parse_args
from ..tabwork import on_tab

__all__ = ["ServiceContext", "input_routes"]

GRACE_S = 3.0
"""Time beyond ``timeoutMs`` for recovering a hung page and answering."""
MAX_ACTIONS = 100


class ServiceContext:
    """What building a kind's record asks of the service: the settings, the URL policy,
    the upload roots and the vault of ``system`` (:class:`~browserd.tabs.actions.kinds.
    BuildContext`)."""

    def __init__(self, system: System) -> None:
        self._system = system

    @property
    def evaluate_enabled(self) -> bool:
        return self._system.settings.evaluate_enabled

    def check_url(self, url: str) -> str:
        return self._system.url_policy.check(url)

    def check_files(self, files: Any) -> tuple[str, ...]:
        if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
            raise BadRequest("files must be a list of paths", field="files")
        return tuple(f.path for f in self._system.uploads.check(files))

    def secret_for_typing(self, name: str) -> tuple[str, str | None]:
        return self._system.vault.for_typing(name)


async def _run(system: System, spec: ActionSpec, args: dict[str, Any]) -> dict[str, Any]:
    action = spec.build(args, ServiceContext(system))
    if isinstance(action, RouteWait):
        return await _route_wait(system, action, args)
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


async def _route_wait(system: System, wait: RouteWait, args: dict[str, Any]
                      ) -> dict[str, Any]:
    """A wait ``/wait`` runs beside the tab's work (no slot): for a download, the end of a
    handoff, the person's answer to a tab request or to a held action."""
    if wait.condition == "download":
        return await _wait_download(system, args)
    if wait.condition == "handoff":
        return await wait_for_handoff(system, args["targetId"], args["timeoutMs"])
    assert wait.request_id is not None
    if wait.condition == "confirmation":
        return await wait_for_confirmation(system, wait.request_id, args["timeoutMs"])
    return await wait_for_tab_request(system, wait.request_id, args["timeoutMs"])


def _downloads_in(answer: dict[str, Any]) -> list[str]:
    """The download ids an action's answer reports (its effects, or its steps' effects)."""
    parts = [answer, *(step.get("result") or {} for step in answer.get("steps") or ()
                       if isinstance(step, dict))]
    return [str(d.get("id")) for part in parts if isinstance(part, dict)
            for d in (part.get("effects") or {}).get("downloads") or () if isinstance(d, dict)]


async def _wait_download(system: System, args: dict[str, Any]) -> dict[str, Any]:
    """``{ok, targetId, waitedMs, download}``, or 504 TIMEOUT when none finished in time.

    Does not take the tab's work slot: the click that starts the download
    may run meanwhile. Cancellation (client gone) ends the wait only.
    """
    runtime = system.require_runtime()
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


def _handler(spec: ActionSpec) -> Any:
    async def handle(system: System, args: dict[str, Any]) -> dict[str, Any]:
        return await _run(system, spec, args)

    handle.__name__ = f"input_{spec.kind}"
    return handle


def _steps(system: System, actions: list[Any]) -> list[inp.Step]:
    """Validate every action before any runs; the error names the action at fault."""
    if not actions:
        raise BadRequest("actions must list at least one action", field="actions")
    if len(actions) > MAX_ACTIONS:
        raise BadRequest(f"at most {MAX_ACTIONS} actions per batch", field="actions")
    context = ServiceContext(system)
    steps: list[inp.Step] = []
    for index, action in enumerate(actions):
        try:
            if not isinstance(action, dict):
                raise BadRequest("an action must be an object with a kind", field="actions")
            spec = ACTION_SPECS.get(str(action.get("kind")))
            if spec is None:
                raise BadRequest(f"unknown kind {action.get('kind')!r}; kinds: "
                                 f"{', '.join(ACTION_SPECS)}", field="actions")
            body = {k: v for k, v in action.items() if k != "kind"}
            args = parse_args(spec.fields, query={}, body=body)
            record = spec.build(args, context)
            if isinstance(record, RouteWait):
                raise BadRequest("download, handoff and tab request waits are for POST /wait, "
                                 "not /act", field="actions")
        except BrowserdError as exc:  # keeps its code (FILE_NOT_FOUND, URL_BLOCKED…), details
            details = {**exc.details, "field": "actions", "index": index}
            raise type(exc)(f"actions[{index}]: {exc.message}", hint=exc.hint or None,
                            **details) from None
        own_ms = args.get("timeoutMs")  # (a find has none: what is left of the batch's)
        steps.append(inp.Step(action=record,
                              timeout_s=math.inf if own_ms is None else own_ms / 1000))
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


def _act_needs(args: Mapping[str, Any]) -> tuple[str, ...]:
    """An ``/act`` batch needs what its steps' kinds need (an upload: ``files``, as
    ``/upload`` does; a typed secret: ``secrets``), in the order the steps first need it."""
    found: list[str] = []
    for step in args.get("actions") or ():
        spec = ACTION_SPECS.get(str(step.get("kind"))) if isinstance(step, dict) else None
        if spec is not None:
            found += [scope for scope in spec.extra_needs(step) if scope not in found]
    return tuple(found)


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
    """The ``/<kind>`` route of an action kind: its spec's fields, summary and extra needs,
    and the route's own ``facts``."""
    spec = ACTION_SPECS[kind]
    return Route(path=f"/{kind}", methods=("POST",), handler=_handler(spec), tag="input",
                 summary=spec.summary, name=kind, extra_needs=spec.extra_needs,
                 fields=(TARGET, *spec.fields, *((SNAPSHOT_AFTER,) if kind != "wait" else ())),
                 **facts)


#: Input acts on the page: not beside a dialog, not while a person has the tab.
_INPUT = DIALOG | HANDOFF
#: What of an input's answer is the page's: what it caused, the snapshot asked for, what
#: covered its element.
_CAUSED = ("effects", "snapshot", "coveredBy")
#: Raw input, judged by the ``confirm`` rules by what it does: a mouse press is a click, a
#: key down a press, inserted text typing.
_MOUSE_HELD = HeldByAction(kinds={"down": "click", "click": "click"})
_KEYBOARD_HELD = HeldByAction(kinds={"down": "press", "insertText": "type"})


def input_routes() -> list[Route]:
    kinds = _kind_routes()
    # A step no rule holds: a read (find), or a kind whose own route none holds (hover, wait).
    unheld = frozenset(READ_KINDS) | {r.name for r in kinds if not held(r.confirm)}
    return [*kinds, _act_route(unheld)]


def _kind_routes() -> list[Route]:
    return [
        _kind_route("click", group="core", hints=ACTS, needs="act",
                    confirm=HeldAs(kind="click"), untrusted=_CAUSED, render=Render.ACTION,
                    answer=returns("ClickAnswer"), blocked_by=_INPUT,
                    cli=Cli(positional=("ref?",))),
        _kind_route("type", group="core", hints=ACTS, needs="act",
                    confirm=HeldAs(kind="type"), untrusted=_CAUSED, render=Render.ACTION,
                    answer=returns("InputAnswer"), blocked_by=_INPUT,
                    cli=Cli(positional=("ref?", "text"))),
        _kind_route("press", group="core", hints=ACTS, needs="act",
                    confirm=HeldAs(kind="press"), untrusted=_CAUSED, render=Render.ACTION,
                    answer=returns("InputAnswer"), blocked_by=_INPUT,
                    cli=Cli(positional=("key",))),
        _kind_route("hover", group="core", hints=ACTS, needs="act",
                    confirm=NOT_HELD, untrusted=_CAUSED, render=Render.ACTION,
                    answer=returns("HoverAnswer"), blocked_by=_INPUT,
                    cli=Cli(positional=("ref?",))),
        _kind_route("select", group="core", hints=SETS, needs="act",
                    confirm=HeldAs(kind="select"), untrusted=_CAUSED, render=Render.ACTION,
                    answer=returns("SelectAnswer"), blocked_by=_INPUT, cli=Cli(words=Words(
                        metavar="REF VALUE", placer="select",
                        help="the <select>'s ref, then the values or labels to choose (with "
                             "--selector/--text/--role/--name: values only)"))),
        # A wait reads the page: a person may hold the tab meanwhile (wait for them with it).
        _kind_route("wait", group="core", hints=ACTS, needs="act",
                    confirm=NOT_HELD, untrusted=("download", "result"), render=Render.FIELDS,
                    answer=returns("WaitAnswer"), blocked_by=DIALOG, cli=Cli()),
        # The one input an open dialog lets through: answering it.
        _kind_route("dialog", group="core", hints=ACTS, needs="act",
                    confirm=HeldAs(kind="dialog"), untrusted=_CAUSED, render=Render.ACTION,
                    answer=returns("DialogAnswer"), blocked_by=HANDOFF, cli=Cli()),
        _kind_route("upload", group="core", hints=SETS, needs="files",
                    confirm=HeldAs(kind="upload"), untrusted=_CAUSED, render=Render.ACTION,
                    answer=returns("UploadAnswer"), blocked_by=_INPUT, cli=by_hand("upload"),
                    tool_text="Set the files of a file input (ref or selector), or, with "
                              "files only, answer the file chooser an earlier action opened "
                              "(effects: fileChooser)"),
        _kind_route("drag", group="core", hints=ACTS, needs="act",
                    confirm=HeldAs(kind="drag"), untrusted=_CAUSED, render=Render.ACTION,
                    answer=returns("DragAnswer"), blocked_by=_INPUT, cli=by_hand("drag")),
        _kind_route("mouse", group="page", hints=ACTS, needs="act",
                    confirm=_MOUSE_HELD, untrusted=_CAUSED, render=Render.ACTION,
                    answer=returns("MouseAnswer"), blocked_by=_INPUT, cli=by_hand("mouse")),
        _kind_route("keyboard", group="page", hints=ACTS, needs="act",
                    confirm=_KEYBOARD_HELD, untrusted=_CAUSED, render=Render.ACTION,
                    answer=returns("KeyboardAnswer"), blocked_by=_INPUT,
                    cli=by_hand("keyboard")),
    ]


def _act_route(unheld: frozenset[str]) -> Route:
    return Route(
        path="/act", methods=("POST",), handler=act, tag="input",
        summary="Run a batch of actions in order on one tab; stop at the first failure",
        fields=(TARGET,
                Field(name="actions", type="array", items="object", required=True,
                      item_schema=kinds_schema({kind: spec.step_fields for kind, spec
                                                in ACTION_SPECS.items()}),
                      description=f"[{{kind: {'|'.join(ACTION_SPECS)}, ...that kind's "
                                  "fields}]"),
                timeout_field(60_000), SNAPSHOT_AFTER),
        name="act", group="page", hints=ACTS, needs="act",
        confirm=HeldSteps(raw={"mouse": _MOUSE_HELD, "keyboard": _KEYBOARD_HELD},
                          unheld=unheld),
        untrusted=("steps", "snapshot"), render=Render.STEPS,
        answer=returns("ActAnswer", "every step's outcome (a failed step is still 200)"),
        blocked_by=_INPUT, cli=Cli(positional=("actions",)), extra_needs=_act_needs,
        tool_text="Run a batch of actions in order on one tab; stop at the first "
                  "failure. A find step reads the page between actions: its result is "
                  "the find tool's answer (no match is no failure)")
