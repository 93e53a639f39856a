"""What every route answers: the one table of answer schemas of ``/openapi.json``.

:data:`ANSWERS` maps each route — by its path and its first method (a route
that takes GET and POST alike is listed under GET) — to the component its
200 answer is (:mod:`browserd.http.answers_page`,
:mod:`browserd.http.answers_service`, :mod:`browserd.http.answers_records`), or to
the content types of a raw answer (a media file, a download, the metrics text). :func:`with_answers`
puts them on the routes and :func:`components` is the document's
``components/schemas``; every route's error statuses answer the ``Error``
component (:data:`browserd.http.schema.ERROR_SCHEMA`).

A route missing here is served all the same (its answer reads as "an
object"); ``tests/unit/test_answers.py`` fails until it is listed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs

from .answers_json import ref
from .answers_page import PAGE_SCHEMAS
from .answers_records import RECORD_SCHEMAS
from .answers_service import SERVICE_SCHEMAS
from .confirmations import ROUTE_KINDS
from .schema import Answer, Route

__all__ = ["ANSWERS", "components", "with_answers"]

#: The routes a ``confirm`` rule can hold (202 CONFIRMATION_REQUIRED).
_HELD = frozenset({*ROUTE_KINDS, "/act", "/downloads/<id>"})


def _json(component: str, description: str = "OK") -> Answer:
    return Answer(schema=ref(component), description=description)


_MEDIA_TYPES = ("image/png", "image/jpeg", "application/pdf", "application/json")

#: (path, first method) → the answer. One entry per route of the table.
ANSWERS: dict[tuple[str, str], Answer] = {
    # service
    ("/healthz", "GET"): _json("Health"),
    ("/", "GET"): _json("Status"),
    ("/status", "GET"): _json("Status"),
    ("/start", "POST"): _json("Status"),
    ("/stop", "POST"): _json("Stopped"),
    # profiles and sessions
    ("/profiles", "GET"): _json("ProfileList"),
    ("/profiles", "POST"): _json("Profile"),
    ("/profiles/<name>", "DELETE"): _json("ProfileDeleted"),
    ("/sessions", "GET"): _json("SessionList"),
    ("/sessions", "POST"): _json("Session"),
    ("/sessions/<sessionId>", "DELETE"): _json("SessionDeleted"),
    # tabs and consent
    ("/tabs", "GET"): _json("TabList"),
    ("/tabs/open", "POST"): _json("Tab"),
    ("/tabs/focus", "POST"): _json("TabDone"),
    ("/tabs/close", "POST"): _json("TabDone"),
    ("/tabs/<targetId>", "DELETE"): _json("TabDone"),
    ("/tabs/offerable", "GET"): _json("OfferablePages"),
    ("/tabs/offer", "POST"): _json("Tab"),
    ("/tabs/release", "POST"): _json("TabReleased"),
    ("/tabs/request", "POST"): _json("TabRequestAsked"),
    ("/tabs/requests/<requestId>", "DELETE"): _json("TabRequest"),
    ("/tabs/requests", "GET"): _json("TabRequestList"),
    ("/tabs/requests/<requestId>", "POST"): _json("TabRequest"),
    # page work
    ("/navigate", "POST"): _json("NavigateAnswer"),
    ("/eval", "POST"): _json("EvalAnswer"),
    ("/snapshot", "GET"): _json("SnapshotAnswer"),
    ("/find", "GET"): _json("FindAnswer"),
    ("/query", "GET"): _json("QueryAnswer"),
    ("/dom", "GET"): _json("DomAnswer"),
    ("/console", "GET"): _json("ConsoleAnswer"),
    ("/back", "POST"): _json("HistoryAnswer"),
    ("/forward", "POST"): _json("HistoryAnswer"),
    ("/reload", "POST"): _json("HistoryAnswer"),
    ("/scroll", "POST"): _json("ScrollAnswer"),
    # input
    ("/click", "POST"): _json("ClickAnswer"),
    ("/type", "POST"): _json("InputAnswer"),
    ("/press", "POST"): _json("InputAnswer"),
    ("/hover", "POST"): _json("HoverAnswer"),
    ("/select", "POST"): _json("SelectAnswer"),
    ("/wait", "POST"): _json("WaitAnswer"),
    ("/dialog", "POST"): _json("DialogAnswer"),
    ("/upload", "POST"): _json("UploadAnswer"),
    ("/drag", "POST"): _json("DragAnswer"),
    ("/mouse", "POST"): _json("MouseAnswer"),
    ("/keyboard", "POST"): _json("KeyboardAnswer"),
    ("/act", "POST"): _json("ActAnswer", "every step's outcome (a failed step is still 200)"),
    ("/login", "POST"): _json("LoginAnswer"),
    # media, downloads
    ("/screenshot", "GET"): _json("Capture"),
    ("/pdf", "POST"): _json("Capture"),
    ("/media/<name>", "GET"): Answer(
        media_types=_MEDIA_TYPES, schema={"type": "object", "description": "a HAR 1.2 file"},
        description="the file, in its own content type (a HAR file is application/json)"),
    ("/downloads", "GET"): _json("DownloadList"),
    ("/downloads/<id>", "GET"): Answer(media_types=("application/octet-stream",),
                                       description="the downloaded file (an attachment)"),
    # state, emulation
    ("/cookies", "GET"): _json("CookieList"),
    ("/cookies", "POST"): _json("CookiesSet"),
    ("/cookies", "DELETE"): _json("CookiesDeleted"),
    ("/storage", "GET"): _json("StorageItems"),
    ("/storage", "POST"): _json("StorageSet"),
    ("/storage", "DELETE"): _json("StorageRemoved"),
    ("/state", "GET"): _json("StorageState"),
    ("/state", "POST"): _json("StateImported"),
    ("/emulate", "GET"): _json("EmulationAnswer"),
    ("/emulate", "POST"): _json("EmulationAnswer"),
    ("/emulate", "DELETE"): _json("EmulationAnswer"),
    # network
    ("/network", "GET"): _json("NetworkList"),
    ("/network/<id>", "GET"): _json("NetworkDetail"),
    ("/network/block", "POST"): _json("NetworkControls"),
    ("/network/headers", "POST"): _json("NetworkControls"),
    ("/network/har", "POST"): _json("HarAnswer"),
    # ops, tokens, secrets, confirmations
    ("/handoff", "POST"): _json("HandoffSet"),
    ("/handoff", "DELETE"): _json("HandoffCancelled"),
    ("/metrics", "GET"): Answer(media_types=("text/plain",),
                                description="Prometheus text exposition format 0.0.4"),
    ("/ui-codes", "POST"): _json("UiCode"),
    ("/tokens", "GET"): _json("TokenList"),
    ("/tokens", "POST"): _json("MintedToken"),
    ("/tokens/<name>", "DELETE"): _json("TokenRevoked"),
    ("/secrets", "GET"): _json("SecretList"),
    ("/secrets/<name>", "PUT"): _json("Secret"),
    ("/secrets/<name>", "DELETE"): _json("Deleted"),
    ("/confirmations", "GET"): _json("ConfirmationList"),
    ("/confirmations/<id>", "POST"): _json("Confirmation"),
    # session records
    ("/record/start", "POST"): _json("RecordChanged"),
    ("/record/stop", "POST"): _json("RecordChanged"),
    ("/records", "GET"): _json("RecordList"),
    ("/records/<id>", "GET"): Answer(
        media_types=("application/json", "text/html", "text/plain"), schema=ref("Record"),
        description="format json: the record; html: a page of it; script: a Playwright "
                    "script"),
    ("/records/<id>/shots/<name>", "GET"): Answer(media_types=("image/jpeg",),
                                                  description="the screenshot"),
    ("/records/<id>/video", "GET"): Answer(media_types=("video/webm",),
                                           description="the record's video"),
    ("/records/<id>", "DELETE"): _json("RecordDeleted"),
    ("/records/<id>/replay", "POST"): _json("ReplayAnswer"),
}


def with_answers(routes: Iterable[Route]) -> list[Route]:
    """``routes``, each with its answer from :data:`ANSWERS` (unlisted ones unchanged)."""
    out = []
    for route in routes:
        answer = ANSWERS.get((route.path, route.methods[0]))
        if answer is not None and route.path in _HELD:
            answer = attrs.evolve(answer, held=True)
        out.append(route if answer is None else attrs.evolve(route, answer=answer))
    return out


def components() -> dict[str, Any]:
    """The named answer schemas (``components/schemas`` beside ``Error``)."""
    return {**PAGE_SCHEMAS, **SERVICE_SCHEMAS, **RECORD_SCHEMAS}
