"""Snapshot diffs by ref: added, removed, changed lines; the history a tab keeps."""

from __future__ import annotations

from browserd.tabs.diffs import KEPT, SnapshotHistory, diff_lines

BEFORE = """[e1] RootWebArea "todos"
  [e2] textbox "What needs to be done?"
  [e3] listitem
    [e4] checkbox "milk"
  text "1 item left"
"""


def test_a_new_item_is_added_and_a_counter_line_changes_as_text() -> None:
    after = BEFORE.replace('  text "1 item left"\n', '    [e5] checkbox "eggs"\n'
                           '  text "2 items left"\n')
    diff = diff_lines(BEFORE, after)
    assert diff.added == ('    [e5] checkbox "eggs"', '  text "2 items left"')
    assert diff.removed == ('  text "1 item left"',)
    assert diff.changed == ()
    assert diff.chars() < len(after)


def test_a_ref_whose_line_differs_is_changed_not_added() -> None:
    after = BEFORE.replace('[e4] checkbox "milk"', '[e4] checkbox "milk" checked')
    diff = diff_lines(BEFORE, after)
    assert diff.changed == ('    [e4] checkbox "milk" checked',)
    assert diff.added == () and diff.removed == ()
    assert diff_lines(BEFORE, BEFORE).chars() == 0


def test_a_link_whose_target_changes_is_changed_and_refs_inside_lines_are_not_keys() -> None:
    before = ('[e1] RootWebArea "links"\n  [e2] link "Next" → /list?page=2\n'
              '  text "see [e2] above"\n  [e3] link "Tag" → /t?[e2]\n')
    after = before.replace("/list?page=2", "/list?page=3")
    diff = diff_lines(before, after)
    assert diff.changed == ('  [e2] link "Next" → /list?page=3',)
    assert diff.added == () and diff.removed == ()
    # A text line quoting a ref, or a target holding one, is not that ref's line.
    gone = diff_lines(before, before.replace('  text "see [e2] above"\n', ""))
    assert gone.removed == ('  text "see [e2] above"',) and gone.changed == ()


def test_a_gone_ref_is_removed_and_repeated_text_lines_are_counted() -> None:
    before = '[e1] list\n  text "x"\n  text "x"\n'
    diff = diff_lines(before, '[e1] list\n  text "x"\n')
    assert diff.removed == ('  text "x"',) and diff.added == ()
    assert diff_lines(BEFORE, '[e1] RootWebArea "todos"\n').removed[0].strip().startswith(
        "[e2]")


def test_the_history_keeps_the_last_snapshots_with_their_options() -> None:
    history = SnapshotHistory()
    for n in range(KEPT + 2):
        history.remember(f"s{n}", ("aria",), f"text {n}")
    assert history.get("s0") is None and history.get("s1") is None
    assert history.get(f"s{KEPT + 1}") == (("aria",), f"text {KEPT + 1}")
    assert history.latest() == (f"s{KEPT + 1}", ("aria",), f"text {KEPT + 1}")
    assert SnapshotHistory().latest() is None
