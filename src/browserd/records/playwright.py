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
from collections.abc import Callable, Mapping
from typing import Any

import attrs

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


@attrs.frozen
class _Naming:
    """How a target is named for Playwright, whatever the syntax: ``how`` is ``role``
    (with ``name`` when it has one: cut short names lose their ``…`` and are never
    exact), ``selector`` or ``text``; ``nth`` when it was one of several."""

    how: str
    role: str | None = None
    name: str | None = None
    exact: bool = False
    value: str | None = None
    nth: int | None = None


def _naming(target: Target, role_ok: Callable[[str], bool]) -> _Naming | None:
    """By role and accessible name when it has both (and the syntax takes its role), else
    its CSS selector, else its text, else its role alone; None for a bare ref."""
    role = target.role if target.role and role_ok(target.role) else None
    nth = int(target.nth) if target.nth is not None and target.ref is None else None
    name = target.name
    if role is not None and name:
        whole = _name_is_whole(name)
        return _Naming(how="role", role=role, name=name if whole else name[:-1],
                       exact=whole and target.exact, nth=nth)
    if target.selector:
        return _Naming(how="selector", value=target.selector, nth=nth)
    if target.text:
        return _Naming(how="text", value=target.text, nth=nth)
    if role is not None:
        return _Naming(how="role", role=role, nth=nth)
    return None


def _own_expression(target: Target, lang: str) -> str | None:
    named = _naming(target, PLAYWRIGHT_ROLES.__contains__)
    if named is None:
        return None
    py = lang == "python"
    if named.how == "role" and named.name is not None:
        if py:
            expr = f"page.get_by_role({lit(named.role)}, name={lit(named.name)}"
            expr += ", exact=True)" if named.exact else ")"
        else:
            expr = f"page.getByRole({lit(named.role)}, {{ name: {lit(named.name)}"
            expr += ", exact: true })" if named.exact else " })"
    elif named.how == "selector":
        expr = f"page.locator({lit(named.value)})"
    elif named.how == "text":
        expr = f"page.{'get_by_text' if py else 'getByText'}({lit(named.value)})"
    else:
        expr = f"page.{'get_by_role' if py else 'getByRole'}({lit(named.role)})"
    return expr + (f".nth({named.nth})" if named.nth is not None else "")


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
    named = _naming(target, lambda role: _ROLE_RE.fullmatch(role) is not None)
    if named is None:
        return None
    if named.how == "role" and named.name is not None:
        shown = json.dumps(named.name, ensure_ascii=False)
        selector = f"internal:role={named.role}[name={shown}{'s' if named.exact else 'i'}]"
    elif named.how == "selector":
        selector = str(named.value)
    elif named.how == "text":
        selector = f"internal:text={json.dumps(named.value, ensure_ascii=False)}i"
    else:
        selector = f"internal:role={named.role}"
    return selector + (f" >> nth={named.nth}" if named.nth is not None else "")


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
