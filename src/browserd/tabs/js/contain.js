// Page functions of egress containment (tabs/contain.py), run in every document of a
// contained page before its own scripts.

/**
 * Remove the APIs whose connections the guard cannot hold (service and shared workers,
 * WebTransport, WebRTC) from the page's globals; a property that cannot be deleted is
 * left as it is.
 */
function removeUnheldApis() {
  for (const [o, k] of [[globalThis.Navigator && Navigator.prototype, 'serviceWorker'],
                        [globalThis, 'ServiceWorkerContainer'],
                        [globalThis, 'ServiceWorkerRegistration'], [globalThis, 'ServiceWorker'],
                        [globalThis, 'SharedWorker'], [globalThis, 'WebTransport'],
                        [globalThis, 'RTCPeerConnection'], [globalThis, 'webkitRTCPeerConnection']]) {
    try { if (o) delete o[k]; } catch (e) {}
  }
}
