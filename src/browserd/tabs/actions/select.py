"""Choosing options of a ``<select>`` (by value or visible label)."""

from __future__ import annotations

from typing import Any

from ...errors import BadRequest, JsException
from ..actor import TabActor
from ..effects import observing, race
from ..pagejs import page_function
from .element import call_on, resolve_element
from .records import Progress, Select

__all__ = ["select"]


_SELECT_OPTIONS = page_function("selectOptions")


async def select(tab: TabActor, action: Select, *, progress: Progress | None = None
                 ) -> dict[str, Any]:
    """Choose ``action.values`` of its ``<select>`` by value or visible label; fire input +
    change.

    Answers ``{ok, selected: [values], effects}``. Raises BadRequest when the
    element is not a select, is disabled, a value matches no option (the
    message names it and lists the options), or several values are given
    for a single select.
    """
    progress = progress if progress is not None else Progress()
    handle = await resolve_element(tab, action.target)
    with observing(tab) as observer:
        result_box: list[Any] = []

        async def run() -> None:
            progress.sent = True
            result_box.append(await call_on(tab, handle, _SELECT_OPTIONS, list(action.values)))

        _, dialog = await race(tab, run)
        if dialog and not result_box:
            effects = await observer.settle()
            return {"ok": True, "selected": None, "effects": effects}
        result = result_box[0] if result_box else None
        if not isinstance(result, dict):
            raise JsException("selecting the options failed")
        if "notSelect" in result:
            raise BadRequest(f"the element is a <{result['notSelect']}>, not a <select>",
                             field="values", hint="target the <select> element itself")
        if result.get("disabled"):
            raise BadRequest("the <select> is disabled", field="values")
        if "missing" in result:
            missing = ", ".join(repr(v) for v in result["missing"])
            raise BadRequest(f"no option has the value or label {missing}", field="values",
                             missing=result["missing"], available=result.get("available", []))
        if "notMultiple" in result:
            raise BadRequest("the <select> takes one value, not several", field="values")
        if "disabledOption" in result:
            raise BadRequest(f"the option {result['disabledOption']!r} is disabled",
                             field="values")
        effects = await observer.settle()
    return {"ok": True, "selected": result.get("selected", []), "effects": effects}
