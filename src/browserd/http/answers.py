"""What routes answer: the named answer schemas of ``/openapi.json``, and their builders.

Each route declares its answer where it is declared
(:attr:`browserd.http.schema.Route.answer`): :func:`returns` a component — a
named schema of :mod:`browserd.http.answers_page`,
:mod:`browserd.http.answers_service` or :mod:`browserd.http.answers_records`
— or a raw :class:`~browserd.http.schema.Answer` (a media file, a download,
the metrics text) naming its content types. :func:`components` is the
document's ``components/schemas``; every route's error statuses answer the
``Error`` component (:data:`browserd.http.schema.ERROR_SCHEMA`).
"""

from __future__ import annotations

from typing import Any

from .answers_json import ref
from .answers_page import PAGE_SCHEMAS
from .answers_records import RECORD_SCHEMAS
from .answers_service import SERVICE_SCHEMAS
from .schema import Answer

__all__ = ["components", "returns"]


def returns(component: str, description: str = "OK") -> Answer:
    """A JSON answer that is the component ``component`` (``returns("Tab")``)."""
    if component not in components():
        raise ValueError(f"no answer component {component!r}")
    return Answer(schema=ref(component), description=description)


def components() -> dict[str, Any]:
    """The named answer schemas (``components/schemas`` beside ``Error``)."""
    return {**PAGE_SCHEMAS, **SERVICE_SCHEMAS, **RECORD_SCHEMAS}
