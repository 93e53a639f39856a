"""A role/name locator ``within`` one container: its rules, its schema, and how a record
keeps it and writes it out again (script, trace, replay)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import pytest

from browserd.argfields import parse_args
from browserd.errors import BadRequest
from browserd.http.catalog import catalog
from browserd.http.routes import all_routes
from browserd.http.routes.input import ServiceContext
from browserd.records.model import Call, Step, Target
from browserd.records.playwright import locator_expression, playwright_selector
from browserd.records.recorder import describe_call
from browserd.records.replay import replay_plan
from browserd.records.trace import api_call
from browserd.tabs import actions as inp
from browserd.tabs.actions.kinds import ACTION_SPECS
from browserd.tabs.actor import TabActor
from browserd.tabs.locator import ElementTarget
from browserd.tabs.state import RefRecord

ROW_BOB = {"role": "row", "name": "Bob"}
EDIT = {"role": "link", "name": "Edit"}


def build(kind: str, **body: Any) -> Any:
    spec = ACTION_SPECS[kind]
    system = SimpleNamespace(settings=SimpleNamespace(evaluate_enabled=True))
    return spec.build(parse_args(spec.fields, query={}, body=body), ServiceContext(system))


def test_a_locator_within_a_container_is_built_for_every_locator_kind() -> None:
    click = build("click", **EDIT, within=ROW_BOB)
    assert click.target == ElementTarget(role="link", name="Edit",
                                         within=ElementTarget(role="row", name="Bob"))
    typed = build("type", role="textbox", text="x", within={"selector": "form#a", "nth": None})
    assert typed.target.within == ElementTarget(selector="form#a")
    assert build("hover", name="Edit", within={"ref": "e4"}).target.within.ref == "e4"
    chosen = build("select", role="combobox", values=["a"],
                   within={"role": "row", "name": "Bob", "exact": True, "nth": 1})
    assert chosen.target.within == ElementTarget(role="row", name="Bob", exact=True, nth=1)


@pytest.mark.parametrize(("body", "message"), [
    ({"ref": "e1", "within": ROW_BOB}, "within goes with a role/name locator, not with ref"),
    ({"selector": "a", "within": ROW_BOB}, "not with selector"),
    ({"text": "Edit", "within": ROW_BOB}, "not with text"),
    ({"within": ROW_BOB}, "within goes with a role/name locator"),
    ({**EDIT, "within": {}}, "within: give exactly one of ref, selector or role/name"),
    ({**EDIT, "within": {"ref": "e1", "role": "row"}}, "(got ref, role/name)"),
    ({**EDIT, "within": {"selector": "tr", "nth": 1}}, "within.nth (0 or more) goes with"),
    ({**EDIT, "within": {"exact": True}}, "within: give exactly one of"),
    # Its own fields only (no text, no within of its own), each typed.
    ({**EDIT, "within": {"text": "Bob"}}, "unknown field(s) text"),
    ({**EDIT, "within": {**ROW_BOB, "within": {"ref": "e1"}}}, "unknown field(s) within"),
    ({**EDIT, "within": {"name": 7}}, "field 'name' must be a string"),
    ({**EDIT, "within": {"role": "row", "nth": -1}}, "field 'nth' must be ≥ 0"),
    ({**EDIT, "within": "row Bob"}, "field 'within' must be a object"),
])
def test_within_is_a_locators_one_container_or_a_400_naming_it(
        body: dict[str, Any], message: str) -> None:
    for kind in ("click", "hover"):
        with pytest.raises(BadRequest) as info:
            build(kind, **body)
        assert message in info.value.message
        assert info.value.details["field"] == "within"
        assert info.value.hint or "must be a object" in message


def test_a_record_checks_within_however_it_is_made() -> None:
    row = ElementTarget(role="row", name="Bob")
    with pytest.raises(BadRequest, match="not by text, and with no within of its own"):
        inp.Click(target=ElementTarget(name="Edit", within=ElementTarget(text="Bob")))
    with pytest.raises(BadRequest, match="not by text, and with no within of its own"):
        inp.Hover(target=ElementTarget(name="Edit", within=ElementTarget(role="row", within=row)))
    with pytest.raises(BadRequest, match="not with ref"):
        inp.Hover(target=ElementTarget(ref="e1", within=row))
    inp.Click(target=ElementTarget(name="Edit", within=row))


def test_the_schema_of_within_is_a_typed_object_everywhere_it_is_shown() -> None:
    (click,) = [r for r in all_routes() if r.path == "/click"]
    (within,) = [f for f in click.fields if f.name == "within"]
    schema = within.schema()
    assert schema["additionalProperties"] is False
    assert set(schema["properties"]) == {"ref", "selector", "role", "name", "exact", "nth"}
    assert schema["properties"]["nth"]["minimum"] == 0
    assert all(p.get("description") for p in schema["properties"].values())
    tool = catalog()["click"].input_schema()["properties"]["within"]
    assert tool["properties"]["role"]["type"] == "string"
    (act,) = [r for r in all_routes() if r.path == "/act"]
    item = act.fields[1].item_schema
    assert item is not None
    [click_step] = [v for v in item["oneOf"] if v["title"] == "click"]
    assert click_step["properties"]["within"]["additionalProperties"] is False


# -- records -------------------------------------------------------------------------

IN_ROW = Target(role="link", name="Edit", within=Target(role="row", name="Bob"))


def test_a_target_keeps_its_container_through_json() -> None:
    target = Target(role="link", name="Edit", nth=1,
                    within=Target(ref="e4", role="row", name="Bob 3", exact=True))
    data = target.to_json()
    assert data == {"role": "link", "name": "Edit", "nth": 1,
                    "within": {"ref": "e4", "role": "row", "name": "Bob 3", "exact": True}}
    assert Target.from_json(data) == target
    assert Target.from_json({"name": "x", "within": "junk"}) == Target(name="x")


def test_the_recorder_names_the_container_as_it_names_an_element() -> None:
    refs = {"e4": RefRecord(ref="e4", frame_id="F", loader_id="L", session_id=None,
                            role="row", name="Bob 3 Edit")}
    tab = cast(TabActor, SimpleNamespace(refs=SimpleNamespace(get=refs.get)))
    call = describe_call(tab, "click", {**EDIT, "within": {"ref": "e4"}})
    assert call.targets["element"] == Target(
        role="link", name="Edit", within=Target(ref="e4", role="row", name="Bob 3 Edit",
                                                exact=True))
    call = describe_call(tab, "click", {**EDIT, "within": {"selector": "#orders"}})
    assert call.targets["element"].within == Target(selector="#orders")


def test_a_script_chains_the_locator_on_its_containers() -> None:
    assert locator_expression(IN_ROW, "python") == \
        'page.get_by_role("row", name="Bob").get_by_role("link", name="Edit")'
    assert locator_expression(IN_ROW, "typescript") == \
        'page.getByRole("row", { name: "Bob" }).getByRole("link", { name: "Edit" })'
    nth = Target(role="link", name="Edit", nth=1, within=Target(selector="tr.b", nth=0))
    assert locator_expression(nth, "python") == \
        'page.locator("tr.b").nth(0).get_by_role("link", name="Edit").nth(1)'
    # A container only a ref named (never listed): no locator at all, not a wrong one.
    assert locator_expression(Target(name="Edit", role="link", within=Target(ref="e4")),
                              "python") is None


def test_a_trace_selector_chains_with_the_container_first() -> None:
    assert playwright_selector(IN_ROW) == \
        'internal:role=row[name="Bob"i] >> internal:role=link[name="Edit"i]'
    assert playwright_selector(Target(role="link", within=Target(ref="e4"))) is None
    click = Call(kind="click", args={**EDIT, "within": ROW_BOB}, targets={"element": IN_ROW})
    _cls, _method, _api, params = api_call(click)
    assert params == {"selector": playwright_selector(IN_ROW)}


def test_a_replay_names_the_container_as_it_names_an_element() -> None:
    by_ref = Target(role="link", name="Edit", within=Target(ref="e4", role="row",
                                                             name="Bob 3", exact=True))
    steps = [Step(index=i, call=Call(kind="click", args={**EDIT, "within": {"ref": "e4"}},
                                     targets={"element": t}),
                  started_at=0, duration_ms=1, ok=True)
             for i, t in enumerate((IN_ROW, by_ref, Target(role="link", name="Edit",
                                                           within=Target(ref="e9"))))]
    plan = replay_plan(steps)
    assert plan[0].body == {**EDIT, "exact": False, "within": {**ROW_BOB, "exact": False}}
    assert plan[1].body["within"] == {"role": "row", "name": "Bob 3", "exact": True}
    assert plan[2].problem == "click named its element's container (within) by ref only"
