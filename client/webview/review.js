// The review view's page: draws the batch the extension posts (the candidates as `mcpbench review list
// --format json` gives them, a candidate's diff as `mcpbench review diff --format json` gives it) and sends the
// reviewer's clicks back. It decides nothing itself: every decision goes through the extension to the CLI.
// DOM built with textContent (never HTML from data), so nothing in a task can inject markup.
// @ts-check
(function () {
  // eslint-disable-next-line no-undef
  const vscode = acquireVsCodeApi();
  const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
  const el = (tag, attrs, ...children) => {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === 'class') node.className = value;
      else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? '' : value);
    }
    for (const child of children) if (child !== undefined && child !== null && child !== false) node.append(child);
    return node;
  };
  const shown = (value) => {
    if (typeof value === 'string') return value;
    let text;
    try { text = JSON.stringify(value); } catch { text = String(value); }
    return text === undefined ? String(value) : text;
  };
  /** A JSON Pointer as a reader follows it: `/initial_state/filesystem/files/old~1` → `initial_state › filesystem › files › old/`. */
  const pointerLabel = (pointer) => pointer === '/' ? '(the whole task)' : pointer.split('/').slice(1).map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~')).join(' › ');
  const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const STATE_LABEL = { accepted: 'accepted', rejected: 'rejected', undecided: 'undecided' };

  /** @type {{ title: string, intoLabel: string, candidates: any[], selected?: string, busy?: boolean }} */
  let state = { title: '', intoLabel: 'tasks/', candidates: [] };
  /** taskId → the diff the extension sent (or an error). */
  const diffs = new Map();

  const find = (taskId) => state.candidates.find((c) => c.task_id === taskId);

  function lintChip(c) {
    if (c.lint.errors) return el('span', { class: 'chip bad' }, plural(c.lint.errors, 'lint error'));
    if (c.lint.warnings) return el('span', { class: 'chip warn' }, plural(c.lint.warnings, 'warning'));
    return el('span', { class: 'chip ok' }, 'lint clean');
  }

  function checkChip(c) {
    if (!c.check) return el('span', { class: 'chip' }, 'not checked');
    return c.check.ok ? el('span', { class: 'chip ok' }, 'check ok') : el('span', { class: 'chip bad' }, 'check failed');
  }

  function integrityChip(c) {
    if (c.integrity === 'ok') return undefined;
    return el('span', { class: 'chip bad', title: 'The file no longer matches the hash the batch recorded' }, c.integrity === 'missing' ? 'file missing' : 'file changed');
  }

  function select(taskId, fromUser) {
    if (!find(taskId)) return;
    state.selected = taskId;
    drawList();
    drawDetail();
    if (fromUser) vscode.postMessage({ type: 'select', taskId });
  }

  function drawList() {
    const list = $('candidates');
    list.replaceChildren();
    for (const c of state.candidates) {
      const selected = c.task_id === state.selected;
      const item = el('li', {
        class: `candidate ${c.state}${selected ? ' selected' : ''}`,
        role: 'option',
        tabindex: '0',
        'aria-selected': selected ? 'true' : 'false',
        'data-task-id': c.task_id,
        onclick: () => select(c.task_id, true),
        onkeydown: (/** @type {KeyboardEvent} */ event) => {
          const index = state.candidates.indexOf(c);
          const next = event.key === 'ArrowDown' ? state.candidates[index + 1] : event.key === 'ArrowUp' ? state.candidates[index - 1] : undefined;
          if (event.key === 'Enter' || event.key === ' ') {
            event.preventDefault();
            select(c.task_id, true);
          } else if (next) {
            event.preventDefault();
            select(next.task_id, true);
            /** @type {HTMLElement | null} */ (list.querySelector(`[data-task-id="${CSS.escape(next.task_id)}"]`))?.focus();
          }
        },
      },
      el('div', { class: 'row' }, el('span', { class: 'id', title: c.task_id }, c.task_id), el('span', { class: `badge ${c.state}` }, STATE_LABEL[c.state] || c.state)),
      el('div', { class: 'facts' }, lintChip(c), checkChip(c), integrityChip(c)),
      c.goal ? el('p', { class: 'goal' }, c.goal) : undefined);
      list.append(item);
    }
    if (!state.candidates.length) list.append(el('li', { class: 'muted' }, 'This batch has no candidates.'));
  }

  function decisionBlock(c) {
    if (!c.review) return el('p', { class: 'decision' }, el('span', { class: 'muted' }, 'Not reviewed yet. Accept or reject it with a reason; the reason is recorded in the batch manifest.'));
    const when = c.review.at ? new Date(c.review.at).toLocaleString() : '';
    const who = c.review.reviewer ? ` by ${c.review.reviewer}` : '';
    return el('p', { class: `decision ${c.review.decision}` },
      el('strong', {}, c.review.decision === 'accepted' ? 'Accepted' : 'Rejected'), `${who}${when ? ` on ${when}` : ''}: `, c.review.reason);
  }

  function diffSection(taskId) {
    const entry = diffs.get(taskId);
    const section = [el('h3', {}, "Difference from the template's other variants")];
    if (!entry) return [...section, el('p', { class: 'muted' }, 'Comparing…')];
    if (entry.error) return [...section, el('p', { class: 'muted' }, entry.error)];
    const diff = entry.diff;
    if (!diff.sibling) return [...section, el('p', { class: 'muted' }, 'No other variant of this template to compare with.')];
    // The provenance (template parameters and variant seed) differs with the parameters shown above: counted, not listed.
    const provenance = diff.changes.filter((c) => c.path.startsWith('/template/'));
    const changes = diff.changes.filter((c) => !c.path.startsWith('/template/'));
    section.push(el('p', { class: 'muted' }, 'Against its nearest sibling ', el('code', {}, diff.sibling.task_id), `: ${plural(changes.length, 'difference')} in the task${provenance.length ? `, and ${plural(provenance.length, 'difference')} in its provenance (template parameters, seed)` : ''}.`));
    if (!changes.length) return [...section, el('p', {}, 'The task is identical to its sibling: a duplicate.')];
    const body = el('tbody');
    for (const change of changes) {
      body.append(el('tr', {},
        el('td', { class: 'path', title: `${change.kind} at ${change.path}` }, pointerLabel(change.path)),
        change.kind === 'added' ? el('td', { class: 'absent' }, 'absent') : el('td', { class: 'before' }, shown(change.before)),
        change.kind === 'removed' ? el('td', { class: 'absent' }, 'absent') : el('td', { class: 'after' }, shown(change.after))));
    }
    return [...section, el('table', { class: 'diff' }, el('thead', {}, el('tr', {}, el('th', {}, 'where'), el('th', {}, diff.sibling.task_id), el('th', {}, 'this candidate'))), body)];
  }

  function drawDetail() {
    const detail = $('detail');
    const c = state.selected ? find(state.selected) : undefined;
    if (!c) {
      detail.replaceChildren(el('p', { class: 'muted placeholder' }, state.candidates.length
        ? "Select a candidate to see its goal, its parameters and how it differs from the template's other variants."
        : 'Nothing to review.'));
      return;
    }
    const decide = (decision) => vscode.postMessage({ type: 'decide', taskId: c.task_id, decision });
    const params = el('tbody');
    for (const [key, value] of Object.entries(c.parameters || {})) params.append(el('tr', {}, el('td', { class: 'key' }, key), el('td', { class: 'value' }, shown(value))));
    const problems = c.check && !c.check.ok ? el('ul', { class: 'problems' }, ...c.check.problems.map((p) => el('li', {}, shown(p)))) : undefined;
    const parts = [
      el('div', { class: 'detail-head' },
        el('div', { class: 'title' }, el('h2', {}, c.task_id), el('span', { class: `badge ${c.state}` }, STATE_LABEL[c.state] || c.state)),
        el('div', { class: 'buttons' },
          el('button', { type: 'button', 'data-action': 'accept', disabled: state.busy, title: 'Accept this candidate (asks for a reason)', onclick: () => decide('accept') }, 'Accept…'),
          el('button', { type: 'button', class: 'danger', 'data-action': 'reject', disabled: state.busy, title: 'Reject this candidate (asks for a reason)', onclick: () => decide('reject') }, 'Reject…'))),
      decisionBlock(c),
      el('h3', {}, 'Goal'),
      c.goal ? el('blockquote', { class: 'goal' }, c.goal) : el('p', { class: 'muted' }, 'The candidate file cannot be read.'),
      el('h3', {}, 'Checks'),
      el('p', { class: 'facts' }, lintChip(c), ' ', checkChip(c), integrityChip(c) ? ' ' : undefined, integrityChip(c)),
      problems,
      el('h3', {}, 'Parameters'),
      Object.keys(c.parameters || {}).length ? el('table', { class: 'params' }, params) : el('p', { class: 'muted' }, 'No parameters recorded.'),
      ...diffSection(c.task_id),
      el('p', { class: 'file-link' }, el('button', { type: 'button', class: 'link', 'data-action': 'open-file', onclick: () => vscode.postMessage({ type: 'openFile', taskId: c.task_id }) }, `Open ${c.file}`)),
    ];
    detail.replaceChildren(...parts.filter((part) => part !== undefined && part !== null));
    if (diffs.has(c.task_id)) vscode.postMessage({ type: 'rendered', taskId: c.task_id });
  }

  function drawHeader() {
    $('title').textContent = state.title;
    const count = (s) => state.candidates.filter((c) => c.state === s).length;
    $('summary').textContent = `${plural(state.candidates.length, 'candidate')} · ${count('accepted')} accepted · ${count('rejected')} rejected · ${count('undecided')} undecided`;
    const accept = /** @type {HTMLButtonElement} */ ($('accept-batch'));
    accept.textContent = `Accept batch into ${state.intoLabel}`;
    accept.disabled = Boolean(state.busy) || count('accepted') === 0;
    accept.title = count('accepted') === 0 ? 'Accept at least one candidate first' : `mcpbench review accept: copy the ${plural(count('accepted'), 'accepted candidate')} into ${state.intoLabel}`;
    /** @type {HTMLButtonElement} */ ($('refresh')).disabled = Boolean(state.busy);
  }

  function notice(kind, text) {
    const box = $('notice');
    box.hidden = !text;
    box.className = kind || '';
    box.textContent = text || '';
  }

  window.addEventListener('message', (message) => {
    const data = message.data;
    switch (data.type) {
      case 'state':
        state = { ...state, ...data.state };
        if (state.selected && !find(state.selected)) state.selected = undefined;
        drawHeader();
        drawList();
        drawDetail();
        break;
      case 'select':
        select(data.taskId, false);
        break;
      case 'diff':
        diffs.set(data.taskId, data.error ? { error: data.error } : { diff: data.diff });
        if (data.taskId === state.selected) drawDetail();
        break;
      case 'forgetDiffs':
        diffs.clear();
        break;
      case 'notice':
        notice(data.kind, data.text);
        break;
    }
  });
  $('refresh').addEventListener('click', () => vscode.postMessage({ type: 'refresh' }));
  $('accept-batch').addEventListener('click', () => vscode.postMessage({ type: 'acceptBatch' }));
  vscode.postMessage({ type: 'ready' });
})();
