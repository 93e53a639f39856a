"""S10: schemathesis against the live ``/openapi.json`` (RELIABILITY.md), bounded for CI.

A private instance (real Chromium) serves the schema; every operation gets a
fixed, derandomized budget of generated cases:

- with the token, schema-valid input: no server error, and the response
  conforms to the document (status code listed, JSON content type, body
  shape: the typed answer schema of each route, and the ``Error`` schema
  of every error; ``tests/unit/test_answers.py`` keeps them declared). The
  one 5xx the contract allows is 504 TIMEOUT from an operation with a
  ``timeoutMs`` deadline (e.g. ``/wait`` for a selector that never
  appears); every case carries a deadline of at most 300 ms so such cases
  stay fast (a generated one is capped; where none was generated, 300 ms is
  added, since the server's default would be 15-30 s).
- with the token, schema-violating input: a 4xx (schemathesis'
  ``negative_data_rejection``), never a 5xx.
- without the token: every generated call, ``POST /stop`` included, is 401.

The budget per operation is small in the suite (4 valid, 2 invalid, 1
anonymous case); ``BROWSERD_FUZZ=full`` runs the fuller one (10, 5, 3)::

    BROWSERD_FUZZ=full pytest tests/integration/test_schemathesis.py

``POST /stop`` and ``POST /start`` are left out of the token runs: they stop
or relaunch the browser (``/start {"headless": false}`` relaunches it
headful, which fails on a machine without a display), turning later cases
into 502/503.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx
import pytest
import requests
from supervision.harness import LOOPBACK_TLS

from browserd.errors import BadRequest
from browserd.http.routes import all_routes
from browserd.http.schema import parse_args
from tests.conftest import ServiceInfo, start_service, stop_service

pytestmark = pytest.mark.chromium

FULL = os.environ.get("BROWSERD_FUZZ") == "full"
POSITIVE_EXAMPLES = 10 if FULL else 4
NEGATIVE_EXAMPLES = 5 if FULL else 2
ANONYMOUS_EXAMPLES = 3 if FULL else 1
TIMEOUT_CAP_MS = 300
NOT_IN_TOKEN_RUNS = {"POST /stop", "POST /start"}
OPEN_OPERATIONS = {"GET /healthz"}


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceInfo]:
    info = start_service(tmp_path_factory.mktemp("fuzz"))
    yield info
    stop_service(info)


def _cap_timeouts(node: Any) -> None:
    """Generated ``timeoutMs`` values stay small, so a case that waits waits briefly."""
    if isinstance(node, dict):
        props = node.get("properties")
        if isinstance(props, dict) and isinstance(props.get("timeoutMs"), dict):
            props["timeoutMs"]["maximum"] = TIMEOUT_CAP_MS
            props["timeoutMs"].pop("default", None)
        if node.get("name") == "timeoutMs" and isinstance(node.get("schema"), dict):
            node["schema"]["maximum"] = TIMEOUT_CAP_MS
        for value in node.values():
            _cap_timeouts(value)
    elif isinstance(node, list):
        for value in node:
            _cap_timeouts(value)


def _load(info: ServiceInfo) -> tuple[dict[str, Any], Any]:
    import schemathesis  # here, not at the top: collecting this file stays cheap

    raw = httpx.get(f"{info.base_url}/openapi.json", headers=info.headers, timeout=10,
                    verify=LOOPBACK_TLS).json()
    _cap_timeouts(raw)
    return raw, schemathesis.openapi.from_dict(raw)


def _has_deadline(raw: dict[str, Any], method: str, path: str) -> bool:
    return "timeoutMs" in repr(raw["paths"][path][method.lower()])


def _run(operation: Any, mode: Any, examples: int, check: Callable[[Any], None]) -> None:
    from hypothesis import HealthCheck, Phase, given, settings

    @settings(max_examples=examples, deadline=None, derandomize=True, database=None,
              phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck),
              print_blob=False)
    @given(case=operation.as_strategy(generation_mode=mode))
    def run(case: Any) -> None:
        check(case)

    run()


def _valid_on_the_wire(case: Any, response: Any) -> bool:
    """Did the request *as sent* pass browserd's own validation?

    A schema-violating value can serialise into a valid one (an array of one
    valid enum value becomes ``?format=text``); such a case is not invalid on
    the wire, and accepting it is right. Judged by the very validator the
    service uses, on the sent query string and body.
    """
    request = response.request
    parts = urlsplit(request.url)
    template = case.operation.path.replace("{", "<").replace("}", ">")
    route = next((r for r in all_routes() if r.path == template
                  and case.method.upper() in r.methods), None)
    if route is None:
        return False
    query: dict[str, str] = {}
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key in query:
            return False  # repeated fields are refused
        query[key] = value
    try:
        body = json.loads(request.body) if request.body else None
        parse_args(route.fields, query=query, body=body)
    except (BadRequest, ValueError):
        return False
    return True


def _assert_no_cors(response: Any) -> None:
    cors = [k for k in response.headers if k.lower().startswith("access-control-")]
    assert not cors, cors


def _label(operation: Any) -> str:
    return f"{operation.method.upper()} {operation.path}"


def test_s10_generated_requests_with_and_without_the_token(fuzzed: ServiceInfo) -> None:
    from schemathesis import GenerationMode
    from schemathesis.specs.openapi.checks import (
        content_type_conformance,
        negative_data_rejection,
        response_schema_conformance,
        status_code_conformance,
    )

    conformance = [status_code_conformance, content_type_conformance,
                   response_schema_conformance]
    raw, schema = _load(fuzzed)
    operations = [result.ok() for result in schema.get_all_operations()]
    labels = {_label(op) for op in operations}
    assert {"POST /eval", "POST /tabs/open", "POST /stop", "GET /tabs"} <= labels
    auth = {"Authorization": f"Bearer {fuzzed.token}"}
    failures: list[str] = []
    calls = {"token": 0, "anonymous": 0}
    before = httpx.get(f"{fuzzed.base_url}/status", headers=auth, timeout=10,
                       verify=LOOPBACK_TLS).json()
    with requests.Session() as session:

        def with_token(case: Any, *, bad_input: bool = False) -> None:
            calls["token"] += 1
            deadline = _has_deadline(raw, case.method, case.path)
            if deadline and isinstance(case.body, dict) and "timeoutMs" not in case.body:
                case.body["timeoutMs"] = TIMEOUT_CAP_MS  # the default would be 15-30 s
            response = case.call(base_url=fuzzed.base_url, session=session, headers=auth,
                                 timeout=15)
            status = response.status_code
            _assert_no_cors(response)
            deadline_ok = status == 504 and deadline and response.json().get("code") == "TIMEOUT"
            assert status < 500 or deadline_ok, (
                f"{_label(case.operation)} -> {status} {response.text[:300]}\n"
                f"{case.as_curl_command(headers=auth)}")
            checks = list(conformance)
            if bad_input and not _valid_on_the_wire(case, response):
                checks.append(negative_data_rejection)
            case.validate_response(response, checks=checks, headers=auth)

        def with_token_bad_input(case: Any) -> None:
            with_token(case, bad_input=True)

        def anonymous(case: Any) -> None:
            calls["anonymous"] += 1
            if case.headers:  # the generator may invent credentials for the bearer scheme
                case.headers = {k: v for k, v in case.headers.items()
                                if k.lower() != "authorization"}
            response = case.call(base_url=fuzzed.base_url, session=session, timeout=15)
            assert "authorization" not in {k.lower() for k in response.request.headers}
            _assert_no_cors(response)
            assert response.status_code == 401, (
                f"{_label(case.operation)} without a token -> {response.status_code}")
            assert response.json()["code"] == "UNAUTHORIZED"

        for operation in operations:
            label = _label(operation)
            runs: list[tuple[GenerationMode, int, Callable[[Any], None]]] = []
            if label not in NOT_IN_TOKEN_RUNS:
                runs += [(GenerationMode.POSITIVE, POSITIVE_EXAMPLES, with_token),
                         (GenerationMode.NEGATIVE, NEGATIVE_EXAMPLES, with_token_bad_input)]
            if label not in OPEN_OPERATIONS:
                runs.append((GenerationMode.POSITIVE, ANONYMOUS_EXAMPLES, anonymous))
            for mode, examples, check in runs:
                try:
                    _run(operation, mode, examples, check)
                except Exception as exc:
                    failures.append(f"{label} [{mode.value}, {check.__name__}]: "
                                    f"{type(exc).__name__}: {str(exc)[:1500]}")
    assert not failures, "\n\n".join(failures)
    assert calls["token"] >= 5 * len(operations) and calls["anonymous"] >= len(operations) - 1
    after = httpx.get(f"{fuzzed.base_url}/status", headers=auth, timeout=10,
                      verify=LOOPBACK_TLS).json()
    assert after["state"] == "running" and after["pid"] == before["pid"], (
        "the browser was stopped or restarted during the fuzzing", after["lastError"])


def test_s10_schema_is_served_only_with_the_token(fuzzed: ServiceInfo) -> None:
    r = httpx.get(f"{fuzzed.base_url}/openapi.json", timeout=10, verify=LOOPBACK_TLS)
    assert r.status_code == 401
    r = httpx.get(f"{fuzzed.base_url}/openapi.json", headers=fuzzed.headers, timeout=10,
                  verify=LOOPBACK_TLS)
    assert r.status_code == 200 and r.json()["openapi"].startswith("3.")
