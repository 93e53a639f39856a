"""Uploads: set the files of a file input, answer a file chooser, click-and-upload.

Every tab intercepts file choosers (``Page.setInterceptFileChooserDialog``,
enabled by the TabActor): no native dialog ever opens; the page's request
becomes ``tab.input.chooser`` (a :class:`browserd.tabs.inputstate.FileChooser`)
and the action that caused it reports ``effects.fileChooser: {multiple}``.

- :func:`upload` with a target sets the files of that ``<input type=file>``
  (or of the file input a ``<label>`` controls) with ``DOM.setFileInputFiles``
  on the element's own session (out-of-process iframes included); without a
  target it answers the pending chooser.
- :func:`click_upload` clicks (see :func:`browserd.tabs.actions.pointer.click`)
  and fills the chooser the click opened.

The paths given here were already resolved and checked against the upload
roots (:mod:`browserd.uploads`); this module never looks at the host's files.
Every function runs in the tab's work slot; cancellation abandons the CDP
call in flight (files already set stay set).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import attrs
import trio

from ...errors import BadRequest, CdpError, NoFileChooser
from ..actor import TabActor
from ..inputstate import FileChooser
from ..pagejs import page_function
from ..resolve import ElementHandle
from ..routing import send_in, session_by_id
from .element import call_on, gone_error, resolve_element, send_input
from .pointer import click
from .records import Click, Progress, Upload

__all__ = ["CHOOSER_WAIT_S", "click_upload", "upload"]

CHOOSER_WAIT_S = 2.0
"""How long, after a click's effects settled, to wait for the chooser it opens."""

_FILE_INPUT_OF = page_function("fileInputOf")
_FILE_INPUT_FACTS = page_function("fileInputFacts")


def _names(files: Sequence[str]) -> list[str]:
    return [os.path.basename(path) for path in files]


def _check_count(files: Sequence[str], multiple: bool) -> None:
    if len(files) > 1 and not multiple:
        raise BadRequest(f"the file input takes one file; {len(files)} were given",
                         field="files", hint="send one file, or use an input with `multiple`")


async def _file_input(tab: TabActor, handle: ElementHandle) -> tuple[ElementHandle, bool]:
    """The file input ``handle`` names (itself, or a label's control) and its ``multiple``.

    Raises BadRequest when it is no file input or is disabled; StaleRef when
    it went away.
    """
    try:
        remote = await send_in(tab, handle.session, "Runtime.callFunctionOn", {
            "objectId": handle.object_id, "functionDeclaration": _FILE_INPUT_OF.declaration,
            "returnByValue": False})
    except CdpError as exc:
        raise (gone_error(exc) or exc) from None
    result = remote.get("result") or {}
    object_id = result.get("objectId")
    if result.get("subtype") != "node" or not object_id:
        what = result.get("value") or "element"
        raise BadRequest(f"the element is not a file input (a {what}); nothing was uploaded",
                         hint="for a custom upload button use POST /click {ref, files}")
    the_input = attrs.evolve(handle, object_id=str(object_id))
    facts = await call_on(tab, the_input, _FILE_INPUT_FACTS)
    if not isinstance(facts, dict):
        facts = {}
    if facts.get("disabled"):
        raise BadRequest("the file input is disabled; nothing was uploaded")
    return the_input, bool(facts.get("multiple"))


async def _set_chooser_files(tab: TabActor, chooser: FileChooser, files: Sequence[str],
                             progress: Progress) -> None:
    """Set ``files`` on the chooser's element; it is then no longer pending.

    Raises BadRequest (several files for a single-file chooser: it stays
    pending), NoFileChooser when its input went away (it is dropped).
    """
    _check_count(files, chooser.multiple)
    session = session_by_id(tab, chooser.session_id)
    progress.sent = True
    try:
        await send_in(tab, session, "DOM.setFileInputFiles",
                      {"files": list(files), "backendNodeId": chooser.backend_node_id})
    except CdpError as exc:
        tab.input.chooser_answered(chooser)
        raise NoFileChooser("the file chooser's input is gone from the page; "
                            f"nothing was uploaded ({exc.message})") from None
    tab.input.chooser_answered(chooser)


async def upload(tab: TabActor, action: Upload, *, progress: Progress | None = None
                 ) -> dict[str, Any]:
    """Set ``action.files`` on its target's file input, or on the pending chooser (no
    target).

    Answers ``{ok, files: [names], multiple, via: "input"|"chooser", effects}``.
    Raises NoFileChooser (no target and no pending chooser), BadRequest (not
    a file input, disabled, several files for a single-file input), the ref
    engine's errors, DialogOpen when a dialog opened first.
    """
    files, target = action.files, action.target
    progress = progress if progress is not None else Progress()
    if target is None:
        chooser = tab.input.chooser
        if chooser is None:
            raise NoFileChooser("no file chooser is waiting in this tab; nothing was uploaded")
        _check_count(files, chooser.multiple)

        async def answer() -> None:
            await _set_chooser_files(tab, chooser, files, progress)

        effects = await send_input(tab, "upload", progress, answer)
        return {"ok": True, "files": _names(files), "multiple": chooser.multiple,
                "via": "chooser", "effects": effects}
    handle = await resolve_element(tab, target)
    the_input, multiple = await _file_input(tab, handle)
    _check_count(files, multiple)

    async def run() -> None:
        progress.sent = True
        try:
            await send_in(tab, the_input.session, "DOM.setFileInputFiles",
                          {"files": list(files), "objectId": the_input.object_id})
        except CdpError as exc:
            raise (gone_error(exc) or exc) from None

    effects = await send_input(tab, "upload", progress, run)
    return {"ok": True, "files": _names(files), "multiple": multiple, "via": "input",
            "effects": effects}


async def _wait_chooser(tab: TabActor, after: int) -> FileChooser | None:
    """The chooser opened after serial ``after``, waiting ≤ CHOOSER_WAIT_S for it."""
    def fresh() -> FileChooser | None:
        chooser = tab.input.chooser
        return chooser if chooser is not None and chooser.serial > after else None

    with trio.move_on_after(CHOOSER_WAIT_S):
        while fresh() is None and tab.halted() is None:
            await tab.wait_changed()
    return fresh()


async def click_upload(tab: TabActor, action: Click, *, progress: Progress | None = None
                       ) -> dict[str, Any]:
    """Click ``action.target``, then fill the file chooser the click opened with ``action.files``.

    The click and the upload are one observed input: the answer is the
    click's (``method``, ``effects`` of both — no ``fileChooser``, it was
    answered) plus ``files: [names]`` and ``multiple``. If a dialog opened
    before the chooser was filled, ``files`` is ``[]`` and ``effects.dialog``
    says why. Raises NoFileChooser when the click opened none within
    :data:`CHOOSER_WAIT_S` (the click itself was sent), BadRequest when the
    chooser takes one file and several were given (the chooser then stays
    pending for ``/upload``), and the click's errors.
    """
    assert action.files is not None
    files = action.files
    progress = progress if progress is not None else Progress()
    before = tab.input.choosers_seen
    filled: list[FileChooser] = []

    async def fill() -> None:
        chooser = await _wait_chooser(tab, before)
        if chooser is None:
            if tab.view().dialog is not None:
                return  # the observer reports the dialog
            raise NoFileChooser("the click opened no file chooser; the click was sent, "
                                "nothing was uploaded",
                                hint="target the upload button itself, or the file input "
                                     "with POST /upload {ref, files}")
        await _set_chooser_files(tab, chooser, files, progress)
        filled.append(chooser)

    result = await click(tab, action, progress=progress, then=fill)
    if not filled:
        return {**result, "files": []}
    return {**result, "files": _names(files), "multiple": filled[0].multiple}
