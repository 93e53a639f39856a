// Page functions of file uploads (tabs/actions/upload.py).

/**
 * The file input `this` is (or, for a <label>, controls); else a word for what it is
 * instead ("input type=text", a tag name).
 */
function fileInputOf() {
  let el = this;
  if (el.localName === 'label' && el.control) el = el.control;
  if (el.localName === 'input' && el.type === 'file') return el;
  return el.localName === 'input' ? 'input type=' + el.type : el.localName;
}

/**
 * What an upload needs to know of `this` (a file input): {multiple, disabled}.
 */
function fileInputFacts() {
  return {multiple: this.multiple, disabled: this.disabled};
}
