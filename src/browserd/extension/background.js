// browserd extension: the service worker.
//
// It keeps one WebSocket to browserd's relay (ws://127.0.0.1:<port>/relay) and
// relays Chrome DevTools Protocol traffic for the tabs the user shares:
//
// - Clicking the toolbar icon pins the tab: chrome.debugger attaches to it
//   (Chrome shows its "is debugging this browser" bar), the badge turns the
//   profile's colour, and the relay is told `pinned`. Clicking again detaches
//   and tells `unpinned`. Closing the bar or the tab ends the pin (`detached`).
// - The relay asks: `send` (a CDP command on a pinned tab), `create` (a new tab
//   for the agent, in a tab group named after the profile), `close` (only tabs
//   the agent created), `activate` (bring a pinned tab to the front). Each is
//   answered with `result` or `error` carrying the request's id. `release`
//   (the agent let go of a tab) unpins it; it has no answer.
// - CDP events of pinned tabs go to the relay as `event`.
//
// When the relay connection ends, every pin is dropped (detached): after a
// reconnect nothing is shared again until the user clicks again.
//
// The relay token comes from pairing (the options page, or browserdPair below)
// and is kept in chrome.storage.local; it is sent in the first message (hello),
// never in the URL.

"use strict";

const DEFAULT_PORT = 18791;
const RECONNECT_MIN_MS = 1000;
const RECONNECT_MAX_MS = 30000;
const UNAUTHORIZED = 4401;

let socket = null;       // the relay WebSocket (open or opening)
let welcome = null;      // {profile, color, groupColor} once the relay accepted us
let backoffMs = RECONNECT_MIN_MS;
let reconnectTimer = null;
let lastProblem = "";    // shown on the options page
const pins = new Map();  // tabId -> {agent: boolean, targetId: string}

// -- pairing ------------------------------------------------------------------

async function browserdPair(code, port) {
  port = Number(port) || DEFAULT_PORT;
  const response = await fetch(`http://127.0.0.1:${port}/relay/pair`, {
    method: "POST",
    headers: {"content-type": "application/json"},
    body: JSON.stringify({code: String(code)}),
  });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) {
    throw new Error(body.error || `pairing failed (HTTP ${response.status})`);
  }
  await chrome.storage.local.set({port, token: body.token, profile: body.profile});
  lastProblem = "";
  disconnect();
  await connect();
  return {profile: body.profile};
}

// -- the relay connection -----------------------------------------------------

async function connect() {
  clearTimeout(reconnectTimer);
  reconnectTimer = null;
  if (socket) return;
  const {port, token} = await chrome.storage.local.get(["port", "token"]);
  if (!token || socket) return;
  const ws = new WebSocket(`ws://127.0.0.1:${port || DEFAULT_PORT}/relay`);
  socket = ws;
  ws.onopen = () => {
    ws.send(JSON.stringify({type: "hello", version: 1, token, userAgent: navigator.userAgent}));
  };
  ws.onmessage = (event) => onRelayMessage(ws, event.data);
  ws.onclose = (event) => onClosed(ws, event.code);
}

function disconnect() {
  const ws = socket;
  socket = null;
  welcome = null;
  dropAllPins();
  if (ws) ws.close(1000);
}

function onClosed(ws, code) {
  if (socket !== ws) return;
  socket = null;
  welcome = null;
  dropAllPins();
  if (code === UNAUTHORIZED) {
    lastProblem = "browserd refused this extension: pair it again";
    return;
  }
  reconnectTimer = setTimeout(connect, backoffMs);
  backoffMs = Math.min(backoffMs * 2, RECONNECT_MAX_MS);
}

function send(message) {
  if (socket && socket.readyState === WebSocket.OPEN && welcome) {
    socket.send(JSON.stringify(message));
  }
}

function onRelayMessage(ws, data) {
  let message;
  try {
    message = JSON.parse(data);
  } catch (e) {
    return;
  }
  switch (message.type) {
    case "welcome":
      welcome = {profile: message.profile, color: message.color,
                 groupColor: message.groupColor || "blue"};
      backoffMs = RECONNECT_MIN_MS;
      lastProblem = "";
      break;
    case "refused":
      lastProblem = message.message || message.code;
      break;
    case "ping":
      ws.send(JSON.stringify({type: "pong"}));
      break;
    case "send":
      answer(message.id, sendCommand(message));
      break;
    case "create":
      answer(message.id, createTab(message));
      break;
    case "close":
      answer(message.id, closeTab(message.tabId));
      break;
    case "activate":
      answer(message.id, activateTab(message.tabId));
      break;
    case "release":  // the agent let go of a shared tab: stop sharing it, keep the page
      unpin(message.tabId);
      break;
  }
}

function answer(id, promise) {
  promise.then(
    (result) => send({type: "result", id, result: result || {}}),
    (error) => send({type: "error", id, ...cdpError(error)}));
}

function cdpError(error) {
  const text = String((error && error.message) || error);
  try {
    const parsed = JSON.parse(text);  // chrome.debugger reports {"code", "message"} as text
    if (typeof parsed.code === "number") return {code: parsed.code, message: String(parsed.message)};
  } catch (e) { /* not JSON */ }
  return {code: -32000, message: text};
}

// -- the relay's requests -----------------------------------------------------

function requirePinned(tabId) {
  if (!pins.has(tabId)) throw new Error("this tab is not shared with browserd");
}

async function sendCommand({tabId, sessionId, method, params}) {
  requirePinned(tabId);
  const target = sessionId ? {tabId, sessionId} : {tabId};
  return chrome.debugger.sendCommand(target, method, params || {});
}

async function createTab({url, background}) {
  if (!welcome) throw new Error("not connected");
  const tab = await chrome.tabs.create({url: "about:blank", active: !background});
  await chrome.debugger.attach({tabId: tab.id}, "1.3");
  pins.set(tab.id, {agent: true, targetId: ""});
  await putInGroup(tab);
  await showPinned(tab.id);
  const info = await targetInfo(tab.id);
  pins.get(tab.id).targetId = info.targetId;
  if (url && url !== "about:blank") await chrome.tabs.update(tab.id, {url});
  return {tabId: tab.id, targetInfo: info};
}

async function putInGroup(tab) {
  const title = welcome.profile;
  const groups = await chrome.tabGroups.query({windowId: tab.windowId, title});
  const options = {tabIds: [tab.id]};
  if (groups.length) options.groupId = groups[0].id;
  else options.createProperties = {windowId: tab.windowId};
  const groupId = await chrome.tabs.group(options);
  await chrome.tabGroups.update(groupId, {title, color: welcome.groupColor});
}

async function closeTab(tabId) {
  const pin = pins.get(tabId);
  if (!pin || !pin.agent) throw new Error("browserd closes only the tabs it opened");
  await chrome.tabs.remove(tabId);
  return {};
}

async function activateTab(tabId) {
  requirePinned(tabId);
  const tab = await chrome.tabs.update(tabId, {active: true});
  await chrome.windows.update(tab.windowId, {focused: true});
  return {};
}

// -- pinning --------------------------------------------------------------------

async function browserdToggle(tab) {
  if (!tab || tab.id === undefined) return {pinned: false};
  if (pins.has(tab.id)) {
    await unpin(tab.id);
    return {pinned: false};
  }
  if (!welcome) {
    const {token} = await chrome.storage.local.get(["token"]);
    if (!token) {
      await chrome.runtime.openOptionsPage();  // not paired yet: the page says how
      return {pinned: false, error: "not paired"};
    }
    await chrome.action.setBadgeText({tabId: tab.id, text: "off"});
    connect();  // a worker that slept through browserd's restart tries again now
    return {pinned: false, error: "browserd is not connected; click again in a moment"};
  }
  await chrome.debugger.attach({tabId: tab.id}, "1.3");  // throws for chrome:// pages
  pins.set(tab.id, {agent: false, targetId: ""});
  await showPinned(tab.id);
  const info = await targetInfo(tab.id);
  pins.get(tab.id).targetId = info.targetId;
  send({type: "pinned", tabId: tab.id, targetInfo: info});
  return {pinned: true, targetId: info.targetId};
}

async function unpin(tabId) {
  if (!pins.delete(tabId)) return;
  await chrome.debugger.detach({tabId}).catch(() => {});
  await clearBadge(tabId);
  send({type: "unpinned", tabId});
}

function dropAllPins() {
  for (const tabId of [...pins.keys()]) {
    pins.delete(tabId);
    chrome.debugger.detach({tabId}).catch(() => {});
    clearBadge(tabId);
  }
}

async function targetInfo(tabId) {
  const tab = await chrome.tabs.get(tabId);
  const targets = await chrome.debugger.getTargets();
  const target = targets.find((t) => t.tabId === tabId && t.type === "page");
  return {targetId: target ? target.id : `tab-${tabId}`, type: "page",
          title: tab.title || "", url: tab.url || ""};
}

async function showPinned(tabId) {
  await chrome.action.setBadgeText({tabId, text: "ON"});
  await chrome.action.setBadgeBackgroundColor({tabId, color: welcome.color || "#0066CC"});
  await chrome.action.setTitle({tabId, title:
    `browserd (${welcome.profile}) drives this tab. Click to stop sharing it.`});
}

async function clearBadge(tabId) {
  try {
    await chrome.action.setBadgeText({tabId, text: ""});
    await chrome.action.setTitle({tabId, title: "browserd: click to share this tab with the agent"});
  } catch (e) { /* the tab is gone */ }
}

// -- Chrome's events ----------------------------------------------------------

chrome.action.onClicked.addListener((tab) => {
  browserdToggle(tab).catch((error) => {
    // e.g. chrome:// pages and other extensions' pages cannot be debugged
    chrome.action.setBadgeText({tabId: tab.id, text: "!"});
    chrome.action.setTitle({tabId: tab.id, title: `browserd cannot share this tab: ${error.message}`});
  });
});

chrome.debugger.onEvent.addListener((source, method, params) => {
  if (source.tabId === undefined || !pins.has(source.tabId)) return;
  const message = {type: "event", tabId: source.tabId, method, params: params || {}};
  if (source.sessionId) message.sessionId = source.sessionId;
  send(message);
});

chrome.debugger.onDetach.addListener((source, reason) => {
  if (source.tabId === undefined || !pins.delete(source.tabId)) return;
  clearBadge(source.tabId);
  send({type: "detached", tabId: source.tabId, reason});
});

chrome.tabs.onUpdated.addListener((tabId, change, tab) => {
  const pin = pins.get(tabId);
  if (!pin || (change.title === undefined && change.url === undefined)) return;
  send({type: "tabUpdated", tabId, targetInfo: {targetId: pin.targetId, type: "page",
        title: tab.title || "", url: tab.url || ""}});
});

chrome.runtime.onMessage.addListener((message, sender, reply) => {
  if (sender.id !== chrome.runtime.id) return false;
  if (message.type === "pair") {
    browserdPair(message.code, message.port).then(reply, (e) => reply({error: e.message}));
    return true;
  }
  if (message.type === "status") {
    chrome.storage.local.get(["port", "profile", "token"]).then((stored) => reply({
      connected: Boolean(welcome), profile: welcome ? welcome.profile : stored.profile || null,
      paired: Boolean(stored.token), port: stored.port || DEFAULT_PORT, pinned: pins.size,
      problem: lastProblem,
    }));
    return true;
  }
  return false;
});

chrome.runtime.onStartup.addListener(() => { connect(); });
chrome.runtime.onInstalled.addListener(() => { connect(); });

// A restarted worker has no pins: detach whatever this extension still holds.
chrome.debugger.getTargets().then((targets) => {
  for (const t of targets) {
    if (t.attached && t.tabId !== undefined && !pins.has(t.tabId)) {
      chrome.debugger.detach({tabId: t.tabId}).catch(() => {});
    }
  }
});

// For tests and the options page (a test calls these through the worker's DevTools target).
self.browserdPair = browserdPair;
self.browserdToggle = browserdToggle;
self.browserdStatus = () => ({connected: Boolean(welcome), pinned: [...pins.keys()],
                              problem: lastProblem});

connect();
