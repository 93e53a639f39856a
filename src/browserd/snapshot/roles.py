"""The roles the walker names elements by: WAI-ARIA 1.2's, plus the HTML-AAM roles Chromium
reports for plain elements. Plain data, shared by the CLI (a first word that is a role is
the role) and the scripts records turn into (Playwright's ``get_by_role`` takes most)."""

from __future__ import annotations

__all__ = ["ARIA_ROLES"]

ARIA_ROLES = frozenset({
    # WAI-ARIA 1.2 roles, plus the HTML-AAM roles Chromium reports for plain elements.
    "alert", "alertdialog", "application", "article", "banner", "blockquote", "button",
    "caption", "cell", "checkbox", "code", "columnheader", "combobox", "complementary",
    "contentinfo", "definition", "deletion", "dialog", "directory", "document", "emphasis",
    "feed", "figure", "form", "generic", "grid", "gridcell", "group", "heading", "img",
    "image", "insertion", "link", "list", "listbox", "listitem", "log", "main", "mark",
    "marquee", "math", "menu", "menubar", "menuitem", "menuitemcheckbox", "menuitemradio",
    "meter", "navigation", "none", "note", "option", "paragraph", "presentation",
    "progressbar", "radio", "radiogroup", "region", "row", "rowgroup", "rowheader",
    "scrollbar", "search", "searchbox", "separator", "slider", "spinbutton", "status",
    "strong", "subscript", "superscript", "switch", "tab", "table", "tablist", "tabpanel",
    "term", "textbox", "time", "timer", "toolbar", "tooltip", "tree", "treegrid",
    "treeitem",
})
