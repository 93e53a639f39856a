"""The fields a call takes: one table that both validates a call's arguments and describes them.

A :class:`Field` names one argument (its JSON type, default, limits, description);
:func:`parse_args` validates a call's query and JSON body against a tuple of
them (400 BAD_REQUEST naming the field at fault; unknown fields are refused)
and :func:`check_value` one value. The route table (:mod:`browserd.http.schema`)
and the action kinds (:mod:`browserd.tabs.actions.kinds`) declare theirs
with it; a leaf: plain code, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import attrs

from .errors import BadRequest

__all__ = ["UNSET", "Field", "check_value", "parse_args", "timeout_field"]


class _Unset:
    """The value of an absent :attr:`Field.nullable` field (a singleton)."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()
_TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str, "integer": int, "number": (int, float), "boolean": bool,
    "array": list, "object": dict,
}


@attrs.frozen(kw_only=True)
class Field:
    name: str
    type: str  # "string" | "integer" | "number" | "boolean" | "array" | "object"
    required: bool = False
    default: Any = None
    enum: tuple[Any, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    max_length: int | None = None
    items: str | None = None  # item type for arrays
    #: The JSON Schema of an array's items, when ``items`` says too little (the
    #: request schema only: :func:`check_value` checks ``items``). Not hashed (a dict).
    item_schema: dict[str, Any] | None = attrs.field(default=None, hash=False)
    #: An object's fields: its schema lists them (and no others), and :func:`check_value`
    #: checks each (an unknown one is refused).
    properties: tuple[Field, ...] | None = None
    description: str = ""
    #: An explicit JSON ``null`` is kept (as None) and absence reads as UNSET,
    #: so a handler can tell "clear this" from "leave it as it is".
    nullable: bool = False

    def schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        if self.enum is not None:
            out["enum"] = list(self.enum)
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        if self.max_length is not None:
            out["maxLength"] = self.max_length
        if self.item_schema is not None:
            out["items"] = self.item_schema
        elif self.items:
            out["items"] = {"type": self.items}
        if self.properties is not None:
            out["properties"] = {f.name: f.schema() for f in self.properties}
            out["additionalProperties"] = False
        if self.description:
            out["description"] = self.description
        if self.default is not None:
            out["default"] = self.default
        return out


def timeout_field(default_ms: int, maximum_ms: int = 300_000) -> Field:
    """The ``timeoutMs`` field with a call's own default."""
    return Field(name="timeoutMs", type="integer", default=default_ms, minimum=1,
                 maximum=maximum_ms, description="deadline in milliseconds")


def _coerce_text(name: str, kind: str, raw: str) -> Any:
    """Convert one piece of query text to ``kind``, or raise BadRequest naming ``name``."""
    if kind == "boolean":
        low = raw.lower()
        if low in ("1", "true", "yes", "on"):
            return True
        if low in ("0", "false", "no", "off"):
            return False
        raise BadRequest(f"field {name!r} must be a boolean", field=name)
    if kind in ("integer", "number"):
        try:
            return int(raw) if kind == "integer" else float(raw)
        except ValueError:
            raise BadRequest(f"field {name!r} must be a {kind}", field=name) from None
    return raw


def _coerce_query(field: Field, raw: str) -> Any:
    """Query strings are text: convert to the field's type (arrays: comma-separated)."""
    if field.type == "array":
        parts = [part for part in raw.split(",") if part]
        if field.items in ("boolean", "integer", "number"):
            return [_coerce_text(field.name, field.items, part) for part in parts]
        return parts
    return _coerce_text(field.name, field.type, raw)


def parse_args(
    fields: tuple[Field, ...], *, query: Mapping[str, str], body: Any
) -> dict[str, Any]:
    """Validate query args and a JSON body (body wins) against ``fields``.

    Unknown fields are refused (a typo should not silently do something
    else). Raises BadRequest naming the field.
    """
    if body is None:
        body = {}
    if not isinstance(body, dict):
        raise BadRequest("the JSON body must be an object")
    known = {f.name: f for f in fields}
    unknown = (set(body) | set(query)) - set(known)
    if unknown:
        raise BadRequest(
            f"unknown field(s): {', '.join(sorted(unknown))}",
            field=sorted(unknown)[0],
            hint="accepted: " + (", ".join(sorted(known)) or "no fields"),
        )
    out: dict[str, Any] = {}
    for field in fields:
        if field.name in body:
            value = body[field.name]
            if value is None and field.nullable:
                out[field.name] = None
                continue
        elif field.name in query:
            value = _coerce_query(field, query[field.name])
        elif field.required:
            raise BadRequest(f"field {field.name!r} is required", field=field.name)
        else:
            out[field.name] = UNSET if field.nullable else field.default
            continue
        out[field.name] = check_value(field, value)
    return out


def check_value(field: Field, value: Any) -> Any:
    value_any: Any = value
    expected = _TYPES[field.type]
    if value is None and not field.required:
        return field.default
    if isinstance(value, bool) and field.type in ("integer", "number"):
        raise BadRequest(f"field {field.name!r} must be a {field.type}", field=field.name)
    if field.type == "number" and isinstance(value, int):
        value = float(value)
    if not isinstance(value, expected):
        raise BadRequest(f"field {field.name!r} must be a {field.type}", field=field.name)
    if isinstance(value, float) and not math.isfinite(value):
        # NaN would pass every minimum/maximum comparison below.
        raise BadRequest(f"field {field.name!r} must be a finite number", field=field.name)
    if field.enum is not None and value not in field.enum:
        raise BadRequest(
            f"field {field.name!r} must be one of {', '.join(map(str, field.enum))}",
            field=field.name,
        )
    value = value_any
    if field.minimum is not None and value < field.minimum:
        raise BadRequest(f"field {field.name!r} must be ≥ {field.minimum}", field=field.name)
    if field.maximum is not None and value > field.maximum:
        raise BadRequest(f"field {field.name!r} must be ≤ {field.maximum}", field=field.name)
    if field.max_length is not None and len(value) > field.max_length:
        raise BadRequest(
            f"field {field.name!r} is longer than {field.max_length}", field=field.name
        )
    if field.items and isinstance(value, list):
        item_type = _TYPES[field.items]
        if not all((isinstance(v, item_type) and not isinstance(v, bool)) or
                   (field.items == "boolean" and isinstance(v, bool)) for v in value):
            raise BadRequest(f"field {field.name!r} must be a list of {field.items}s",
                             field=field.name)
    if field.properties is not None and isinstance(value, dict):
        return _check_object(field, value)
    return value


def _check_object(field: Field, value: dict[str, Any]) -> dict[str, Any]:
    """An object's given fields, each checked (BadRequest naming ``field``: its own
    fields are not the call's)."""
    known = {f.name: f for f in field.properties or ()}
    unknown = sorted(set(value) - set(known))
    if unknown:
        raise BadRequest(f"field {field.name!r}: unknown field(s) {', '.join(unknown)}",
                         field=field.name, hint="accepted: " + ", ".join(known))
    out = {}
    for key, item in value.items():
        try:
            out[key] = check_value(known[key], item)
        except BadRequest as exc:
            raise BadRequest(f"field {field.name!r}: {exc.message}", field=field.name,
                             hint=exc.hint or field.description or None) from None
    return out
