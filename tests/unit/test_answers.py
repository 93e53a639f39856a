"""The answers in ``/openapi.json``: every route's 200 and error bodies are typed.

The document is built as the service serves it (:func:`browserd.http.routes.meta.api_document`):
every JSON route declares its answer schema (:attr:`Route.answer`), raw routes
name their content types, every ``$ref`` resolves, and the ``Error`` component is
what :meth:`BrowserdError.to_dict` really sends.
"""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from browserd.errors import BadRequest, NoMatch, Timeout
from browserd.http.answers import returns
from browserd.http.routes import all_routes
from browserd.http.routes.meta import api_document
from browserd.http.schema import ERROR_SCHEMA


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    return api_document(all_routes())


def _validator(doc: dict[str, Any], schema: dict[str, Any]) -> jsonschema.Draft202012Validator:
    """A validator of ``schema`` whose ``#/components/...`` refs resolve against ``doc``."""
    registry: Registry[Any] = Registry().with_resource(
        "urn:browserd:openapi", Resource.from_contents(doc, default_specification=DRAFT202012))
    rooted = {"$ref": "urn:browserd:openapi#" + schema["$ref"][1:]} if "$ref" in schema \
        else schema
    return jsonschema.Draft202012Validator(rooted, registry=registry)


def _operations(doc: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(path, method, op) for path, item in doc["paths"].items()
            for method, op in item.items()]


def test_every_json_route_has_an_answer_schema() -> None:
    missing = [f"{' '.join(r.methods)} {r.path}" for r in all_routes() if r.answer is None]
    assert not missing, f"routes without an answer (declare answer=): {missing}"


def test_an_answer_names_a_component_that_exists() -> None:
    assert returns("Tab").schema == {"$ref": "#/components/schemas/Tab"}
    with pytest.raises(ValueError, match="no answer component 'Tabb'"):
        returns("Tabb")


def test_routes_with_answers_stay_hashable_records() -> None:
    routes = all_routes()
    assert len({hash(route) for route in routes}) == len(routes)


def test_json_answers_are_typed_objects(doc: dict[str, Any]) -> None:
    schemas = doc["components"]["schemas"]
    for path, method, op in _operations(doc):
        content = op["responses"]["200"]["content"]
        if "application/json" not in content or path == "/media/{name}":
            continue
        schema = content["application/json"]["schema"]
        assert set(schema) == {"$ref"}, (method, path, schema)
        target = schemas[schema["$ref"].rsplit("/", 1)[1]]
        assert target["type"] == "object" and target["properties"], (method, path)
        assert target["additionalProperties"] is not False, (method, path)


def test_raw_answers_name_their_content_types(doc: dict[str, Any]) -> None:
    raw = {r.path for r in all_routes() if r.raw_response}
    assert raw >= {"/media/<name>", "/downloads/<id>", "/metrics"}
    for route in all_routes():
        if route.raw_response and route.answer is not None:
            assert "*/*" not in route.answer.media_types and route.answer.media_types
    download = doc["paths"]["/downloads/{id}"]["get"]["responses"]["200"]["content"]
    assert list(download) == ["application/octet-stream"]
    assert list(doc["paths"]["/metrics"]["get"]["responses"]["200"]["content"]) == [
        "text/plain"]


def test_every_component_is_a_valid_schema_and_every_ref_resolves(doc: dict[str, Any]) -> None:
    schemas = doc["components"]["schemas"]
    for schema in schemas.values():
        jsonschema.Draft202012Validator.check_schema(schema)
    refs: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("$ref"), str):
                refs.add(node["$ref"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(doc["paths"])
    walk(schemas)
    names = {ref.removeprefix("#/components/schemas/") for ref in refs}
    assert all(ref.startswith("#/components/schemas/") for ref in refs)
    assert names <= set(schemas), names - set(schemas)
    assert set(schemas) <= names, f"unused components: {set(schemas) - names}"


def test_every_error_status_answers_the_error_shape(doc: dict[str, Any]) -> None:
    for path, method, op in _operations(doc):
        errors = {code: r for code, r in op["responses"].items() if code[0] in "45"}
        assert {"400", "401", "403", "404", "409", "500", "503", "504"} <= set(errors)
        for response in errors.values():
            assert response["content"]["application/json"]["schema"] == {
                "$ref": "#/components/schemas/Error"}, (method, path)
    assert doc["components"]["schemas"]["Error"] is ERROR_SCHEMA


@pytest.mark.parametrize("error", [
    BadRequest("field 'x' is required", field="x"),
    NoMatch("no element matches 'a'", hint="check the selector", selector="a"),
    Timeout("waited", waitedMs=300, uncertain=True),
])
def test_the_error_schema_matches_what_errors_send(doc: dict[str, Any], error: Any) -> None:
    validator = _validator(doc, {"$ref": "#/components/schemas/Error"})
    body = error.to_dict()
    validator.validate(body)
    assert not validator.is_valid({"error": "x"})  # a code is always there
    assert not validator.is_valid({**body, "field": 3})


def test_held_routes_document_the_202(doc: dict[str, Any]) -> None:
    for path in ("/click", "/act", "/eval", "/navigate", "/downloads/{id}"):
        op = next(iter(doc["paths"][path].values()))
        assert op["responses"]["202"]["content"]["application/json"]["schema"] == {
            "$ref": "#/components/schemas/Error"}
    assert "202" not in doc["paths"]["/snapshot"]["get"]["responses"]


def test_operations_say_how_they_are_held_what_is_the_pages_and_how_an_agent_reads_them(
        doc: dict[str, Any]) -> None:
    paths = doc["paths"]
    assert paths["/click"]["post"]["x-browserd-confirm"] == {"kind": "click"}
    assert paths["/back"]["post"]["x-browserd-confirm"] == {"kind": "navigate"}
    assert paths["/mouse"]["post"]["x-browserd-confirm"] == {
        "byAction": {"down": "click", "click": "click"}}
    act = paths["/act"]["post"]
    assert act["x-browserd-confirm"]["steps"] is True
    assert act["x-browserd-confirm"]["byAction"]["keyboard"]["insertText"] == "type"
    # A find step reads; a hover or a wait step is held no more than /hover or /wait.
    assert act["x-browserd-confirm"]["unheld"] == ["find", "hover", "wait"]
    assert act["x-browserd-untrusted"] == ["steps", "snapshot"]  # (a find step reads text)
    assert paths["/downloads/{id}"]["get"]["x-browserd-confirm"] == {"download": "id"}
    assert "x-browserd-confirm" not in paths["/hover"]["post"]  # no rule holds a hover
    assert paths["/snapshot"]["get"]["x-browserd-untrusted"] == [
        "title", "url", "text", "diff", "nodes"]
    assert "x-browserd-untrusted" not in paths["/cookies"]["get"]  # a data format as it is
    # The person's own pages, a download's page-given name and URL, a held action's answer.
    assert paths["/tabs/offerable"]["get"]["x-browserd-untrusted"] == ["pages"]
    assert paths["/tabs/offer"]["post"]["x-browserd-untrusted"] == ["title", "url"]
    assert paths["/wait"]["post"]["x-browserd-untrusted"] == ["download", "result"]
    assert (paths["/snapshot"]["post"]["x-browserd-render"], act["x-browserd-render"],
            paths["/status"]["get"]["x-browserd-render"]) == ("snapshot", "steps", "fields")
    assert "x-browserd-render" not in paths["/media/{name}"]["get"]  # no tool


def test_act_actions_are_typed_per_kind(doc: dict[str, Any]) -> None:
    body = doc["paths"]["/act"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    items = body["properties"]["actions"]["items"]
    kinds = {variant["properties"]["kind"]["const"] for variant in items["oneOf"]}
    assert kinds >= {"click", "type", "press", "hover", "select", "wait", "navigate",
                     "dialog", "upload", "drag", "mouse", "keyboard"}
    validator = jsonschema.Draft202012Validator(items)
    assert validator.is_valid({"kind": "click", "selector": "#go", "timeoutMs": 500})
    assert validator.is_valid({"kind": "type", "ref": "e3", "text": "hi", "submit": True})
    assert not validator.is_valid({"kind": "click", "url": "x"})  # a field of another kind
    assert not validator.is_valid({"kind": "press"})  # key is required
    assert not validator.is_valid({"kind": "wait", "download": True})  # /wait's alone
    assert not validator.is_valid({"kind": "teleport"})


def test_a_click_answer_is_checked_against_its_shape(doc: dict[str, Any]) -> None:
    schema = doc["paths"]["/click"]["post"]["responses"]["200"]["content"][
        "application/json"]["schema"]
    validator = _validator(doc, schema)
    answer = {"targetId": "AB12", "ok": True, "method": "mouse",
              "effects": {"navigated": "http://127.0.0.1/next", "loadState": "load",
                          "newTabs": ["CD34"]}}
    validator.validate(answer)
    validator.validate({**answer, "later": "a field added later"})
    assert not validator.is_valid({k: v for k, v in answer.items() if k != "effects"})
    assert not validator.is_valid({**answer, "effects": {"navigated": 3}})
    assert not validator.is_valid({**answer, "method": "telepathy"})
