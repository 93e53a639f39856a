// Page functions of pointer actions (tabs/actions/pointer.py): where a mouse press on an
// element lands, and the DOM fallbacks when it cannot.

/**
 * Where a mouse press on `this` (an element) would land, in its document's coordinates
 * plus the offset of the frames between it and the world's own document.
 *
 * `quads` are the element's content quads (DOM.getContentQuads, relative to the
 * frame the session sees); `baseX`/`baseY` the origin of the world's frame in them.
 * Answers {x, y} when the centre of the first visible quad hits the element (or
 * something inside it); {x, y, covered: {tag, id, className, role, name}} when another
 * element is on top; or {detached | noFrame | offscreen | noBox: true}.
 */
function clickPoint(quads, baseX, baseY) {
  const el = this;
  if (!el.isConnected) return {detached: true};
  const doc = el.ownerDocument, view = doc.defaultView;
  let ox = baseX, oy = baseY;
  for (let w = view; w && w.document !== document;) {
    let fe = null;
    try { fe = w.frameElement; } catch (e) { fe = null; }
    if (!fe) return {noFrame: true};
    const r = fe.getBoundingClientRect();
    const cs = fe.ownerDocument.defaultView.getComputedStyle(fe);
    ox += r.left + fe.clientLeft + (parseFloat(cs.paddingLeft) || 0);
    oy += r.top + fe.clientTop + (parseFloat(cs.paddingTop) || 0);
    w = fe.ownerDocument.defaultView;
  }
  const point = visibleCentre(quads, ox, oy, view.innerWidth, view.innerHeight);
  if (!point) return quadsHaveArea(quads) ? {offscreen: true} : {noBox: true};
  let hit = doc.elementFromPoint(point[0], point[1]);
  while (hit && hit.shadowRoot) {
    const inner = hit.shadowRoot.elementFromPoint(point[0], point[1]);
    if (!inner || inner === hit) break;
    hit = inner;
  }
  const x = point[0] + ox, y = point[1] + oy;
  if (hitsElement(el, hit)) return {x, y};
  if (!hit) return {offscreen: true};
  return {x, y, covered: coverOf(hit)};
}

/**
 * Whether any of `quads` has an area (at least 1 px wide and high).
 */
function quadsHaveArea(quads) {
  for (const q of quads) {
    const w = Math.max(q[0], q[2], q[4], q[6]) - Math.min(q[0], q[2], q[4], q[6]);
    const h = Math.max(q[1], q[3], q[5], q[7]) - Math.min(q[1], q[3], q[5], q[7]);
    if (w >= 1 && h >= 1) return true;
  }
  return false;
}

/**
 * The centre [x, y] of the visible part of the first quad (moved by -ox, -oy) that shows
 * at least 1 px inside a vw × vh viewport; null when none does.
 */
function visibleCentre(quads, ox, oy, vw, vh) {
  for (const q of quads) {
    const w = Math.max(q[0], q[2], q[4], q[6]) - Math.min(q[0], q[2], q[4], q[6]);
    const h = Math.max(q[1], q[3], q[5], q[7]) - Math.min(q[1], q[3], q[5], q[7]);
    if (w < 1 || h < 1) continue;
    const xs = [q[0], q[2], q[4], q[6]].map(v => v - ox);
    const ys = [q[1], q[3], q[5], q[7]].map(v => v - oy);
    const l = Math.max(0, Math.min(...xs)), r = Math.min(vw, Math.max(...xs));
    const t = Math.max(0, Math.min(...ys)), b = Math.min(vh, Math.max(...ys));
    if (r - l >= 1 && b - t >= 1) return [(l + r) / 2, (t + b) / 2];
  }
  return null;
}

/**
 * Whether the hit-tested element `hit` is `el` or inside it (across shadow roots). A
 * closed shadow root hides its inside from the hit test, which stops at the host: a
 * target inside that host's shadow tree counts as hit.
 */
function hitsElement(el, hit) {
  const up = n => n.parentNode || n.host || null;
  for (let n = hit; n; n = up(n)) if (n === el) return true;
  if (hit && !hit.shadowRoot) {
    for (let n = el; n; n = up(n)) if (n.nodeType === 11 && n.host === hit) return true;
  }
  return false;
}

/**
 * What covers the target: {tag, id, className, role, name}, each cut to 200 characters
 * (role and name as the walker describes the element when it is installed).
 */
function coverOf(hit) {
  const B = globalThis.__browserd;
  let d = null;
  try { d = B && B.describe ? B.describe(hit) : null; } catch (e) { d = null; }
  const cls = typeof hit.className === 'string' ? hit.className : (hit.getAttribute('class') || '');
  const cap = s => String(s || '').replace(/\s+/g, ' ').trim().slice(0, 200);
  return {
    tag: hit.localName, id: cap(hit.id), className: cap(cls),
    role: cap(d ? d.role : hit.getAttribute('role')),
    name: cap(d ? d.name : (hit.getAttribute('aria-label') || hit.textContent)),
  };
}

/**
 * The DOM click fallback: `this.click()` (run with a user gesture).
 */
function clickElement() {
  this.click();
}

/**
 * The DOM hover fallback: mouseover, mouseenter and mousemove dispatched on `this`
 * (CSS :hover does not apply).
 */
function hoverByEvents() {
  const o = {bubbles: true, cancelable: true, composed: true, view: this.ownerDocument.defaultView};
  this.dispatchEvent(new MouseEvent('mouseover', o));
  this.dispatchEvent(new MouseEvent('mouseenter', {...o, bubbles: false}));
  this.dispatchEvent(new MouseEvent('mousemove', o));
}
