// Page functions of keyboard actions (tabs/actions/keyboard.py).

/**
 * After DOM.focus on `this`: does keyboard text land somewhere editable? Focus may move
 * into a widget's inner field, so the deep active element is what counts. Answers "ok",
 * or what the focused element is instead ("readonly input", "input type=checkbox", a tag
 * name; `this`'s own tag name when nothing has focus).
 */
function typingTarget() {
  const a = deepActiveElement(this.ownerDocument);
  if (!a) return this.localName;
  if (a.isContentEditable) return 'ok';
  const tag = a.localName;
  if (tag === 'textarea') return (a.readOnly || a.disabled) ? 'readonly textarea' : 'ok';
  if (tag === 'input') {
    const nonText = ['button', 'submit', 'reset', 'checkbox', 'radio', 'file', 'image',
                     'range', 'color', 'hidden'];
    if (nonText.includes(a.type)) return 'input type=' + a.type;
    return (a.readOnly || a.disabled) ? 'readonly input' : 'ok';
  }
  return tag;
}

/**
 * Empty `this` (an input or textarea) through the native value setter, with an input
 * event as a deletion makes. Answers "value" (emptied), "kept" (the page put text back),
 * "none" (no input or textarea) or "proxy": an invisible field is some widget's key proxy
 * (its text is drawn elsewhere and follows keys only), so it is left alone.
 */
function clearField() {
  const el = this, tag = el.localName;
  if (tag !== 'input' && tag !== 'textarea') return 'none';
  const box = el.getBoundingClientRect(), cs = el.ownerDocument.defaultView.getComputedStyle(el);
  if (box.width < 4 || box.height < 4 || parseFloat(cs.opacity) === 0) return 'proxy';
  const proto = tag === 'input' ? HTMLInputElement.prototype : HTMLTextAreaElement.prototype;
  const setter = Object.getOwnPropertyDescriptor(proto, 'value').set;
  setter.call(el, '');
  el.dispatchEvent(new InputEvent('input', {bubbles: true, composed: true,
                                            inputType: 'deleteContentBackward'}));
  return el.value === '' ? 'value' : 'kept';
}
