"""The gesture kinds' request checks (their specs in tabs/actions/kinds), without a browser."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from browserd.argfields import parse_args
from browserd.errors import BadRequest, UploadBlocked
from browserd.http.routes.input import ServiceContext
from browserd.tabs import actions as inp
from browserd.tabs.actions.kinds import ACTION_SPECS
from browserd.tabs.locator import ElementTarget
from browserd.uploads import UploadPolicy


@pytest.fixture
def system(tmp_path: Path) -> Any:
    root = tmp_path / "uploads"
    root.mkdir()
    (root / "a.txt").write_text("a")
    return SimpleNamespace(uploads=UploadPolicy(roots=(root.resolve(),)))


def build(system: Any, kind: str, **body: Any) -> Any:
    spec = ACTION_SPECS[kind]
    args = parse_args(spec.fields, query={}, body=body)
    return spec.build(args, ServiceContext(system))


def test_drag_to_an_element_or_a_point(system: Any) -> None:
    action = build(system, "drag", **{"from": {"ref": "e1"}, "to": {"text": "Done"}})
    assert action == inp.Drag(source=ElementTarget(ref="e1"), target=ElementTarget(text="Done"))
    action = build(system, "drag", steps=3, **{"from": {"selector": "#a"},
                                               "to": {"x": 10, "y": 20.5}})
    assert action.point == (10.0, 20.5) and action.steps == 3 and action.target is None


@pytest.mark.parametrize("body", [
    {"to": {"x": 1, "y": 1}},                                   # neither from nor files
    {"from": {"ref": "e1"}, "files": ["a.txt"], "to": {"x": 1, "y": 1}},
    {"from": {}, "to": {"x": 1, "y": 1}},
    {"from": {"ref": "e1", "selector": "a"}, "to": {"x": 1, "y": 1}},
    {"from": {"id": "x"}, "to": {"x": 1, "y": 1}},
    {"from": {"ref": ""}, "to": {"x": 1, "y": 1}},
    {"from": {"ref": 5}, "to": {"x": 1, "y": 1}},
    {"from": {"ref": "e1"}, "to": {"x": 1}},
    {"from": {"ref": "e1"}, "to": {"x": 1, "y": True}},
    {"from": {"ref": "e1"}, "to": {"x": 1, "y": 1e9}},
    {"from": {"ref": "e1"}, "to": {"x": 1, "y": 2, "ref": "e2"}},
    {"from": {"ref": "e1"}, "to": {}},
])
def test_bad_drag_shapes_are_400(system: Any, body: dict[str, Any]) -> None:
    with pytest.raises(BadRequest):
        build(system, "drag", **body)


def test_drag_files_are_checked_against_the_roots(system: Any) -> None:
    action = build(system, "drag", files=["a.txt"], to={"selector": "#zone"})
    assert action.files == (str(system.uploads.roots[0] / "a.txt"),) and action.source is None
    with pytest.raises(UploadBlocked):
        build(system, "drag", files=["/etc/passwd"], to={"selector": "#zone"})


def test_upload_target_and_files(system: Any) -> None:
    action = build(system, "upload", files=["a.txt"])
    assert action.target is None and len(action.files) == 1
    action = build(system, "upload", ref="e3", files=[])
    assert action.target == ElementTarget(ref="e3") and action.files == ()
    with pytest.raises(BadRequest):
        build(system, "upload", ref="e3", selector="#x", files=[])


def test_mouse_and_keyboard_records(system: Any) -> None:
    action = build(system, "mouse", action="wheel", x=1, y=2, deltaY=-30)
    assert action == inp.MouseInput(action="wheel", x=1.0, y=2.0, delta_y=-30.0)
    assert build(system, "keyboard", action="down", key="Shift") == inp.KeyInput(
        action="down", key="Shift")
    assert build(system, "keyboard", action="insertText", text="hé") == inp.KeyInput(
        action="insertText", text="hé")
    for body in ({"action": "down"}, {"action": "up", "key": "Control+a"},
                 {"action": "insertText"}, {"action": "insertText", "text": "x", "key": "a"},
                 {"action": "down", "key": "a", "text": "a"}):
        with pytest.raises(BadRequest):
            build(system, "keyboard", **body)
    with pytest.raises(BadRequest):
        build(system, "mouse", action="jump", x=1, y=2)
