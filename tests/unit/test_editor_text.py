"""How typed text is compared with what an editor shows, and the platform's select-all."""

from __future__ import annotations

from browserd.tabs.actions.editors import mac_platform, same_text, text_contains
from browserd.tabs.actions.keyboard import clearing_keys


def test_white_space_and_invisible_characters_do_not_count():
    assert same_text("select\u00a0*\u00a0from t\n", "select * from t")
    assert same_text("\u200b", "")
    assert same_text("a\n\nb", "a\nb")
    assert not same_text("select 1 as oneselect * from t", "select * from t")
    assert not same_text("select count()", "select count(")


def test_appended_text_is_found_anywhere_in_the_editor():
    assert text_contains("select * from t where 1", " where 1")
    assert not text_contains("select * from t", "where")


def _spelled(keys):
    return [(chord.modifiers, chord.key.key, commands) for chord, commands in keys]


def test_clearing_is_select_all_and_backspace_with_the_commands_on_macos():
    assert _spelled(clearing_keys(True)) == [(("Meta",), "a", ("selectAll",)),
                                              ((), "Backspace", ("deleteBackward",))]
    assert _spelled(clearing_keys(False)) == [(("Control",), "a", ()), ((), "Backspace", ())]


def test_select_all_follows_the_platform_the_page_reports():
    for platform in ("MacIntel", "MacPPC", "Macintosh"):
        assert mac_platform(platform), platform
    for platform in ("Linux x86_64", "Win32", "iPhone", "", "macintel", "Linux Mac"):
        assert not mac_platform(platform), platform
