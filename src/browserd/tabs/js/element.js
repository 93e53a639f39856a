// Page functions shared by the actions on one element (tabs/actions/element.py and the
// modules built on it). They run in the element's `browserd` isolated world.

/**
 * The deepest focused element of `doc`, following open shadow roots (null: none).
 */
function deepActiveElement(doc) {
  let a = doc.activeElement;
  while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
  return a;
}

/**
 * A promise that resolves (true) once the frame has drawn two more frames.
 */
function twoFramesDrawn() {
  return new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))));
}
