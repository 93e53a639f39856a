// Page functions of what an agent reads (tabs/snapshots.py).

/**
 * The document's URL and title, as the JSON text [href, title].
 */
function pageIdentity() {
  return JSON.stringify([location.href, document.title]);
}
