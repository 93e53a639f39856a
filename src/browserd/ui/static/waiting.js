// The ops page's "Waiting for you" panel: agents' actions held for the person's
// confirmation and agents' requests for one of the person's tabs. Served in front of app.js
// as one script (/ui/app.js). Everything an agent or a page wrote (summaries, reasons,
// titles, URLs, token names) is shown with textContent, never parsed as HTML.
'use strict';
const BrowserdWaiting = (() => {
  const PAGE_TITLE = document.title;
  let lastSignature = '';

  function since(at) { return new Date(at * 1000).toLocaleTimeString(); }

  // ui: {el, change} from app.js (its element builder; its POST that refreshes the page).
  function render(state, ui) {
    const held = state.confirmations || [];
    const requests = state.tabRequests || [];
    const count = held.length + requests.length;
    const box = document.getElementById('waiting');
    box.hidden = count === 0;
    document.title = count ? `(${count}) ${PAGE_TITLE}` : PAGE_TITLE;
    const signature = JSON.stringify([held, requests]);
    if (signature === lastSignature) return;
    lastSignature = signature;
    const picked = new Map(); // requestId -> the page the person chose (kept across renders)
    for (const select of box.querySelectorAll('select.pick')) {
      picked.set(select.dataset.requestId, select.value);
    }
    box.replaceChildren(
      ui.el('h2', {text: `Waiting for you (${count})`}),
      ui.el('ul', {class: 'waiting'},
        ...held.map((c) => renderConfirmation(c, ui)),
        ...requests.map((r) => renderTabRequest(r, ui, picked.get(r.requestId)))));
  }

  function answer(ui, path, body) {
    return async (event) => {
      const item = event.target.closest('li');
      for (const b of item.querySelectorAll('button, select')) b.disabled = true;
      lastSignature = ''; // drawn again after the answer (enabled again if it failed)
      await ui.change(path, body());
    };
  }

  function who(ui, item) {
    return ui.el('div', {class: 'muted'}, 'Asked by token ', ui.el('span', {class: 'token',
      text: item.token}), ' · profile ', ui.el('span', {text: item.profile}),
      ` · at ${since(item.createdAt)}`);
  }

  function renderConfirmation(c, ui) {
    const target = c.target || {};
    return ui.el('li', {class: 'waiting-item confirmation', 'data-confirmation-id': c.id},
      ui.el('div', {class: 'ask'}, ui.el('b', {text: `Confirm ${c.kind}: `}),
        ui.el('span', {class: 'summary', text: c.summary})),
      // The origin is browserd's own finding (the summary quotes the page's words).
      target.origin ? ui.el('div', {class: 'where muted'}, 'The page is ',
        ui.el('span', {class: 'origin', text: target.origin})) : null,
      who(ui, c),
      ui.el('div', {class: 'waiting-actions'},
        ui.el('button', {type: 'button', class: 'approve primary', text: 'Approve',
          onclick: answer(ui, '/ui/api/confirmation', () => ({id: c.id, approve: true}))}),
        ui.el('button', {type: 'button', class: 'deny', text: 'Deny',
          onclick: answer(ui, '/ui/api/confirmation', () => ({id: c.id, deny: true}))})));
  }

  function renderTabRequest(r, ui, chosen) {
    const pages = r.pages || [];
    const select = ui.el('select', {class: 'pick', 'data-request-id': r.requestId,
                                    'aria-label': 'The tab to give'},
      ...pages.map((p) => ui.el('option', {value: p.targetId,
        text: `${p.title || '(untitled)'} · ${p.url}`})));
    const hinted = pages.find((p) => r.url && p.url === r.url);
    if (chosen && pages.some((p) => p.targetId === chosen)) select.value = chosen;
    else if (hinted) select.value = hinted.targetId;
    const approve = ui.el('button', {type: 'button', class: 'approve primary',
      text: 'Give this tab',
      onclick: answer(ui, '/ui/api/tab-request', () => ({requestId: r.requestId,
                                                         approve: select.value}))});
    let choice;
    if (r.pages === null || r.pages === undefined) {
      choice = ui.el('span', {class: 'muted', text: `Profile ${r.profile} is not connected ` +
        'to your browser: start it to choose a tab.'});
      approve.disabled = true;
    } else if (!pages.length) {
      choice = ui.el('span', {class: 'muted', text: 'No tab of yours to give: open the page ' +
        'in your browser and it shows here (or answer with browserd offer --requests).'});
      approve.disabled = true;
    } else {
      choice = select;
    }
    return ui.el('li', {class: 'waiting-item tab-request', 'data-request-id': r.requestId},
      ui.el('div', {class: 'ask'}, ui.el('b', {text: 'Wants one of your tabs: '}),
        ui.el('span', {class: 'reason', text: r.reason})),
      r.url ? ui.el('div', {class: 'where muted'}, 'It hopes for ',
        ui.el('span', {class: 'hint-url', text: r.url})) : null,
      who(ui, r),
      ui.el('div', {class: 'waiting-actions'}, choice, approve,
        ui.el('button', {type: 'button', class: 'deny', text: 'Deny',
          onclick: answer(ui, '/ui/api/tab-request', () => ({requestId: r.requestId,
                                                             deny: true}))})));
  }

  return {render};
})();
