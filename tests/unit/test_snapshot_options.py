"""The walker's option records: validation and the JavaScript they send."""

from __future__ import annotations

import pytest

from browserd.errors import BadRequest
from browserd.snapshot import FindOptions, SnapshotOptions, find_call


def test_find_needs_a_criterion() -> None:
    with pytest.raises(BadRequest):
        FindOptions()
    with pytest.raises(BadRequest):
        FindOptions(name="", text="")
    with pytest.raises(BadRequest):
        FindOptions(name="x", root_ref="e1", root_selector="main")
    with pytest.raises(BadRequest):
        FindOptions(name="x", limit=0)
    assert FindOptions(role="link").to_js()["role"] == "link"


def test_find_call_escapes_page_strings() -> None:
    call = find_call(FindOptions(text='"); alert(1); ("\u2028', exact=True))
    assert call.startswith("JSON.stringify(globalThis.__browserd.find({")
    assert "\u2028" not in call and '\\"); alert(1)' in call
    assert '"exact": true' in call and '"lineChars": null' in call


def test_line_chars() -> None:
    assert SnapshotOptions().to_js()["lineChars"] is None
    assert SnapshotOptions(line_chars=0).to_js()["lineChars"] == 0
    with pytest.raises(BadRequest):
        SnapshotOptions(line_chars=-1)
