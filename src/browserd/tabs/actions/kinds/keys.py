"""The kinds that use the keyboard: type, press and the raw keyboard.

Each :class:`~.spec.ActionSpec` here is the whole of its kind (see :mod:`.spec`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ....argfields import Field, timeout_field
from ....errors import BadRequest, SecretOrigin
from ....records.model import Call
from ....records.playwright import Writer, lit, typed_text
from ...actor import TabActor
from ...origins import origin_of
from ..keyboard import press, type_text
from ..raw import KEY_ACTIONS, keyboard
from ..records import KeyInput, Press, TypeText
from .spec import (
    LOCATOR,
    MODIFIERS,
    REF,
    SELECTOR,
    WAIT_UNTIL,
    ActionSpec,
    BuildContext,
    PerformContext,
    Recording,
    element_target,
)

__all__ = ["KEYBOARD", "PRESS", "TYPE"]


# -- type ----------------------------------------------------------------------------


def _build_type(args: Mapping[str, Any], ctx: BuildContext) -> TypeText:
    typed_into = None
    if any(args.get(k) is not None for k in ("ref", "selector", "role", "name", "within")):
        typed_into = element_target(args, text=False)  # (text is what to type)
    if (args.get("text") is None) == (args.get("secret") is None):
        raise BadRequest("give text or secret (a vault secret's name), not both",
                         field="text")
    text, origin, secret = args.get("text"), None, args.get("secret")
    if secret is not None:
        text, origin = ctx.secret_for_typing(secret)
    assert text is not None
    return TypeText(text=text, target=typed_into, clear=args["clear"], submit=args["submit"],
                    slowly=args["slowly"], wait_until=args["waitUntil"], origin=origin,
                    secret=secret)


async def _type(tab: TabActor, action: TypeText, ctx: PerformContext) -> dict[str, Any]:
    if action.secret is not None and action.origin is not None \
            and origin_of(tab.view().url) != action.origin:
        raise SecretOrigin(f"secret {action.secret!r} is for {action.origin}, not for "
                           "the page the tab shows now")
    return await type_text(tab, action, progress=ctx.progress)


def _script_type(w: Writer, call: Call, loc: str | None, index: int) -> None:
    args = call.args
    text = w.text_expr(args)
    if loc is not None:
        method = "fill" if args.get("clear") or args.get("secret") else w.m(
            "press_sequentially", "pressSequentially")
        w.stmt(f"{loc}.{method}({text})")
    else:
        w.stmt(f"page.keyboard.type({text})")
    if args.get("submit"):
        w.stmt(f"{loc}.press(\"Enter\")" if loc else "page.keyboard.press(\"Enter\")")


def _trace_type(call: Call, selector: str | None, params: dict[str, Any]
                ) -> tuple[str, str, str]:
    typed = typed_text(call.args)
    params.pop("text", None)
    if selector is None:
        params["text"] = typed
        return "Page", "keyboardType", "keyboard.type"
    if call.args.get("clear") or call.args.get("secret") is not None:
        params["value"] = typed
        return "Frame", "fill", "locator.fill"
    params["text"] = typed
    return "Frame", "type", "locator.pressSequentially"


def _typing_needs(args: Mapping[str, Any]) -> tuple[str, ...]:
    """Typing a vault secret needs ``secrets``."""
    return ("secrets",) if args.get("secret") is not None else ()


TYPE = ActionSpec(
    kind="type", summary="Type text into an element or the focused one",
    fields=(Field(name="text", type="string", max_length=100_000,
                  description="the text to type"),
            Field(name="secret", type="string", max_length=64,
                  description="the name of a vault secret to type instead of text (typed "
                              "only on the secret's origin; its value is never answered)"),
            REF, SELECTOR, *LOCATOR,
            Field(name="clear", type="boolean", default=False,
                  description="empty the field first"),
            Field(name="submit", type="boolean", default=False,
                  description="press Enter afterwards"),
            Field(name="slowly", type="boolean", default=False,
                  description="one key event per character (for pages that listen to keys)"),
            WAIT_UNTIL, timeout_field(15_000)),
    record=TypeText, build=_build_type, perform=_type, settles=True, extra_needs=_typing_needs,
    recording=Recording(names=("element",), locator=True, script=_script_type,
                        trace=_trace_type))


# -- press ---------------------------------------------------------------------------


def _build_press(args: Mapping[str, Any], ctx: BuildContext) -> Press:
    return Press(key=args["key"], modifiers=tuple(args.get("modifiers") or ()),
                 wait_until=args["waitUntil"])


async def _press(tab: TabActor, action: Press, ctx: PerformContext) -> dict[str, Any]:
    return await press(tab, action, progress=ctx.progress)


def _script_press(w: Writer, call: Call, loc: str | None, index: int) -> None:
    mods = [m for m in call.args.get("modifiers") or () if isinstance(m, str)]
    w.stmt(f"page.keyboard.press({lit('+'.join([*mods, str(call.args.get('key'))]))})")


def _trace_press(call: Call, selector: str | None, params: dict[str, Any]
                 ) -> tuple[str, str, str]:
    return "Page", "keyboardPress", "keyboard.press"


PRESS = ActionSpec(
    kind="press", summary="Press a key or chord on the focused element",
    fields=(Field(name="key", type="string", required=True, max_length=100,
                  description='a key ("Enter", "a", "ArrowDown") or chord ("Control+a")'),
            MODIFIERS, WAIT_UNTIL, timeout_field(15_000)),
    record=Press, build=_build_press, perform=_press, settles=True,
    recording=Recording(names=(), script=_script_press, trace=_trace_press))


# -- keyboard ------------------------------------------------------------------------

_KEY_CALLS = {"down": "keyboardDown", "up": "keyboardUp", "press": "keyboardPress",
              "insertText": "keyboardInsertText", "type": "keyboardType"}


def _build_keyboard(args: Mapping[str, Any], ctx: BuildContext) -> KeyInput:
    return KeyInput(action=args["action"], key=args.get("key"), text=args.get("text"),
                    wait_until=args["waitUntil"])


async def _keyboard(tab: TabActor, action: KeyInput, ctx: PerformContext) -> dict[str, Any]:
    return await keyboard(tab, action, progress=ctx.progress)


def _script_keyboard(w: Writer, call: Call, loc: str | None, index: int) -> None:
    action, key = call.args.get("action"), call.args.get("key")
    if action == "insertText":
        inserted = lit(call.args.get("text") or "")
        w.stmt(f"page.keyboard.{w.m('insert_text', 'insertText')}({inserted})")
    else:
        w.stmt(f"page.keyboard.{action}({lit(key)})")


def _trace_keyboard(call: Call, selector: str | None, params: dict[str, Any]
                    ) -> tuple[str, str, str]:
    action = call.args.get("action")
    if action in _KEY_CALLS:
        return "Page", _KEY_CALLS[str(action)], f"keyboard.{action}"
    return "Browserd", "keyboard", "browserd.keyboard"


KEYBOARD = ActionSpec(
    kind="keyboard", summary="One raw key down or up, or insert text",
    fields=(Field(name="action", type="string", required=True, enum=KEY_ACTIONS,
                  description="press a key (down), release it (up), or insert text as typed"),
            Field(name="key", type="string", max_length=100,
                  description='down/up: a key name ("a", "Shift", "Enter", "ArrowLeft")'),
            Field(name="text", type="string", max_length=100_000,
                  description="insertText: the text"),
            WAIT_UNTIL, timeout_field(15_000)),
    record=KeyInput, build=_build_keyboard, perform=_keyboard, settles=True,
    recording=Recording(names=(), script=_script_keyboard, trace=_trace_keyboard))
