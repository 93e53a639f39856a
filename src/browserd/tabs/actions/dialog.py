"""Answering the open JavaScript dialog (alert, confirm, prompt, beforeunload)."""

from __future__ import annotations

from typing import Any

import trio

from ...errors import CdpError, NoDialog
from ..actor import TabActor
from ..effects import observing

__all__ = ["handle_dialog"]


async def handle_dialog(tab: TabActor, *, accept: bool, prompt_text: str | None = None
                        ) -> dict[str, Any]:
    """Accept or dismiss the open JavaScript dialog (``prompt_text`` for prompt()).

    Answers ``{ok, dialog: {type, message, defaultPrompt}, accepted, effects}``;
    ``effects`` may show a navigation or the next dialog the page opened.
    Raises NoDialog (409) when none is open.
    """
    info = tab.view().dialog
    if info is None:
        raise NoDialog("no JavaScript dialog is open on this tab",
                       hint="dialogs are reported in an action's effects.dialog")
    with observing(tab) as observer:
        params: dict[str, Any] = {"accept": accept}
        if prompt_text is not None:
            params["promptText"] = prompt_text
        try:
            await tab.send("Page.handleJavaScriptDialog", params)
        except CdpError as exc:
            if "no dialog" in exc.message.lower():
                raise NoDialog("the dialog was already closed") from None
            raise
        with trio.move_on_after(2):
            while tab.view().dialog is info:
                await tab.wait_changed()
        effects = await observer.settle()
    return {"ok": True, "dialog": info.to_json(), "accepted": accept, "effects": effects}
