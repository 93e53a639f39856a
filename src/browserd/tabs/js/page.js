// Page functions of page work (tabs/page.py), in the page's own (main) world.

/**
 * The current document's URL, title and HTTP status, as {url, title, status} (status:
 * the navigation entry's `responseStatus`, null when the page cannot say).
 */
function pageInfo() {
  return {url: location.href, title: document.title,
          status: (performance.getEntriesByType('navigation')[0] || {}).responseStatus || null};
}
