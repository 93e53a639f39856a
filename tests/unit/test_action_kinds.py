"""One spec per action kind: the routes, /act, the batch runner and the records read it."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from browserd.argfields import parse_args
from browserd.errors import BadRequest, EvalDisabled
from browserd.http.routes import all_routes
from browserd.http.routes.input import ServiceContext
from browserd.records.model import Call, Step, Target
from browserd.records.recorder import RECORDED_PATHS
from browserd.records.replay import LOCATOR_KINDS, SKIPPED_WAITS, replay_plan
from browserd.records.scripts import script
from browserd.records.trace import api_call
from browserd.tabs import actions as inp
from browserd.tabs.actions.kinds import (
    ACTION_KINDS,
    ACTION_SPECS,
    PERSON_WAITS,
    READ_KINDS,
    RECORDINGS,
)
from browserd.tabs.actions.records import RouteWait
from browserd.tabs.locator import ElementTarget


def build(kind: str, **body: Any) -> Any:
    spec = ACTION_SPECS[kind]
    system = SimpleNamespace(settings=SimpleNamespace(evaluate_enabled=True),
                             url_policy=SimpleNamespace(check=lambda url: url))
    return spec.build(parse_args(spec.fields, query={}, body=body), ServiceContext(system))


def test_every_kind_is_a_route_and_an_act_step_with_the_specs_fields() -> None:
    routes = {r.path: r for r in all_routes()}
    assert ACTION_KINDS == inp.ACTION_KINDS
    for kind, spec in ACTION_SPECS.items():
        route = routes[f"/{kind}"]
        names = [f.name for f in route.fields]
        assert [f.name for f in spec.fields] == [
            n for n in names if n not in ("targetId", "snapshot", "profile", "session")], kind
        assert route.summary == spec.summary or kind == "navigate", kind
        # A read (find) is a GET too, like /snapshot; every other kind is input.
        assert route.methods == (("GET", "POST") if kind in READ_KINDS else ("POST",)), kind
        if kind != "navigate":
            assert route.extra_needs is spec.extra_needs, kind
            # A kind that runs beside an open dialog is the one route a dialog lets through.
            assert spec.during_dialog == ("dialog" not in (route.blocked_by or ())), kind
    act = routes["/act"].fields[1].item_schema
    assert act is not None
    steps = {v["title"]: set(v["properties"]) - {"kind"} for v in act["oneOf"]}
    assert steps == {k: {f.name for f in s.step_fields} for k, s in ACTION_SPECS.items()}
    assert not set(PERSON_WAITS) & steps["wait"]
    # The same Field objects, declared once: /find's are the find step's.
    assert routes["/find"].fields[1:] == ACTION_SPECS["find"].fields == \
        ACTION_SPECS["find"].step_fields
    assert routes["/find"].summary == ACTION_SPECS["find"].summary


@pytest.mark.parametrize(("kind", "body", "message"), [
    ("click", {"ref": "e1", "selector": "#a"}, "give exactly one of ref, selector, text"),
    ("click", {"ref": "e1", "modifiers": ["Hyper"]}, "unknown modifier(s): 'Hyper'"),
    ("select", {"ref": "e1", "values": []}, "values must name at least one option"),
    ("press", {"key": "Control+"}, "cannot parse the key chord"),
    ("keyboard", {"action": "down"}, "down needs a key"),
    ("keyboard", {"action": "insertText", "text": "x", "key": "a"}, "takes text, not key"),
    ("type", {"text": "x", "secret": "bank"}, "give text or secret"),
    ("wait", {"url": "**/a", "handoff": True}, "give exactly one of selector, text"),
    ("drag", {"to": {"x": 1, "y": 1}}, "give exactly one of from"),
    ("find", {"exact": True, "root": "#main"}, "give at least one of role, name or text"),
])
def test_a_rule_is_checked_once_with_one_message_for_a_route_and_a_step(
        kind: str, body: dict[str, Any], message: str) -> None:
    with pytest.raises(BadRequest) as info:
        build(kind, **body)
    assert message in info.value.message


def test_records_check_their_own_rules_however_they_are_made() -> None:
    with pytest.raises(BadRequest, match="values must name"):
        inp.Select(target=ElementTarget(ref="e1"), values=())
    with pytest.raises(BadRequest, match="exactly one of ref"):
        inp.Hover(target=ElementTarget())
    with pytest.raises(BadRequest, match="at most one of ref or selector"):
        inp.Upload(files=(), target=ElementTarget(ref="e1", selector="#f"))
    with pytest.raises(BadRequest, match="drop place"):
        inp.Drag(source=ElementTarget(ref="e1"))
    with pytest.raises(BadRequest, match="unknown key"):
        inp.KeyInput(action="up", key="NotAKey")
    with pytest.raises(BadRequest, match="at least one of role, name or text") as info:
        inp.FindElements(root="e3")
    assert info.value.details["field"] == "name"  # FindOptions' own rule and field
    with pytest.raises(BadRequest, match="limit must be at least 1"):
        inp.FindElements(role="status", limit=0)
    assert inp.Press(key="Control+a").key == "Control+a"


def test_a_performer_reads_what_its_checked_record_says() -> None:
    assert inp.Wait(text_gone="Loading").condition == ("textGone", "Loading")
    assert build("wait", loadState="load").condition == ("loadState", "load")
    chord = inp.Press(key="ctrl+a", modifiers=("Shift",)).chord
    assert (chord.modifiers, chord.key.key) == (("Shift", "Control"), "a")


def test_a_kind_builds_its_own_record() -> None:
    bodies = {"click": {"ref": "e1"}, "type": {"text": "x"}, "press": {"key": "Enter"},
              "hover": {"text": "Go"}, "select": {"ref": "e2", "values": ["a"]},
              "wait": {"url": "**/done"}, "navigate": {"url": "https://a.test/"},
              "dialog": {"accept": True}, "mouse": {"action": "move", "x": 1, "y": 2},
              "keyboard": {"action": "down", "key": "Shift"}, "find": {"role": "status"}}
    for kind, body in bodies.items():
        record = build(kind, **body)
        assert isinstance(record, ACTION_SPECS[kind].record) and record.kind == kind, kind


def test_a_wait_only_the_route_runs_is_a_route_wait() -> None:
    assert build("wait", handoff=True) == RouteWait(condition="handoff")
    assert build("wait", tabRequest="r1") == RouteWait(condition="tabRequest", request_id="r1")
    assert build("wait", loadState="load") == inp.Wait(load_state="load")
    spec = ACTION_SPECS["wait"]
    system = SimpleNamespace(settings=SimpleNamespace(evaluate_enabled=False))
    with pytest.raises(EvalDisabled):
        spec.build(parse_args(spec.fields, query={}, body={"text": "x"}),
                   ServiceContext(system))
    assert SKIPPED_WAITS == PERSON_WAITS


def test_every_recorded_kind_is_named_and_written_by_its_own_spec() -> None:
    assert {f"/{kind}" for kind in RECORDINGS if kind not in READ_KINDS} == RECORDED_PATHS
    assert set(ACTION_KINDS) < set(RECORDINGS) and {"scroll", "back", "act"} <= set(RECORDINGS)
    assert {"click", "type", "hover", "select"} == LOCATOR_KINDS
    assert RECORDINGS["drag"].names == ("from", "to")
    assert RECORDINGS["click"].text_names_element and not RECORDINGS["type"].text_names_element
    pay = Target(role="button", name="Pay", exact=True)
    click = Call(kind="click", args={"role": "button", "name": "Pay", "exact": True},
                 targets={"element": pay})
    assert api_call(click)[:3] == ("Frame", "click", "locator.click")
    assert api_call(Call(kind="click", args={"ref": "e1"}))[:3] == (
        "Browserd", "click", "browserd.click")
    assert api_call(Call(kind="teleport", args={}))[:3] == (
        "Browserd", "teleport", "browserd.teleport")
    code = script([Step(index=0, call=click, started_at=0, duration_ms=1, ok=True),
                   Step(index=1, call=Call(kind="teleport", args={}), started_at=0,
                        duration_ms=1, ok=True)], "python")
    assert 'page.get_by_role("button", name="Pay", exact=True).click()' in code
    assert '# step 1: "teleport" has no element to act on' in code


def test_a_find_is_a_read_that_sends_nothing_and_a_record_has_nothing_to_repeat() -> None:
    spec = ACTION_SPECS["find"]
    assert not spec.settles and not spec.during_dialog and not spec.own_timeout
    assert build("find", role="status", root="e7") == inp.FindElements(
        role="status", root="e7", limit=20, settle_ms=spec.fields[-1].default)
    # Recorded as an /act step (its route, a read, is not recorded), by no element.
    assert "/find" not in RECORDED_PATHS and READ_KINDS == ("find",)
    assert RECORDINGS["find"].names == () and not RECORDINGS["find"].locator
    find = Call(kind="find", args={"role": "status", "limit": 20})
    assert api_call(find)[:3] == ("Browserd", "find", "browserd.find")
    act = Step(index=0, call=Call(kind="act", args={}), started_at=0, duration_ms=1, ok=True,
               actions=(Call(kind="click", args={"selector": "#go"},
                             targets={"element": Target(selector="#go")}), find))
    code = script([act], "typescript")
    assert ('  await page.locator("#go").click();\n'
            "  // step 0: a find reads the page; nothing to repeat\n}") in code
    (planned,) = replay_plan([act])
    assert planned.path == "/act" and planned.problem is None
    assert planned.body["actions"][1] == {"kind": "find", "role": "status", "limit": 20}


def test_the_scopes_a_batch_adds_are_its_steps_kinds() -> None:
    (act,) = [r for r in all_routes() if r.path == "/act"]
    assert act.more_needs({"actions": [
        {"kind": "type", "text": "x"}, {"kind": "click", "files": ["a"]},
        {"kind": "type", "secret": "bank"}, {"kind": "upload"}]}) == ("files", "secrets")
    assert ACTION_SPECS["upload"].extra_needs({}) == ("files",)
