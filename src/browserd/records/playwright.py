"""What writing a recorded call as Playwright needs, whatever its kind.

A :class:`Writer` collects one script's lines in Python (sync API) or
TypeScript; :func:`locator_expression` names an element as a person would
(``page.get_by_role(...)``), :func:`playwright_selector` as a trace's
selector (``internal:role=button[name="Pay"s]``). Every value from the page or
the agent is written as a JSON string literal (:func:`lit`: valid in both
languages, ASCII only), so no recorded text can become code; a vault secret
is read from the environment (:func:`secret_env`) in a script and is its
marker (:func:`typed_text`) in a trace, never a value. The action kinds
(:mod:`browserd.tabs.actions.kinds`) write their own calls with these;
:mod:`browserd.records.scripts` and :mod:`browserd.records.trace` put them
together. Plain code: no I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ..snapshot.roles import ARIA_ROLES
from ..vault import marker
from .model import Call, Target

__all__ = ["PLAYWRIGHT_ROLES", "Writer", "lit", "locator_expression", "playwright_selector",
           "secret_env", "selector_of", "typed_text"]

#: The roles Playwright's ``get_by_role`` accepts (all but three the walker may report).
PLAYWRIGHT_ROLES = ARIA_ROLES - {"image", "mark", "tooltip"}

_ROLE_RE = re.compile(r"[a-z][a-z-]{0,40}")


def lit(value: Any) -> str:
    """``value`` as a literal both languages read (JSON, ASCII only)."""
    return json.dumps(value, ensure_ascii=True)


def _name_is_whole(name: str) -> bool:
    return bool(name) and not name.endswith("…")


def locator_expression(target: Target, lang: str) -> str | None:
    """The Playwright locator for ``target`` (``page.get_by_role(...)``), or None.

    A locator ``within`` a container is chained on the container's
    (``page.get_by_role("row", name="Bob").get_by_role("link", name="Edit")``);
    None when the container has no locator.
    """
    if target.within is None:
        return _own_expression(target, lang)
    outer = locator_expression(target.within, lang)
    inner = _own_expression(target, lang)
    if outer is None or inner is None:
        return None
    return outer + inner.removeprefix("page")


def _own_expression(target: Target, lang: str) -> str | None:
    py = lang == "python"
    role = target.role if target.role in PLAYWRIGHT_ROLES else None
    name = target.name
    if role is not None and name:
        whole = _name_is_whole(name)
        shown = name if whole else name[:-1]
        exact = whole and target.exact
        if py:
            expr = f"page.get_by_role({lit(role)}, name={lit(shown)}"
            expr += ", exact=True)" if exact else ")"
        else:
            expr = f"page.getByRole({lit(role)}, {{ name: {lit(shown)}"
            expr += ", exact: true })" if exact else " })"
    elif target.selector:
        expr = f"page.locator({lit(target.selector)})"
    elif target.text:
        expr = f"page.{'get_by_text' if py else 'getByText'}({lit(target.text)})"
    elif role is not None:
        expr = f"page.{'get_by_role' if py else 'getByRole'}({lit(role)})"
    else:
        return None
    if target.nth is not None and target.ref is None:
        expr += f".nth({int(target.nth)})"
    return expr


def playwright_selector(target: Target) -> str | None:
    """``target`` as a Playwright selector (``internal:role=button[name="Pay"s]``), or None.

    By role and accessible name when it has both (exact unless the name was
    cut short: a name ending in ``…``), else its CSS selector, else its text,
    else its role alone; ``>> nth=N`` when it was one of several; after its
    ``within`` container's and `` >> ``. None for a bare ref (refs are
    browserd's; Playwright has no such element), or a container that is one.
    """
    own = _own_selector(target)
    if target.within is None or own is None:
        return own
    outer = playwright_selector(target.within)
    return None if outer is None else f"{outer} >> {own}"


def _own_selector(target: Target) -> str | None:
    role = target.role if target.role and _ROLE_RE.fullmatch(target.role) else None
    name = target.name
    if role is not None and name:
        whole = not name.endswith("…")
        shown = name if whole else name[:-1]
        flag = "s" if whole and target.exact else "i"
        selector = f"internal:role={role}[name={json.dumps(shown, ensure_ascii=False)}{flag}]"
    elif target.selector:
        selector = target.selector
    elif target.text:
        selector = f"internal:text={json.dumps(target.text, ensure_ascii=False)}i"
    elif role is not None:
        selector = f"internal:role={role}"
    else:
        return None
    if target.nth is not None and target.ref is None:
        selector += f" >> nth={int(target.nth)}"
    return selector


def selector_of(call: Call, field: str) -> str | None:
    """The trace selector of the element ``call`` named in ``field`` (a drag's ``from``)."""
    target = call.targets.get(field)
    return None if target is None else playwright_selector(target)


def secret_env(name: str) -> str:
    """The environment variable a script reads vault secret ``name`` from."""
    return "BROWSERD_SECRET_" + re.sub(r"[^A-Za-z0-9]", "_", name).upper()


def typed_text(args: Mapping[str, Any]) -> str:
    """What a recorded ``type`` typed, for a trace: a secret's marker, else the text."""
    secret = args.get("secret")
    return marker(secret) if isinstance(secret, str) else str(args.get("text") or "")


def _snake(name: str) -> str:
    return re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), name)


def _py_value(value: Any) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"
    return lit(value)


class Writer:
    """The lines of one script in one language (``python`` or ``typescript``)."""

    def __init__(self, lang: str) -> None:
        self.lang = lang
        self.py = lang == "python"
        self.lines: list[str] = []

    def stmt(self, code: str) -> None:
        self.lines.append(code if self.py else f"await {code};")

    def comment(self, text: str) -> None:
        self.lines.append(("# " if self.py else "// ") + text)

    def no_element(self, call: Call, index: int) -> None:
        """The comment for a step whose element has no locator."""
        self.comment(f"step {index}: {lit(call.kind)} has no element to act on")

    def m(self, py_name: str, ts_name: str) -> str:
        return py_name if self.py else ts_name

    def kw(self, **values: Any) -> str:
        """Options as Python keywords or one TypeScript object (JSON literals)."""
        given = {k: v for k, v in values.items() if v is not None}
        if not given:
            return ""
        if self.py:
            return ", ".join(f"{_snake(k)}={_py_value(v)}" for k, v in given.items())
        return "{ " + ", ".join(f"{k}: {lit(v)}" for k, v in given.items()) + " }"

    def text_expr(self, args: Mapping[str, Any]) -> str:
        """What a ``type`` step types: a secret from the environment, else its text."""
        secret = args.get("secret")
        if isinstance(secret, str):
            env = lit(secret_env(secret))
            return f"os.environ[{env}]" if self.py else f"process.env[{env}]!"
        return lit(str(args.get("text") or ""))
