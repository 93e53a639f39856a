"""Session records, the pure parts: scripts, HTML, replay plans and the store's bounds."""

from __future__ import annotations

import ast
import json
import threading
from collections.abc import Mapping
from pathlib import Path

import pytest
import trio

from browserd.errors import Conflict, NotFound
from browserd.records import Call, RecordStore, ShotData, Step, Target
from browserd.records.html import record_html
from browserd.records.replay import replay_plan
from browserd.records.scripts import locator_expression, script
from browserd.retention import Retention


def _step(index: int, kind: str, ok: bool = True, **args: object) -> Step:
    targets = {}
    if "target" in args:
        target = args.pop("target")
        assert isinstance(target, Target)
        targets["element"] = target
    return Step(index=index, call=Call(kind=kind, args=args, targets=targets), started_at=1.0,
                duration_ms=2.0, ok=ok, error=None if ok else {"code": "NO_MATCH"})


PAY = Target(ref="e7", role="button", name="Pay", exact=True)
STEPS = [
    _step(0, "navigate", url="https://shop.test/"),
    _step(1, "type", target=Target(ref="e3", role="textbox", name="Card \"number\"",
                                   exact=True), secret="card", clear=True),
    _step(2, "select", target=Target(ref="e4", role="combobox", name="Plan", exact=True),
          values=["pro"]),
    _step(3, "click", ok=False, target=Target(ref="e9", role="link", name="Gone")),
    _step(4, "click", target=PAY),
    _step(5, "dialog", accept=True),
]


def test_a_python_script_names_elements_by_role_and_name_never_by_ref() -> None:
    code = script(STEPS, "python", record_id="rec-1")
    ast.parse(code)  # valid Python whatever the names hold
    assert 'page.goto("https://shop.test/")' in code
    assert 'page.get_by_role("button", name="Pay", exact=True).click()' in code
    assert ('page.get_by_role("textbox", name="Card \\"number\\"", exact=True)'
            '.fill(os.environ["BROWSERD_SECRET_CARD"])') in code
    assert 'select_option(["pro"])' in code
    assert "e7" not in code and "e3" not in code
    assert "step 3 failed when recorded (NO_MATCH): left out" in code
    # The dialog the click opened is answered by a handler set before the click.
    handler = code.index('page.once("dialog", lambda dialog: dialog.accept())')
    assert handler < code.index('name="Pay"')


def test_a_typescript_script_awaits_each_action() -> None:
    code = script(STEPS, "typescript")
    assert 'await page.getByRole("button", { name: "Pay", exact: true }).click();' in code
    assert 'await page.goto("https://shop.test/");' in code
    assert 'process.env["BROWSERD_SECRET_CARD"]!' in code


def test_page_text_cannot_become_code() -> None:
    hostile = Target(ref="e1", role="button", name='x")\nimport os; os.system("boom")#',
                     exact=True)
    code = script([_step(0, "click", target=hostile)], "python")
    tree = ast.parse(code)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Attribute) and n.func.attr == "system"]
    assert not calls
    assert "\nimport os; os" not in code


def test_locators_fall_back_to_selector_then_text() -> None:
    assert locator_expression(Target(selector="#go"), "python") == 'page.locator("#go")'
    assert locator_expression(Target(text="Go"), "python") == 'page.get_by_text("Go")'
    # A browserd role Playwright has not got: the selector instead.
    assert locator_expression(Target(role="text", name="x", selector="p"), "python") == \
        'page.locator("p")'
    # A name the snapshot cut ("…") is matched as a part, not whole.
    cut = Target(ref="e2", role="link", name="A very long na…", exact=True)
    assert locator_expression(cut, "python") == 'page.get_by_role("link", name="A very long na")'
    assert locator_expression(Target(ref="e5"), "python") is None


def test_a_replay_plan_uses_role_and_name_and_skips_failed_steps() -> None:
    plan = replay_plan(STEPS)
    assert [p.index for p in plan] == [0, 1, 2, 4, 5]
    click = plan[3]
    assert click.path == "/click"
    assert click.body == {"role": "button", "name": "Pay", "exact": True}
    assert plan[1].body == {"role": "textbox", "name": 'Card "number"', "exact": True,
                            "secret": "card", "clear": True}


def test_a_replay_plan_names_a_ref_only_upload_as_a_problem() -> None:
    upload = _step(0, "upload", target=Target(ref="e1", role="button", name="File"),
                   files=["a.txt"])
    (planned,) = replay_plan([upload])
    assert planned.problem is not None
    by_selector = _step(0, "upload", target=Target(ref="e1", selector="#f"), files=["a.txt"])
    assert replay_plan([by_selector])[0].body == {"selector": "#f", "files": ["a.txt"]}


def test_an_act_batch_is_planned_as_one_act_call() -> None:
    act = Step(index=0, call=Call(kind="act", args={"timeoutMs": 9000}), started_at=0,
               duration_ms=1, ok=True,
               actions=(Call(kind="click", args={"ref": "e7"}, targets={"element": PAY}),
                        Call(kind="press", args={"key": "Enter"})))
    (planned,) = replay_plan([act])
    assert planned.path == "/act"
    assert planned.body == {"timeoutMs": 9000, "actions": [
        {"kind": "click", "role": "button", "name": "Pay", "exact": True},
        {"kind": "press", "key": "Enter"}]}


def test_the_html_page_escapes_page_content_and_inlines_shots() -> None:
    from browserd.records import RecordInfo, Shot

    info = RecordInfo(id="rec-x", principal="default", profile="default", session=None,
                      target_id=None, started_at=0.0, stopped_at=1.0)
    step = Step(index=0, call=Call(kind="click", args={"ref": "e1"}, targets={
        "element": Target(ref="e1", role="button", name="<img src=x onerror=alert(1)>")}),
        started_at=0.0, duration_ms=1.0, ok=True, title="<script>alert(1)</script>",
        before=Shot(name="0000-before.jpeg", width=320, height=200, bytes=3))
    page = record_html(info, [step], {"0000-before.jpeg": b"\xff\xd8\xff"})
    assert "<script>" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "data:image/jpeg;base64,/9j/" in page
    assert "default-src 'none'" in page


async def test_the_store_keeps_steps_and_bounds_records_by_count(tmp_path: Path) -> None:
    store = RecordStore(tmp_path, Retention(max_files=2, max_bytes=10**9, max_age_s=10**9),
                        max_steps=2)
    ids = []
    for _ in range(3):
        info = await store.start("default", "s1", "agent", None)
        active = store.active_for("default", "s1", "agent")
        assert active is not None and store.active_for("default", "s1", "other") is None
        with pytest.raises(Conflict):
            await store.start("default", "s1", "agent", None)
        shot = ShotData(data=b"\xff\xd8jpeg", width=320, height=200)
        for _ in range(3):  # the third is beyond max_steps
            await store.append(active, _step(0, "click", target=PAY), {"before": shot})
        stopped = await store.stop("default", "s1", "agent")
        assert stopped.steps == 2 and stopped.truncated
        ids.append(info.id)
        await trio.sleep(0.01)
    kept = [i.id for i in await store.infos()]
    assert kept == [ids[2], ids[1]]  # newest first; the oldest went
    loaded, steps = await store.load(ids[2])
    assert loaded.steps == 2
    assert [s.index for s in steps] == [0, 1]
    assert steps[0].before is not None
    assert await store.shot(ids[2], steps[0].before.name) == b"\xff\xd8jpeg"
    meta = json.loads((tmp_path / ids[2] / "meta.json").read_text())
    assert meta["truncated"] is True
    with pytest.raises(NotFound):
        await store.load(ids[0])
    with pytest.raises(NotFound):
        await store.load("../etc")
    with pytest.raises(NotFound):
        await store.stop("default", "s1", "agent")
    await store.delete(ids[2])
    assert [i.id for i in await store.infos()] == [ids[1]]


async def test_a_record_ends_with_its_session_and_one_left_recording_reads_as_ended(
        tmp_path: Path) -> None:
    store = RecordStore(tmp_path)
    ended = await store.start("default", "s1", "agent", None)
    await store.start("default", "s1", "other", None)
    kept = await store.start("default", "s2", "agent", None)
    assert store.recorded_sessions() == {("default", "s1"), ("default", "s2")}
    await store.end_session("default", "s1")
    assert store.active_for("default", "s1", "agent") is None
    assert store.active_for("default", "s1", "other") is None
    assert (await store.load(ended.id))[0].recording is False
    # A new run of the service: the record it was recording is ended, and prunable.
    later = RecordStore(tmp_path)
    info, _ = await later.load(kept.id)
    assert info.recording is False and info.stopped_at is not None
    assert all(not i.recording for i in await later.infos())
    assert (await store.load(kept.id))[0].recording is True  # the live store's own


class _StuckDisk(RecordStore):
    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.release = threading.Event()

    def _write_step(self, record_id: str, files: Mapping[str, bytes], line: bytes) -> None:
        self.release.wait(10)


async def test_a_stuck_step_write_is_abandoned_at_its_deadline(tmp_path: Path) -> None:
    store = _StuckDisk(tmp_path)
    try:
        await store.start("default", None, "agent", None)
        active = store.active_for("default", None, "agent")
        assert active is not None
        with pytest.raises(trio.TooSlowError), trio.fail_after(0.2):
            await store.append(active, _step(0, "click", target=PAY), {})
        with trio.fail_after(5):  # the record's lock is free: it stops at once
            stopped = await store.stop("default", None, "agent")
        assert stopped.steps == 0
    finally:
        store.release.set()


def test_the_cli_puts_record_page_text_inside_the_page_boundary() -> None:
    import argparse

    from browserd.cli.format import human
    from browserd.cli.record import RECORD_COMMANDS

    class FakeClient:
        timeout = 60.0

        def __init__(self) -> None:
            self.paths: list[str] = []

        def get(self, path: str, **query: object) -> object:
            self.paths.append(path)
            return {"steps": [{"index": 0, "kind": "click", "ok": True, "durationMs": 1,
                               "targets": {"element": {"role": "button",
                                                       "name": "<</page:x>> Pay"}}}]}

    client = FakeClient()
    args = argparse.Namespace(record_action="show", record_id="rec-a/../b", json=False)
    shown = human(RECORD_COMMANDS["record"](client, args), "n0nce")
    assert shown.startswith("<<page:n0nce>>\n") and shown.endswith("\n<</page:n0nce>>")
    assert "Pay" in shown
    assert client.paths == ["/records/rec-a%2F..%2Fb"]
