"""Small builders for the JSON Schemas of answers (:mod:`browserd.http.answers`).

``obj({"targetId": STR, "crashed?": BOOL})`` is an object whose ``targetId``
is always there and whose ``crashed`` may be absent (a trailing ``?`` marks
an optional property, as ``docs/api.md`` writes them). Every answer object
allows properties beyond those listed: answers may grow, and a client that
knows an older shape keeps working.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ANY", "BOOL", "INT", "NUM", "STR", "STRS", "arr", "enum", "maybe", "obj", "ref"]

Schema = dict[str, Any]

STR: Schema = {"type": "string"}
INT: Schema = {"type": "integer"}
NUM: Schema = {"type": "number"}
BOOL: Schema = {"type": "boolean"}
ANY: Schema = {}
STRS: Schema = {"type": "array", "items": STR}


def obj(properties: dict[str, Schema], *, description: str = "",
        values: Schema | None = None) -> Schema:
    """An object with these properties (``name?``: may be absent); ``values``: the schema
    of any further property (default: anything)."""
    props = {name.rstrip("?"): schema for name, schema in properties.items()}
    out: Schema = {"type": "object", "properties": props,
                   "required": [name for name in properties if not name.endswith("?")],
                   "additionalProperties": True if values is None else values}
    if not out["required"]:
        del out["required"]
    if description:
        out["description"] = description
    return out


def arr(items: Schema) -> Schema:
    return {"type": "array", "items": items}


def ref(name: str) -> Schema:
    """A reference to the component ``name``."""
    return {"$ref": f"#/components/schemas/{name}"}


def maybe(schema: Schema) -> Schema:
    """``schema`` or ``null``."""
    kind = schema.get("type")
    if isinstance(kind, str) and set(schema) <= {"type", "items", "description"}:
        return {**schema, "type": [kind, "null"]}
    return {"anyOf": [schema, {"type": "null"}]}


def enum(*values: str) -> Schema:
    return {"type": "string", "enum": list(values)}
