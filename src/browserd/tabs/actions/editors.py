"""Rich editors: which one an element belongs to, how to focus it, where to click it, its text.

Code and rich-text editors do not keep their text where a plain field does.
CodeMirror 5 and Monaco read keys from a hidden ``textarea`` and draw the
text elsewhere (setting that textarea's value changes nothing); CodeMirror 6
and ProseMirror are ``contenteditable`` elements whose model follows key and
input events, not DOM edits. So browserd treats any of them as a person
would: click the surface the editor draws, select all and delete by keys,
type, then read back what the editor *shows*.

An editor is recognised generically where possible: any ``contenteditable``
editing host is one (kind ``contenteditable``); CodeMirror 5 (``.CodeMirror``),
CodeMirror 6 (``.cm-editor``), Monaco (``.monaco-editor``) and ProseMirror
(``.ProseMirror``) are known by their root element, so their hidden inputs,
drawn surfaces and drawn lines can be found. The page's class names are
untrusted like everything else on it: they decide only where inside the
element's own widget a click lands and how its text is read back. So a
click is aimed only when its target is the editor's own input or inside
its drawn surface, and never when the "editor" is ``<html>`` or ``<body>``
(a page that marks its whole document as one is no widget to aim within).

Every function runs while the caller holds the tab's work slot; page
functions run in the element's ``browserd`` world (page scripts cannot see
or change them). Errors: StaleRef when the element went away, JsException /
CdpError when the page or browser fails (see :func:`.element.call_on`).
Cancellation abandons the CDP call in flight.
"""

from __future__ import annotations

import re
from typing import Any

import attrs

from ...errors import CdpError, StaleRef
from ..actor import TabActor
from ..pagejs import page_function
from ..resolve import ElementHandle
from ..routing import send_in
from ..worlds import world_context, world_evaluate
from .element import call_on, frames_drawn, gone_error

__all__ = ["DRAW_WAIT_S", "EDITOR_KINDS", "Editor", "editor_of", "editor_surface",
           "editor_text", "focus_editor", "focused_element", "mac_platform", "page_platform",
           "same_text", "text_contains"]

EDITOR_KINDS = ("codemirror5", "codemirror6", "monaco", "prosemirror", "contenteditable")
"""The ``kind`` an editor is answered as."""

#: How long to wait for the page to draw before reading an editor's text.
DRAW_WAIT_S = 0.3

_EDITOR_QUESTION = page_function("editorQuestion")
_FOCUSED_ELEMENT = page_function("focusedElement")
_PAGE_PLATFORM = page_function("pagePlatform")


@attrs.frozen(kw_only=True)
class Editor:
    """The editor an element belongs to (see :func:`editor_of`)."""

    kind: str  # one of EDITOR_KINDS
    hidden_input: bool  # the element is the editor's hidden input (CodeMirror 5, Monaco)
    cover: str  # what the element's centre shows: "none" (itself), "inside" the editor, "outside"
    mac: bool  # the page says it runs on macOS (see :func:`mac_platform`)

    def covered_by_itself(self) -> bool:
        """The element's centre shows the editor's own parts (or it is a hidden input)."""
        return self.hidden_input or self.cover == "inside"


async def editor_of(tab: TabActor, handle: ElementHandle, *, click: bool = False
                    ) -> Editor | None:
    """The rich editor the element is (or is part of, or is the one editor inside), else None.

    A plain ``input``/``textarea`` — and a field of a widget's own, such as an
    editor's search box — is None. With ``click`` (the element is a click's
    target) only the editor's own input (CodeMirror 5's and Monaco's hidden
    textarea, CodeMirror 6's content, a ProseMirror or contenteditable host)
    or an element inside the editor's drawn surface counts, never an element
    that merely holds an editor, nor an "editor" that is the whole document
    (``<html>`` or ``<body>``). Raises StaleRef when the element left its
    document; other errors and cancellation: as the module's.
    """
    probe = await call_on(tab, handle, _EDITOR_QUESTION, "probe", click)
    if isinstance(probe, dict) and probe.get("detached"):
        raise StaleRef("the element was removed from the page before the action",
                       reason="detached", hint="take a new snapshot")
    if not isinstance(probe, dict) or probe.get("kind") not in EDITOR_KINDS:
        return None
    return Editor(kind=str(probe["kind"]), hidden_input=bool(probe.get("hiddenInput")),
                  cover=str(probe.get("cover") or "none"),
                  mac=mac_platform(str(probe.get("platform") or "")))


def mac_platform(platform: str) -> bool:
    """Whether a page whose ``navigator.platform`` is ``platform`` runs on macOS.

    A page's scripts pick their shortcuts (select-all: Meta+A there,
    Control+A elsewhere) by what the page says, not by where the service runs.
    """
    return platform.startswith("Mac")


async def page_platform(tab: TabActor, handle: ElementHandle | None) -> str:
    """The ``navigator.platform`` the element's page (without one, the tab's) reports.

    Read in the ``browserd`` world, so page scripts cannot change what it
    says for that read. Errors and cancellation: as the module's.
    """
    if handle is not None:
        return str(await call_on(tab, handle, _PAGE_PLATFORM))
    remote = await world_evaluate(tab, tab.session, tab.main_frame_id, _PAGE_PLATFORM.call())
    return str(remote.get("value") or "")


async def focus_editor(tab: TabActor, handle: ElementHandle, *, click: bool = False) -> str:
    """Give the element's editor keyboard focus as its own scripts expect.

    Focus already inside the editor on something that takes text is kept
    ("kept"); else the element itself (when it takes text) or the editor's
    input is focused ("focused"), or the page refused it ("refused").
    ``click``: the editor is found as for :func:`editor_of`'s ``click``.
    Errors and cancellation: as the module's.
    """
    how = await call_on(tab, handle, _EDITOR_QUESTION, "focus", click)
    return str(how) if how in ("kept", "focused") else "refused"


async def editor_surface(tab: TabActor, handle: ElementHandle) -> ElementHandle | None:
    """The element the editor draws its text on (a click there places the caret), or None.

    The editor is found as for :func:`editor_of` with ``click``. Errors and
    cancellation: as the module's.
    """
    params: dict[str, Any] = {
        "objectId": handle.object_id, "functionDeclaration": _EDITOR_QUESTION.declaration,
        "arguments": [{"value": "surface"}, {"value": True}], "returnByValue": False}
    try:
        result = await send_in(tab, handle.session, "Runtime.callFunctionOn", params)
    except CdpError as exc:
        raise (gone_error(exc) or exc) from None
    remote = result.get("result") or {}
    if result.get("exceptionDetails") or remote.get("subtype") != "node" \
            or not remote.get("objectId"):
        return None
    return attrs.evolve(handle, object_id=str(remote["objectId"]), ref=None)


async def focused_element(tab: TabActor) -> ElementHandle | None:
    """The main document's focused element (inside open shadow roots), or None.

    None too when the body has focus, or focus is inside a frame (the frame's
    element is no editor). Errors and cancellation: as the module's.
    """
    frame_id = tab.main_frame_id
    context_id = await world_context(tab, tab.session, frame_id)
    remote = await world_evaluate(tab, tab.session, frame_id, _FOCUSED_ELEMENT.call(),
                                  by_value=False)
    if remote.get("subtype") != "node" or not remote.get("objectId"):
        return None
    return ElementHandle(session=tab.session, object_id=str(remote["objectId"]),
                         context_id=context_id, frame_id=frame_id, role="", name="", ref=None)


async def editor_text(tab: TabActor, handle: ElementHandle) -> tuple[str | None, bool]:
    """What the element's editor shows, once the page has drawn (≤ :data:`DRAW_WAIT_S`).

    Returns ``(text, drawn)``: ``text`` None when the element is no editor;
    ``drawn`` False when the page drew no frame in time (an editor that
    draws on the next frame, like Monaco, may then still show older text).
    Errors and cancellation: as the module's.
    """
    drawn = await frames_drawn(tab, handle, DRAW_WAIT_S)
    reply = await call_on(tab, handle, _EDITOR_QUESTION, "text", False)
    if not isinstance(reply, dict) or not isinstance(reply.get("text"), str):
        return None, drawn
    return str(reply["text"]), drawn


_INVISIBLE = re.compile("[\u200b\u200c\u200d\u2060\ufeff]")
_SPACE = re.compile(r"\s+")


def _normal(text: str) -> str:
    """Text as compared: no zero-width characters, every run of white space one space."""
    return _SPACE.sub(" ", _INVISIBLE.sub("", text)).strip()


def same_text(shown: str, typed: str) -> bool:
    """Whether an editor showing ``shown`` holds exactly ``typed`` (white space aside:
    editors draw line breaks and spaces their own way)."""
    return _normal(shown) == _normal(typed)


def text_contains(shown: str, typed: str) -> bool:
    """Whether ``typed`` appears in what the editor shows (white space aside)."""
    return _normal(typed) in _normal(shown)
