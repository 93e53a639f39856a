// The browserd ops page. Everything a page or the agent controls (titles, URLs, reasons,
// errors, log lines) is shown with textContent, never parsed as HTML. Served after
// waiting.js (the "Waiting for you" panel) and records.js (the Records panel) as one
// script, /ui/app.js.
'use strict';
(() => {
  const KEY_STORE = 'browserd-ui-key';
  const KEY_HEADER = 'X-Browserd-UI-Key';
  const STATE_EVERY_MS = 2000;
  const THUMB_EVERY_MS = 5000;
  const $ = (selector) => document.querySelector(selector);

  let key = null;
  let lastRender = '';
  let live = null; // {ws, targetId, meta, frames}
  const thumbs = new Map(); // targetId -> {url, at}
  let tabIds = [];
  let auditLines = [];
  // Health checks (GET /healthz polls): hidden unless the toggle shows them (browserd.ui.audit).
  const HEALTH_CHECK = /^\S+ \S+ who=\S+ profile=\S+ session=\S+ (?:GET|HEAD) \/healthz /;

  // -- helpers ---------------------------------------------------------------------------
  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(props || {})) {
      if (name === 'text') node.textContent = value;
      else if (name === 'class') node.className = value;
      else if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
      else node.setAttribute(name, value);
    }
    for (const child of children) if (child !== null && child !== undefined) node.append(child);
    return node;
  }

  function bytes(n) {
    const units = ['B', 'KB', 'MB', 'GB', 'TB'];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i += 1; }
    return `${n.toFixed(i ? 1 : 0)} ${units[i]}`;
  }

  function duration(s) {
    if (s === null || s === undefined) return '-';
    s = Math.floor(s);
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
    return h ? `${h} h ${m} min` : m ? `${m} min ${s % 60} s` : `${s} s`;
  }

  function notice(text) { $('#notice').textContent = text || ''; }

  async function api(path, options) {
    const opts = {method: 'GET', headers: {[KEY_HEADER]: key || ''}, cache: 'no-store',
                  credentials: 'same-origin', ...(options || {})};
    if (opts.json !== undefined) {
      opts.headers['Content-Type'] = 'application/json';
      opts.body = JSON.stringify(opts.json);
      delete opts.json;
    }
    const response = await fetch(path, opts);
    if (response.status === 401) { showLogin(); throw new Error('not logged in'); }
    return response;
  }

  async function change(path, body) {
    const response = await api(path, {method: 'POST', json: body || {}});
    const answer = await response.json().catch(() => ({}));
    if (!response.ok) notice(`${answer.code || response.status}: ${answer.error || ''}`);
    else notice('');
    await refresh(true);
    return answer;
  }

  // -- login -----------------------------------------------------------------------------
  function takeKey() {
    const match = /^#key=([A-Za-z0-9_-]{20,200})$/.exec(location.hash);
    if (match) {
      localStorage.setItem(KEY_STORE, match[1]);
      history.replaceState(null, '', '/ui');
    }
    key = localStorage.getItem(KEY_STORE);
  }

  function showLogin() {
    $('#login').hidden = false;
    $('#main').hidden = true;
    $('#logout').hidden = true;
    closeLive();
  }

  // -- state -----------------------------------------------------------------------------
  async function refresh(force) {
    if (!key) { showLogin(); return; }
    if (!force && document.visibilityState !== 'visible') return;
    let state;
    try {
      state = await (await api('/ui/api/state')).json();
    } catch (err) {
      return;
    }
    $('#login').hidden = true;
    $('#main').hidden = false;
    $('#logout').hidden = false;
    render(state);
  }

  function render(state) {
    $('#service').textContent =
      `${state.service.version} · ${state.service.controlUrl} · up ${duration(state.service.uptimeS)}`;
    auditLines = state.audit;
    renderAudit();
    BrowserdWaiting.render(state, {el, change});
    const usage = $('#usage');
    usage.replaceChildren(el('h2', {text: 'Storage'}), el('div', {class: 'usage'},
      el('span', {text: `Media: ${state.media.files} files, ${bytes(state.media.bytes)}`}),
      el('span', {text: `Downloads: ${state.downloads.completed} done, ` +
        `${state.downloads.inProgress} running, ${state.downloads.canceled} cancelled, ` +
        `${bytes(state.downloads.bytes)}` + (state.downloads.enabled ? '' : ' (disabled)')})));
    const signature = JSON.stringify(state.profiles.map((p) => ({...p, uptimeS: null})));
    tabIds = state.profiles.flatMap((p) => p.tabs.map((t) => t.targetId));
    for (const id of [...thumbs.keys()]) {
      if (!tabIds.includes(id)) { URL.revokeObjectURL(thumbs.get(id).url); thumbs.delete(id); }
    }
    for (const p of state.profiles) {
      const up = document.querySelector(`[data-uptime="${CSS.escape(p.name)}"]`);
      if (up) up.textContent = duration(p.uptimeS);
    }
    if (signature === lastRender) return;
    lastRender = signature;
    $('#profiles').replaceChildren(...state.profiles.map(renderProfile));
  }

  function renderProfile(p) {
    const actions = el('div', {class: 'actions'},
      ...['start', 'stop', 'restart'].map((action) => el('button', {
        type: 'button', 'data-action': action, text: action[0].toUpperCase() + action.slice(1),
        onclick: async (event) => {
          for (const b of event.target.parentNode.children) b.disabled = true;
          notice(`${action}…`);
          await change('/ui/api/browser', {action});
        },
      })));
    const section = el('div', {class: 'profile', 'data-profile': p.name},
      el('div', {class: 'profile-head'},
        el('h3', {text: `Profile ${p.name}`}),
        el('span', {class: `badge state ${p.state}`, text: p.state}),
        el('span', {class: 'muted', text: p.headless ? 'headless' : 'headed'}),
        actions),
      el('div', {class: 'facts'},
        el('span', {}, el('b', {text: 'Uptime '}), el('span', {'data-uptime': p.name,
          text: duration(p.uptimeS)})),
        el('span', {}, el('b', {text: 'Restarts '}), el('span', {class: 'restarts',
          text: String(p.restarts)})),
        el('span', {}, el('b', {text: 'Launches '}), String(p.spawns)),
        el('span', {}, el('b', {text: 'Browser '}), p.version || '-'),
        el('span', {}, el('b', {text: 'PID '}), p.pid === null ? '-' : String(p.pid))));
    if (p.lastError) {
      section.append(el('div', {class: 'error'},
        el('div', {}, el('b', {text: 'Last error '}),
          `${p.lastError.error} [${p.lastError.code}]`),
        p.lastError.stderr ? el('pre', {class: 'stderr', text: String(p.lastError.stderr)})
          : null));
    }
    if (p.lastCrash) {
      const c = p.lastCrash;
      const how = c.signal != null ? `signal ${c.signal}`
        : c.exitCode != null ? `exit code ${c.exitCode}` : '';
      section.append(el('div', {class: 'error crash'},
        el('div', {}, el('b', {text: 'Last crash '}),
          `${c.reason}${how ? ` (${how})` : ''} at ${new Date(c.at * 1000).toLocaleTimeString()}` +
          `, ${c.tabsAffected} tab${c.tabsAffected === 1 ? '' : 's'} lost`),
        c.stderrTail ? el('pre', {class: 'stderr', text: String(c.stderrTail)}) : null));
    }
    section.append(el('h2', {text: `Tabs (${p.tabs.length})`}));
    if (!p.running) section.append(el('p', {class: 'muted', text: 'The browser is not running.'}));
    section.append(el('ul', {class: 'tabs'}, ...p.tabs.map(renderTab)));
    return section;
  }

  function renderTab(t) {
    const img = el('img', {class: 'thumb', alt: ''});
    const cached = thumbs.get(t.targetId);
    if (cached) img.src = cached.url;
    const info = el('div', {class: 'tab-info'},
      el('div', {class: 'tab-title', text: t.title || '(untitled)', title: t.title || ''}),
      el('div', {class: 'tab-url', text: t.url, title: t.url}));
    if (t.handoff) {
      const since = new Date(t.handoff.since * 1000).toLocaleTimeString();
      info.append(el('div', {class: 'handoff-banner'},
        'Needs you (since ', since, '): ', el('span', {class: 'reason', text: t.handoff.reason})));
    }
    const buttons = el('div', {class: 'tab-actions'},
      el('button', {type: 'button', class: 'live primary', text: 'Live view',
                    onclick: () => openLive(t)}));
    if (t.handoff) {
      buttons.append(el('button', {type: 'button', class: 'done', text: 'Done',
        onclick: async () => {
          await change('/ui/api/handoff/done', {targetId: t.targetId});
        }}));
    }
    info.append(buttons);
    return el('li', {class: t.handoff ? 'tab handoff' : 'tab', 'data-target-id': t.targetId},
      img, info);
  }

  // -- thumbnails ------------------------------------------------------------------------
  let thumbsBusy = false;
  async function refreshThumbnails() {
    if (thumbsBusy || !key || live || document.visibilityState !== 'visible') return;
    thumbsBusy = true;
    try {
      for (const id of tabIds) {
        const old = thumbs.get(id);
        if (old && Date.now() - old.at < THUMB_EVERY_MS) continue;
        const response = await api(`/ui/api/thumbnail?targetId=${encodeURIComponent(id)}`);
        if (response.status !== 200) continue;
        const url = URL.createObjectURL(await response.blob());
        if (old) URL.revokeObjectURL(old.url);
        thumbs.set(id, {url, at: Date.now()});
        const img = document.querySelector(
          `li.tab[data-target-id="${CSS.escape(id)}"] img.thumb`);
        if (img) img.src = url;
      }
    } catch (err) {
      // the next round tries again
    } finally {
      thumbsBusy = false;
    }
  }

  // -- live view -------------------------------------------------------------------------
  const MODIFIERS = (e) => (e.altKey ? 1 : 0) | (e.ctrlKey ? 2 : 0) | (e.metaKey ? 4 : 0) |
    (e.shiftKey ? 8 : 0);
  const BUTTONS = ['left', 'middle', 'right'];

  function send(message) {
    if (live && live.ws.readyState === WebSocket.OPEN) live.ws.send(JSON.stringify(message));
  }

  function point(e) {
    const canvas = $('#live-canvas');
    const meta = (live && live.meta) || {deviceWidth: canvas.width, deviceHeight: canvas.height};
    const box = canvas.getBoundingClientRect();
    return {x: (e.clientX - box.left) / box.width * meta.deviceWidth,
            y: (e.clientY - box.top) / box.height * meta.deviceHeight};
  }

  function openLive(tab) {
    closeLive();
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(
      `${proto}//${location.host}/ui/api/live?targetId=${encodeURIComponent(tab.targetId)}`,
      ['browserd-ui', `key.${key}`]);
    ws.binaryType = 'blob';
    live = {ws, targetId: tab.targetId, meta: null, frames: 0};
    const mine = live;
    $('#live').hidden = false;
    $('#live-title').textContent = tab.title || tab.url;
    $('#live-status').textContent = 'connecting';
    const canvas = $('#live-canvas');
    canvas.dataset.frames = '0';
    ws.onmessage = async (event) => {
      if (typeof event.data === 'string') {
        const message = JSON.parse(event.data);
        if (message.type === 'frame') {
          mine.meta = message;
          canvas.dataset.deviceWidth = String(message.deviceWidth);
          canvas.dataset.deviceHeight = String(message.deviceHeight);
        }
        else if (message.type === 'started') $('#live-status').textContent = 'live';
        else if (message.type === 'closed') $('#live-status').textContent = 'tab closed';
        else if (message.type === 'error') notice(`live view: ${message.error}`);
        else if (message.type === 'dialog') showDialog(message.dialog);
        return;
      }
      const bitmap = await createImageBitmap(event.data);
      if (live !== mine) { bitmap.close(); return; }
      canvas.width = bitmap.width;
      canvas.height = bitmap.height;
      canvas.getContext('2d').drawImage(bitmap, 0, 0);
      bitmap.close();
      mine.frames += 1;
      canvas.dataset.frames = String(mine.frames);
    };
    ws.onclose = () => {
      if (live === mine) $('#live-status').textContent = 'disconnected';
    };
    canvas.focus();
  }

  function showDialog(dialog) {
    const box = $('#live-dialog');
    box.hidden = !dialog;
    if (!dialog) return;
    box.querySelector('.dialog-kind').textContent = `The page shows a ${dialog.type} dialog:`;
    box.querySelector('.dialog-message').textContent = dialog.message;
    const prompt = box.querySelector('.dialog-prompt');
    prompt.hidden = dialog.type !== 'prompt';
    prompt.value = dialog.defaultPrompt || '';
  }

  function answerDialog(accept) {
    const prompt = $('#live-dialog .dialog-prompt');
    send(prompt.hidden ? {type: 'dialog', accept} : {type: 'dialog', accept,
                                                     promptText: prompt.value});
  }

  function closeLive() {
    if (!live) return;
    live.ws.close();
    live = null;
    $('#live').hidden = true;
    $('#live-dialog').hidden = true;
  }

  function wireLiveInput() {
    const canvas = $('#live-canvas');
    let moveQueued = null;
    canvas.addEventListener('mousedown', (e) => {
      e.preventDefault();
      canvas.focus();
      send({type: 'mouse', event: 'down', ...point(e), button: BUTTONS[e.button] || 'left',
            clicks: Math.min(3, Math.max(1, e.detail || 1)), modifiers: MODIFIERS(e)});
    });
    canvas.addEventListener('mouseup', (e) => {
      e.preventDefault();
      send({type: 'mouse', event: 'up', ...point(e), button: BUTTONS[e.button] || 'left',
            clicks: Math.min(3, Math.max(1, e.detail || 1)), modifiers: MODIFIERS(e)});
    });
    canvas.addEventListener('mousemove', (e) => {
      const queued = moveQueued === null;
      moveQueued = {type: 'mouse', event: 'move', ...point(e),
                    button: e.buttons & 1 ? 'left' : 'none', modifiers: MODIFIERS(e)};
      if (queued) {
        requestAnimationFrame(() => { send(moveQueued); moveQueued = null; });
      }
    });
    canvas.addEventListener('wheel', (e) => {
      e.preventDefault();
      send({type: 'mouse', event: 'wheel', ...point(e), deltaX: e.deltaX, deltaY: e.deltaY,
            modifiers: MODIFIERS(e)});
    }, {passive: false});
    canvas.addEventListener('contextmenu', (e) => e.preventDefault());
    for (const [type, event] of [['keydown', 'down'], ['keyup', 'up']]) {
      canvas.addEventListener(type, (e) => {
        e.preventDefault();
        send({type: 'key', event, key: e.key, code: e.code, keyCode: e.keyCode || 0,
              modifiers: MODIFIERS(e)});
      });
    }
    canvas.addEventListener('paste', (e) => {
      const text = e.clipboardData && e.clipboardData.getData('text/plain');
      if (text) send({type: 'text', text: text.slice(0, 10000)});
    });
    $('#live-close').addEventListener('click', closeLive);
    $('#live-dialog .dialog-accept').addEventListener('click', () => answerDialog(true));
    $('#live-dialog .dialog-dismiss').addEventListener('click', () => answerDialog(false));
  }

  function renderAudit() {
    const showHealth = $('#audit-health').checked;
    $('#audit').textContent = auditLines.filter((line) => showHealth || !HEALTH_CHECK.test(line))
      .reverse().join('\n');
  }

  function addHealthToggle() {
    const toggle = el('input', {type: 'checkbox', id: 'audit-health', onchange: renderAudit});
    $('#audit').before(el('label', {class: 'muted'}, toggle, ' show health checks (/healthz)'));
  }

  // -- start -----------------------------------------------------------------------------
  takeKey();
  addHealthToggle();
  wireLiveInput();
  BrowserdRecords.start({el, api, notice});
  $('#logout').addEventListener('click', async () => {
    try { await api('/ui/api/logout', {method: 'POST', json: {}}); } catch (err) { /* gone */ }
    localStorage.removeItem(KEY_STORE);
    key = null;
    showLogin();
  });
  document.addEventListener('visibilitychange', () => refresh(false));
  setInterval(() => refresh(false), STATE_EVERY_MS);
  setInterval(refreshThumbnails, 1000);
  refresh(true).then(refreshThumbnails);
})();
