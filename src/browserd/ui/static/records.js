// The ops page's Records panel: the session records (the person reads every one) and, for
// the one opened, its timeline: each step's action, target, outcome, duration, before/after
// screenshots, console errors and failed requests, and the record's exports (HTML page,
// Playwright trace and script, video). Served with waiting.js in front of app.js as one
// script (/ui/app.js). A record's content is the pages' and the agents' (names, titles,
// URLs, console text, errors): it is shown with textContent only, never parsed as HTML.
'use strict';
const BrowserdRecords = (() => {
  const LIST_EVERY_MS = 5000;
  const OPEN_EVERY_MS = 3000;
  const SHOT_FETCHES = 4; // screenshots loaded at once
  let ui = null; // {el, api, notice} from app.js
  let listSignature = '';
  let openId = null;
  let openSignature = '';
  let openAt = 0;
  let listAt = 0;
  let busy = false;
  const shots = new Map(); // "recordId/name" -> blob URL (kept while the record is open)
  let videoUrl = null;

  const path = (id, tail) => `/ui/api/records/${encodeURIComponent(id)}${tail || ''}`;
  const time = (at) => (at ? new Date(at * 1000).toLocaleString() : '-');

  function start(helpers) {
    ui = helpers;
    setInterval(() => refresh(false), 1000);
  }

  async function refresh(force) {
    if (busy || document.visibilityState !== 'visible') return;
    const now = Date.now();
    const listDue = force || now - listAt >= LIST_EVERY_MS;
    const openDue = openId && (force || now - openAt >= OPEN_EVERY_MS);
    if (!listDue && !openDue) return;
    busy = true;
    try {
      if (listDue) { listAt = now; await loadList(); }
      if (openDue) { openAt = now; await loadRecord(openId); }
    } catch (err) {
      // not logged in, or the service went away: the next round tries again
    } finally {
      busy = false;
    }
  }

  async function json(url) {
    const response = await ui.api(url);
    const answer = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(`${answer.code || response.status}: ${answer.error || ''}`);
    return answer;
  }

  // -- the list --------------------------------------------------------------------------
  async function loadList() {
    const {records} = await json('/ui/api/records');
    const signature = JSON.stringify(records);
    if (signature === listSignature) return;
    listSignature = signature;
    const el = ui.el;
    const box = document.getElementById('records');
    let list = box.querySelector('ul.records');
    if (!list) {
      list = el('ul', {class: 'records'});
      box.replaceChildren(el('h2', {text: 'Records'}), list,
                          el('div', {id: 'record-view', hidden: ''}));
    }
    list.replaceChildren(...records.map(renderItem));
    if (!records.length) {
      list.append(el('li', {class: 'muted', text: 'No records yet. An agent starts one with ' +
        'POST /record/start (browserd record start).'}));
    }
  }

  function renderItem(r) {
    const el = ui.el;
    const video = r.video ? ` · video ${r.video.state}` : '';
    return el('li', {class: 'record-item', 'data-record-id': r.id},
      el('button', {type: 'button', class: 'open', text: 'Timeline',
                    onclick: () => open(r.id)}),
      el('span', {class: `badge ${r.recording ? 'running' : ''}`,
                  text: r.recording ? 'recording' : 'stopped'}),
      el('span', {class: 'record-id', text: r.id}),
      el('span', {class: 'muted', text: `${r.steps} step${r.steps === 1 ? '' : 's'} · token ` +
        `${r.principal} · profile ${r.profile}${r.session ? ` · session ${r.session}` : ''}` +
        ` · ${time(r.startedAt)}${video}`}));
  }

  // -- one record's timeline ---------------------------------------------------------------
  async function open(id) {
    if (openId !== id) close();
    openId = id;
    openAt = Date.now();
    try {
      await loadRecord(id);
    } catch (err) {
      ui.notice(`record ${id}: ${err.message}`);
    }
  }

  function close() {
    for (const url of shots.values()) URL.revokeObjectURL(url);
    shots.clear();
    if (videoUrl) URL.revokeObjectURL(videoUrl);
    videoUrl = null;
    openId = null;
    openSignature = '';
    const view = document.getElementById('record-view');
    if (view) { view.hidden = true; view.replaceChildren(); }
  }

  async function loadRecord(id) {
    const record = await json(path(id));
    if (openId !== id) return;
    const signature = JSON.stringify(record);
    if (signature === openSignature) return;
    openSignature = signature;
    const view = document.getElementById('record-view');
    view.hidden = false;
    view.dataset.recordId = id;
    view.replaceChildren(renderHead(record), ui.el('ol', {class: 'timeline'},
      ...record.steps.map((step) => renderStep(record.id, step))));
    if (!record.steps.length) {
      view.append(ui.el('p', {class: 'muted', text: 'No steps recorded yet.'}));
    }
    loadShots(view);
  }

  function renderHead(record) {
    const el = ui.el;
    const exports = el('div', {class: 'record-exports'},
      download('HTML page', path(record.id, '/export?format=html'), `${record.id}.html`),
      download('Playwright trace', path(record.id, '/export?format=trace'), `${record.id}.zip`),
      download('Playwright script', path(record.id, '/export?format=script'),
               `${record.id}.py`));
    const video = record.video;
    if (video && video.state !== 'recording' && video.bytes) {
      exports.append(download('Video', path(record.id, '/video'), `${record.id}.webm`),
        el('button', {type: 'button', class: 'play', text: 'Play video',
                      onclick: () => play(record.id)}));
    }
    const videoLine = video ? el('div', {class: 'muted record-video', text: `Video: ` +
      `${video.state}${video.reason ? ` (${video.reason})` : ''}` +
      (video.durationS ? `, ${video.durationS} s` : '')}) : null;
    return el('div', {class: 'record-head'},
      el('div', {class: 'record-title'}, el('h3', {text: `Record ${record.id}`}),
        el('span', {class: `badge ${record.recording ? 'running' : ''}`,
                    text: record.recording ? 'recording' : 'stopped'}),
        el('button', {type: 'button', class: 'close', text: 'Close', onclick: close})),
      el('div', {class: 'muted', text: `Token ${record.principal} · profile ` +
        `${record.profile}${record.session ? ` · session ${record.session}` : ''} · ` +
        `${time(record.startedAt)} – ${record.recording ? 'now' : time(record.stoppedAt)}` +
        (record.truncated ? ' · truncated (step limit)' : '')}),
      videoLine, exports, el('div', {class: 'record-player'}));
  }

  function target(call) {
    const t = (call.targets || {}).element || (call.targets || {}).from;
    const args = call.args || {};
    if (!t) {
      const given = args.url || args.key || args.text || args.selector || args.loadState;
      return given === undefined ? '' : String(given);
    }
    if (t.role || t.name) return `${t.role || ''} "${t.name || ''}"`.trim();
    return t.selector || t.text || t.ref || '';
  }

  function renderStep(recordId, step) {
    const el = ui.el;
    const calls = step.kind === 'act' ? (step.actions || []) : [step];
    const what = calls.map((c) => `${c.kind} ${target(c)}`.trim()).join('; ');
    const outcome = step.ok ? 'ok' : ((step.error || {}).code || 'failed');
    const item = el('li', {class: `step ${step.ok ? 'ok' : 'failed'}`,
                           'data-index': String(step.index)},
      el('div', {class: 'step-head'},
        el('span', {class: 'step-index', text: `#${step.index}`}),
        el('b', {class: 'step-kind', text: step.kind}),
        el('span', {class: 'step-target', text: step.kind === 'act' ? what : target(step)}),
        el('span', {class: `badge step-outcome ${step.ok ? 'running' : 'failed'}`,
                    text: outcome}),
        el('span', {class: 'muted step-duration', text: `${Math.round(step.durationMs)} ms`})));
    if (!step.ok && step.error && step.error.message) {
      item.append(el('div', {class: 'step-error', text: step.error.message}));
    }
    const pictures = el('div', {class: 'step-shots'});
    for (const which of ['before', 'after']) {
      const shot = step[which];
      pictures.append(el('figure', {},
        shot ? el('img', {class: `shot ${which}`, alt: `${which} step ${step.index}`,
                          'data-shot': `${recordId}/${shot.name}`, width: String(shot.width),
                          height: String(shot.height)})
          : el('div', {class: 'shot none muted', text: 'no screenshot'}),
        el('figcaption', {class: 'muted', text: which})));
    }
    const side = el('div', {class: 'step-side'},
      el('div', {class: 'step-page muted', text: step.title && step.title !== step.url
        ? `${step.title} · ${step.url || ''}` : (step.url || '')}));
    if (step.console && step.console.length) {
      side.append(el('div', {class: 'step-label', text: 'Console errors'}),
        el('ul', {class: 'step-console'}, ...step.console.map((c) =>
          el('li', {text: `${c.level}: ${c.text}`}))));
    }
    if (step.failedRequests && step.failedRequests.length) {
      side.append(el('div', {class: 'step-label', text: 'Failed requests'}),
        el('ul', {class: 'step-requests'}, ...step.failedRequests.map((r) =>
          el('li', {text: `${r.method} ${r.url} → ${r.status || r.errorText || 'failed'}`}))));
    }
    item.append(el('div', {class: 'step-body'}, pictures, side));
    return item;
  }

  // -- pictures and files ------------------------------------------------------------------
  async function loadShots(view) {
    const pending = [...view.querySelectorAll('img.shot[data-shot]')];
    const worker = async () => {
      while (pending.length) {
        const img = pending.shift();
        const key = img.dataset.shot;
        if (!shots.has(key)) {
          const [id, name] = key.split('/');
          try {
            const response = await ui.api(path(id, `/shots/${encodeURIComponent(name)}`));
            if (!response.ok || openId !== id) continue;
            shots.set(key, URL.createObjectURL(await response.blob()));
          } catch (err) {
            continue;
          }
        }
        img.src = shots.get(key);
      }
    };
    await Promise.all(Array.from({length: SHOT_FETCHES}, worker));
  }

  function download(label, url, filename) {
    return ui.el('button', {type: 'button', class: 'export', text: label,
      onclick: async () => {
        const response = await ui.api(url);
        if (!response.ok) {
          const answer = await response.json().catch(() => ({}));
          ui.notice(`${label}: ${answer.code || response.status} ${answer.error || ''}`);
          return;
        }
        const blob = URL.createObjectURL(await response.blob());
        const link = ui.el('a', {href: blob, download: filename, hidden: ''});
        document.body.append(link);
        link.click();
        link.remove();
        setTimeout(() => URL.revokeObjectURL(blob), 60000);
      }});
  }

  async function play(id) {
    const response = await ui.api(path(id, '/video'));
    if (!response.ok || openId !== id) return;
    if (videoUrl) URL.revokeObjectURL(videoUrl);
    videoUrl = URL.createObjectURL(await response.blob());
    const player = document.querySelector('#record-view .record-player');
    player.replaceChildren(ui.el('video', {src: videoUrl, controls: '', autoplay: '',
                                           muted: ''}));
  }

  return {start, refresh, open};
})();
