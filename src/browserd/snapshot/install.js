// Snapshot walker, part of one function body with walker.js (see there),
// joined last: every part's declarations have run when the entry points
// are published.

G.__browserd = Object.freeze({
  version: VERSION,
  snapshot,
  resolve,
  describe,
  findByText,
  readView,
  domSnapshot,
  find,
});
return 'installed';
