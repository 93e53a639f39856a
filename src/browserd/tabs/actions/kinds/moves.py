"""Recorded kinds that are routes but no ``/act`` step: scroll, back, forward, reload, act.

A session record keeps their calls too; these say how a recorded call of
each names its element and is written out again (:class:`~.spec.Recording`).
Their fields and work are their routes' (``http/routes/navigation.py``,
``http/routes/input.py``).
"""

from __future__ import annotations

from typing import Any

from ....records.model import Call
from ....records.playwright import Writer, lit
from .spec import Recording

__all__ = ["ROUTE_RECORDINGS"]


def _script_scroll(w: Writer, call: Call, loc: str | None, index: int) -> None:
    args = call.args
    to = args.get("to")
    if to == "intoView" and loc is not None:
        w.stmt(f"{loc}.{w.m('scroll_into_view_if_needed', 'scrollIntoViewIfNeeded')}()")
    elif to in ("top", "bottom"):
        js = "window.scrollTo(0, 0)" if to == "top" else \
            "window.scrollTo(0, document.documentElement.scrollHeight)"
        w.stmt(f"page.evaluate({lit(js)})")
    else:
        if loc is not None:
            w.stmt(f"{loc}.hover()")
        w.stmt(f"page.mouse.wheel({float(args.get('dx') or 0)}, {float(args.get('dy') or 0)})")


def _trace_scroll(call: Call, selector: str | None, params: dict[str, Any]
                  ) -> tuple[str, str, str]:
    to = call.args.get("to")
    if to == "intoView" and selector is not None:
        return "Frame", "scrollIntoViewIfNeeded", "locator.scrollIntoViewIfNeeded"
    if to is None:
        return "Page", "mouseWheel", "mouse.wheel"
    return "Browserd", "scroll", "browserd.scroll"


def _history(py_name: str, ts_name: str) -> Recording:
    def script(w: Writer, call: Call, loc: str | None, index: int) -> None:
        w.stmt(f"page.{w.m(py_name, ts_name)}()")

    def trace(call: Call, selector: str | None, params: dict[str, Any]
              ) -> tuple[str, str, str]:
        return "Page", ts_name, f"page.{ts_name}"

    return Recording(names=(), script=script, trace=trace)


def _script_act(w: Writer, call: Call, loc: str | None, index: int) -> None:
    """Nothing here: a batch is written as its steps."""


#: kind → how its recorded calls are named and written out (``act``: a batch, written as
#: its steps; in a trace, ``browserd.act`` around them).
ROUTE_RECORDINGS: dict[str, Recording] = {
    "scroll": Recording(names=("element",), text_names_element=True, script=_script_scroll,
                        trace=_trace_scroll),
    "back": _history("go_back", "goBack"),
    "forward": _history("go_forward", "goForward"),
    "reload": _history("reload", "reload"),
    "act": Recording(names=(), script=_script_act),
}
