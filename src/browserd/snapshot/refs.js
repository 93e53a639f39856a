// Snapshot walker, part of one function body with walker.js (see there):
// refs — allocation (makeRefs), sweeping of collected elements, lookup and
// resolve(ref, role, name), and the scope a call is limited to (scopeRoot).

// ---- refs -------------------------------------------------------------
function sweep() {
  if (S.byRef.size < S.sweepAt) return;
  for (const [ref, rec] of S.byRef) {
    if (!rec.w.deref()) { S.byRef.delete(ref); S.gone.add(ref); }
  }
  S.sweepAt = Math.max(20000, S.byRef.size * 2);
}

// Connected, and (for elements of same-origin subframes) every frame
// element up to this world's document still connected too.
function isLive(el) {
  for (let e = el; e;) {
    if (!e.isConnected) return false;
    const doc = e.ownerDocument;
    if (doc === document) return true;
    const view = doc.defaultView;
    if (!view) return false;
    let fe = null;
    try { fe = view.frameElement; } catch (_) { return false; }
    e = fe;
  }
  return false;
}

function frameIndex(frameEl) {
  try {
    const w = frameEl.contentWindow;
    const pw = frameEl.ownerDocument.defaultView;
    if (!w || !pw) return -1;
    for (let i = 0; i < pw.frames.length; i++) if (pw.frames[i] === w) return i;
  } catch (_) { /* fall through */ }
  return -1;
}

// The record of a ref: the live element, or why there is none.
function lookup(ref) {
  const rec = typeof ref === 'string' ? S.byRef.get(ref) : undefined;
  if (!rec) return { stale: S.gone.has(ref) ? 'detached' : 'unknown' };
  const el = rec.w.deref();
  if (!el || !isLive(el)) return { stale: 'detached' };
  return { el, rec };
}

function resolve(ref, expectRole, expectName) {
  const r = lookup(ref);
  if (!r.el) return { stale: r.stale };
  const d = describe(r.el);
  const role = expectRole == null ? r.rec.role : expectRole;
  const name = expectName == null ? r.rec.name : expectName;
  if (d.role !== role || d.name !== name) return { stale: 'changed', role: d.role, name: d.name };
  return r.el;
}

function scopeRoot(opts) {
  if (opts.rootRef) {
    const r = lookup(opts.rootRef);
    if (!r.el) return { error: { code: 'STALE_REF', reason: r.stale, ref: opts.rootRef } };
    return { el: r.el };
  }
  if (opts.rootSelector) {
    let el = null;
    try {
      el = document.querySelector(opts.rootSelector);
    } catch (e) {
      return { error: { code: 'BAD_SELECTOR', message: String(e && e.message) } };
    }
    if (!el) return { error: { code: 'NO_MATCH', selector: opts.rootSelector } };
    return { el };
  }
  return { el: null };
}

// Ref allocation shared by snapshot and domSnapshot.
function makeRefs(opts) {
  let next = Math.max(opts.nextRef | 0, S.maxRef + 1, 1);
  const self = {
    issued: 0,
    get next() { return next; },
    refFor(el, role, name) {
      let ref = S.refOf.get(el);
      if (ref === undefined) {
        S.maxRef = next;
        ref = 'e' + next++;
        S.refOf.set(el, ref);
        S.byRef.set(ref, { w: new WeakRef(el), role, name: cap(name, ID_NAME) });
        self.issued++;
      } else {
        const rec = S.byRef.get(ref);
        if (rec) { rec.role = role; rec.name = cap(name, ID_NAME); }
        else S.byRef.set(ref, { w: new WeakRef(el), role, name: cap(name, ID_NAME) });
      }
      return ref;
    },
  };
  return self;
}

// The start every view that issues refs shares (snapshot lines, find): the
// call's scope (or its error), the ref map swept, then body(opts, scope,
// refs, t0) with the label index and the line cap in place.
function refView(opts, body) {
  opts = opts || {};
  const t0 = performance.now();
  const scope = scopeRoot(opts);
  if (scope.error) return { error: scope.error };
  sweep();
  const refs = makeRefs(opts);
  return withLabels(() => withLineCap(opts, () => body(opts, scope, refs, t0)));
}
