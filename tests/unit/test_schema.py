"""The route table: argument validation and the OpenAPI document made from it."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

from browserd.errors import BadRequest
from browserd.http.schema import Field, Route, check_value, openapi, parse_args


async def handler(system: Any, args: dict[str, Any]) -> dict[str, Any]:
    return {}


TARGET = Field(name="targetId", type="string", max_length=200)
LIMIT = Field(name="limit", type="integer", minimum=1, maximum=100, default=20)
FIELDS = (
    TARGET,
    LIMIT,
    Field(name="url", type="string", max_length=10),
    Field(name="ratio", type="number", minimum=0, maximum=1),
    Field(name="interactive", type="boolean", default=False),
    Field(name="format", type="string", enum=("aria", "read"), default="aria"),
    Field(name="ids", type="array", items="integer", max_length=3),
    Field(name="names", type="array", items="string"),
    Field(name="flags", type="array", items="boolean"),
    Field(name="weights", type="array", items="number"),
    Field(name="options", type="object"),
)


def parse(body: Any = None, **query: str) -> dict[str, Any]:
    return parse_args(FIELDS, query=query, body=body)


def bad(body: Any = None, **query: str) -> BadRequest:
    with pytest.raises(BadRequest) as info:
        parse(body, **query)
    assert info.value.status == 400
    return info.value


# -- parse_args ------------------------------------------------------------------


def test_defaults_when_absent() -> None:
    out = parse()
    assert set(out) == {f.name for f in FIELDS}
    assert out["limit"] == 20 and out["interactive"] is False and out["format"] == "aria"
    assert out["targetId"] is None


def test_required_missing_names_the_field() -> None:
    fields = (Field(name="url", type="string", required=True), LIMIT)
    with pytest.raises(BadRequest) as info:
        parse_args(fields, query={}, body={"limit": 3})
    assert info.value.details["field"] == "url"
    assert "'url'" in str(info.value) and info.value.to_dict()["field"] == "url"


def test_required_null_is_refused() -> None:
    fields = (Field(name="url", type="string", required=True),)
    with pytest.raises(BadRequest) as info:
        parse_args(fields, query={}, body={"url": None})
    assert info.value.details["field"] == "url"


def test_optional_null_means_default() -> None:
    assert parse({"limit": None})["limit"] == 20


def test_unknown_fields_are_listed() -> None:
    err = bad({"limt": 1, "zzz": 2}, targetid="x")
    assert "limt" in str(err) and "targetid" in str(err) and "zzz" in str(err)
    assert err.details["field"] == "limt"
    assert "limit" in err.hint and "targetId" in err.hint


def test_unknown_field_with_no_fields() -> None:
    with pytest.raises(BadRequest) as info:
        parse_args((), query={}, body={"x": 1})
    assert "no fields" in info.value.hint


@pytest.mark.parametrize("body", [[], "text", 3, True])
def test_body_must_be_an_object(body: Any) -> None:
    bad(body)


@pytest.mark.parametrize(
    ("name", "value"),
    [("limit", True), ("limit", False), ("limit", 1.5), ("limit", "5"), ("limit", [5]),
     ("ratio", True), ("ratio", "0.5"),
     ("interactive", "true"), ("interactive", 1), ("interactive", 0),
     ("targetId", 5), ("targetId", ["a"]), ("targetId", {"a": 1}),
     ("ids", "1,2"), ("ids", {"0": 1}), ("options", [1]), ("options", "x")],
)
def test_type_errors(name: str, value: Any) -> None:
    err = bad({name: value})
    assert err.details["field"] == name and f"'{name}'" in str(err)


def test_good_types() -> None:
    out = parse({"limit": 5, "ratio": 1, "interactive": True, "targetId": "AB12",
                 "ids": [1, 2], "names": ["a"], "flags": [True, False], "weights": [1, 0.5],
                 "options": {"x": 1}})
    assert out["limit"] == 5 and out["ratio"] == 1 and out["interactive"] is True
    assert out["ids"] == [1, 2] and out["flags"] == [True, False] and out["weights"] == [1, 0.5]
    assert out["options"] == {"x": 1}


def test_enum() -> None:
    assert parse({"format": "read"})["format"] == "read"
    err = bad({"format": "html"})
    assert err.details["field"] == "format" and "aria" in str(err) and "read" in str(err)


@pytest.mark.parametrize(("name", "value"), [("limit", 0), ("limit", 101), ("limit", -5),
                                             ("ratio", -0.01), ("ratio", 1.5)])
def test_minimum_maximum(name: str, value: float) -> None:
    assert bad({name: value}).details["field"] == name


def test_bounds_are_inclusive() -> None:
    assert parse({"limit": 1, "ratio": 0})["limit"] == 1
    assert parse({"limit": 100, "ratio": 1.0})["ratio"] == 1.0


def test_max_length() -> None:
    assert parse({"url": "x" * 10})["url"] == "x" * 10
    assert bad({"url": "x" * 11}).details["field"] == "url"
    assert bad({"ids": [1, 2, 3, 4]}).details["field"] == "ids"


@pytest.mark.parametrize(("name", "value"), [
    ("ids", [1, True]), ("ids", [1, "2"]), ("ids", [1.5]), ("names", ["a", 1]),
    ("names", [None]), ("flags", [True, 1]), ("weights", [1, False]), ("weights", ["1"]),
])
def test_array_item_types(name: str, value: list[Any]) -> None:
    assert bad({name: value}).details["field"] == name


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_numbers_are_refused(value: float) -> None:
    assert bad({"ratio": value}).details["field"] == "ratio"


# -- query strings -----------------------------------------------------------------


@pytest.mark.parametrize(("raw", "expected"), [
    ("1", True), ("true", True), ("TRUE", True), ("yes", True), ("on", True),
    ("0", False), ("false", False), ("No", False), ("off", False),
])
def test_query_booleans(raw: str, expected: bool) -> None:
    assert parse(interactive=raw)["interactive"] is expected


@pytest.mark.parametrize("raw", ["", "maybe", "2", "truthy"])
def test_query_bad_booleans(raw: str) -> None:
    assert bad(interactive=raw).details["field"] == "interactive"


def test_query_numbers() -> None:
    assert parse(limit="42")["limit"] == 42
    assert parse(ratio="0.25")["ratio"] == 0.25
    assert parse(ratio="1")["ratio"] == 1.0
    for raw in ("abc", "4.5", ""):
        assert bad(limit=raw).details["field"] == "limit"
    assert bad(limit="0").details["field"] == "limit"  # range still applies
    assert bad(limit="101").details["field"] == "limit"


@pytest.mark.parametrize("raw", ["nan", "NaN", "inf", "-Infinity"])
def test_query_non_finite_numbers(raw: str) -> None:
    assert bad(ratio=raw).details["field"] == "ratio"


def test_query_arrays() -> None:
    assert parse(names="a,b,,c")["names"] == ["a", "b", "c"]
    assert parse(names="")["names"] == []
    assert parse(ids="1,2")["ids"] == [1, 2]
    assert parse(flags="true,0")["flags"] == [True, False]
    assert parse(weights="1,0.5")["weights"] == [1.0, 0.5]
    assert bad(ids="1,x").details["field"] == "ids"
    assert bad(ids="1,2,3,4").details["field"] == "ids"  # max_length on the list


def test_query_string_stays_text() -> None:
    assert parse(targetId="123")["targetId"] == "123"
    assert parse(format="read")["format"] == "read"
    assert bad(format="nope").details["field"] == "format"


def test_body_wins_over_query() -> None:
    out = parse({"limit": 5, "interactive": False}, limit="7", interactive="true")
    assert out["limit"] == 5 and out["interactive"] is False
    assert parse({"limit": 5}, limit="not a number")["limit"] == 5
    out = parse({"limit": 5}, targetId="ABCD")
    assert out["targetId"] == "ABCD" and out["limit"] == 5


def test_check_value_directly() -> None:
    assert check_value(LIMIT, None) == 20
    with pytest.raises(BadRequest):
        check_value(LIMIT, True)


# -- openapi ---------------------------------------------------------------------

ROUTES = [
    Route(path="/healthz", methods=("GET",), handler=handler, auth=False, tag="service",
          fields=(Field(name="challenge", type="string", max_length=128),)),
    Route(path="/snapshot", methods=("GET",), handler=handler, fields=FIELDS, summary="snap"),
    Route(path="/screenshot", methods=("GET", "POST"), handler=handler,
          fields=(TARGET, Field(name="fullPage", type="boolean", default=False))),
    Route(path="/navigate", methods=("POST",), handler=handler,
          fields=(TARGET, Field(name="url", type="string", required=True, max_length=8192),
                  Field(name="timeoutMs", type="integer", minimum=1))),
    Route(path="/stop", methods=("POST",), handler=handler),
    Route(path="/tabs/<targetId>", methods=("DELETE",), handler=handler,
          path_params=("targetId",), fields=(Field(name="targetId", type="string",
                                                   required=True),)),
    Route(path="/media/<name>", methods=("GET",), handler=handler, raw_response=True,
          path_params=("name",), fields=(Field(name="name", type="string", required=True),)),
]


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    return openapi(ROUTES, version="1.2.3")


def op(doc: dict[str, Any], path: str, method: str) -> dict[str, Any]:
    result: dict[str, Any] = doc["paths"][path][method]
    return result


def test_document_header(doc: dict[str, Any]) -> None:
    assert doc["openapi"].startswith("3.1")
    assert doc["info"]["version"] == "1.2.3"
    assert doc["security"] == [{"bearer": []}]
    assert doc["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"


def test_every_route_and_method_appears(doc: dict[str, Any]) -> None:
    expected = {("/healthz", "get"), ("/snapshot", "get"), ("/screenshot", "get"),
                ("/screenshot", "post"), ("/navigate", "post"), ("/stop", "post"),
                ("/tabs/{targetId}", "delete"), ("/media/{name}", "get")}
    seen = {(path, method) for path, item in doc["paths"].items() for method in item}
    assert seen == expected
    ids = [o["operationId"] for item in doc["paths"].values() for o in item.values()]
    assert len(ids) == len(set(ids))


def test_get_fields_are_query_parameters(doc: dict[str, Any]) -> None:
    o = op(doc, "/snapshot", "get")
    assert "requestBody" not in o
    params = {p["name"]: p for p in o["parameters"]}
    assert set(params) == {f.name for f in FIELDS if f.type != "object"}
    assert all(p["in"] == "query" for p in params.values())
    limit = params["limit"]
    assert limit["required"] is False
    assert limit["schema"] == {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}
    assert params["format"]["schema"]["enum"] == ["aria", "read"]
    assert params["url"]["schema"]["maxLength"] == 10
    ids = params["ids"]
    assert ids["schema"]["items"] == {"type": "integer"}
    assert (ids["style"], ids["explode"]) == ("form", False)  # ?ids=1,2 is what parse_args reads
    assert "style" not in limit


def test_post_fields_are_a_closed_json_body(doc: dict[str, Any]) -> None:
    o = op(doc, "/navigate", "post")
    assert "parameters" not in o
    body = o["requestBody"]
    assert body["required"] is True
    schema = body["content"]["application/json"]["schema"]
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert set(schema["properties"]) == {"targetId", "url", "timeoutMs"}
    assert schema["required"] == ["url"]
    assert schema["properties"]["url"] == {"type": "string", "maxLength": 8192}


def test_same_route_get_and_post(doc: dict[str, Any]) -> None:
    get, post = op(doc, "/screenshot", "get"), op(doc, "/screenshot", "post")
    assert {p["name"] for p in get["parameters"]} == {"targetId", "fullPage"}
    schema = post["requestBody"]["content"]["application/json"]["schema"]
    assert set(schema["properties"]) == {"targetId", "fullPage"} and schema["required"] == []
    assert post["requestBody"]["required"] is False


def test_post_without_fields_has_no_body(doc: dict[str, Any]) -> None:
    o = op(doc, "/stop", "post")
    assert "requestBody" not in o and "parameters" not in o


def test_healthz_needs_no_auth(doc: dict[str, Any]) -> None:
    assert op(doc, "/healthz", "get")["security"] == []
    for path, item in doc["paths"].items():
        for method, o in item.items():
            if path != "/healthz":
                assert "security" not in o, (path, method)  # inherits the bearer requirement


def test_path_params(doc: dict[str, Any]) -> None:
    o = op(doc, "/tabs/{targetId}", "delete")
    assert o["parameters"] == [{"name": "targetId", "in": "path", "required": True,
                                "schema": {"type": "string", "minLength": 1}}]
    assert "requestBody" not in o  # the path param is not also a body field
    m = op(doc, "/media/{name}", "get")
    assert [(p["name"], p["in"]) for p in m["parameters"]] == [("name", "path")]
    assert "*/*" in m["responses"]["200"]["content"]


def test_error_responses(doc: dict[str, Any]) -> None:
    responses = op(doc, "/navigate", "post")["responses"]
    for code in ("400", "401", "404", "409", "429", "500", "502", "503", "504"):
        schema = responses[code]["content"]["application/json"]["schema"]
        assert schema == {"$ref": "#/components/schemas/Error"}
    assert doc["components"]["schemas"]["Error"]["required"] == ["error", "code"]


def _check_templates(document: dict[str, Any]) -> None:
    for path, item in document["paths"].items():
        assert "<" not in path and ">" not in path, path
        templated = re.findall(r"{([^{}]*)}", path)
        assert re.sub(r"{[^{}]*}", "", path).count("{") == 0, path
        assert re.sub(r"{[^{}]*}", "", path).count("}") == 0, path
        for method, o in item.items():
            declared = [p["name"] for p in o.get("parameters", []) if p["in"] == "path"]
            assert sorted(declared) == sorted(templated), (path, method)


def test_path_templates_are_well_formed(doc: dict[str, Any]) -> None:
    _check_templates(doc)


def test_the_real_route_table_renders() -> None:
    from browserd.http.routes import all_routes

    routes = all_routes()
    document = openapi(routes, version="0")
    _check_templates(document)
    ids = [o["operationId"] for item in document["paths"].values() for o in item.values()]
    assert len(ids) == len(set(ids))
    for route in routes:
        path = re.sub(r"<(?:[^<>:]+:)?([^<>:]+)>", r"{\1}", route.path)
        for method in route.methods:
            assert method.lower() in document["paths"][path]
