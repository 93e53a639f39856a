// Page functions of /eval's size bound (tabs/bounded_eval.py), run in the page's main
// world in one round trip, so no page task runs in between.

/**
 * Evaluate `source` (the caller's script) by an indirect eval (global scope, completion
 * value) and answer its value when its JSON form is at most `max` UTF-8 bytes, else
 * {[marker]: size}. With `awaitPromise`, the settled value of a promise is measured.
 */
function boundedEval(source, max, marker, awaitPromise) {
  const value = (0, eval)(source);
  const bounded = (v) => boundedValue(v, max, marker);
  return awaitPromise ? Promise.resolve(value).then(bounded) : bounded(value);
}

/**
 * `value` when its JSON form is at most `max` UTF-8 bytes (or JSON cannot measure it),
 * else {[marker]: size}. A string longer than `max` is measured by its length.
 */
function boundedValue(value, max, marker) {
  let size = -1;
  try {
    if (typeof value === 'string' && value.length > max) size = value.length;
    else {
      const json = JSON.stringify(value);
      size = typeof json === 'string' ? utf8Bytes(json, max) : 0;
    }
  } catch (e) { size = -1; }
  return size > max ? {[marker]: size} : value;
}

/**
 * The UTF-8 length of the string `s`, counted only until it passes `max` (UTF-8 is never
 * shorter than UTF-16, so a string longer than `max` answers its length at once).
 */
function utf8Bytes(s, max) {
  if (s.length > max) return s.length;
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c < 0xdc00 && i + 1 < s.length) { n += 4; i++; }
    else n += 3;
    if (n > max) return n;
  }
  return n;
}
