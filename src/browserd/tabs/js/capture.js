// Page functions of captures (tabs/capture.py), in the main frame's `browserd` world.

/**
 * The width of the main document's vertical scrollbar gutter in CSS px:
 * `innerWidth - clientWidth` (0: the page shows none).
 */
function scrollbarGutter() {
  return window.innerWidth - document.documentElement.clientWidth;
}
