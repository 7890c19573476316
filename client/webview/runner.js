// The runner panel's page: draws what the extension posts (RunEvents of the current run, run history) and
// asks the extension to open reports and past runs. No framework; DOM built with textContent (never HTML
// from data), so nothing a tool returned can inject markup.
// @ts-check
(function () {
  // eslint-disable-next-line no-undef
  const vscode = acquireVsCodeApi();
  const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
  const el = (tag, attrs, ...children) => {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === 'class') node.className = value;
      else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value);
    }
    for (const child of children) if (child !== undefined && child !== null) node.append(typeof child === 'string' ? child : child);
    return node;
  };
  const compact = (value, max = 140) => {
    let text;
    try { text = JSON.stringify(value); } catch { text = String(value); }
    if (text === undefined) text = String(value);
    return text.length <= max ? text : text.slice(0, max - 1) + '…';
  };

  /** key → { details, badge, calls tbody, body } per episode. */
  const episodes = new Map();
  let runDirectory;
  const keyOf = (k) => `${k.task_id}|${k.variant}|${k.fault_profile}|${k.trial}|${k.perturbation}`;

  function reset(title) {
    episodes.clear();
    inFlight.clear();
    tick();
    runDirectory = undefined;
    $('episodes').replaceChildren();
    $('scores').hidden = true;
    $('open-report').hidden = true;
    $('title').textContent = title;
    $('status').textContent = 'Running…';
  }

  function episodeView(key) {
    const id = keyOf(key);
    let view = episodes.get(id);
    if (view) return view;
    const badge = el('span', { class: 'badge running' }, 'running');
    const calls = el('tbody');
    const body = el('div');
    const details = el('details', { class: 'episode', open: '' },
      el('summary', {}, `${key.task_id} · ${key.variant} · faults ${key.fault_profile}${key.perturbation && key.perturbation !== 'none' ? ` · perturbation ${key.perturbation}` : ''} · trial ${key.trial}`, badge),
      el('table', {}, el('thead', {}, el('tr', {}, el('th', {}, '#'), el('th', {}, 'tool'), el('th', {}, 'arguments'), el('th', {}, 'status'), el('th', {}, 'latency'), el('th', {}, 'fault'))), calls),
      body);
    $('episodes').append(details);
    // rows: call index → its row (in flight, then answered).
    view = { details, badge, calls, body, rows: new Map() };
    episodes.set(id, view);
    return view;
  }

  /** The elapsed-time cells of calls in flight → when the page heard of the call; they tick until answered. */
  const inFlight = new Map();
  let ticker;
  const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
  function tick() {
    const now = Date.now();
    for (const [cell, since] of inFlight) cell.textContent = `${seconds(now - since)}…`;
    if (!inFlight.size && ticker !== undefined) {
      clearInterval(ticker);
      ticker = undefined;
    }
  }

  /** Puts a call's row in index order, replacing the row it had while in flight. */
  function placeRow(view, index, row) {
    const old = view.rows.get(index);
    view.rows.set(index, row);
    if (old) {
      inFlight.delete(old.querySelector('.elapsed'));
      old.replaceWith(row);
      return;
    }
    const after = [...view.rows.entries()].filter(([i]) => i > index).sort(([a], [b]) => a - b)[0];
    if (after && after[1].isConnected) after[1].before(row);
    else view.calls.append(row);
  }

  /** A call the gateway received and has not answered yet: "in flight" with its elapsed time, ticking. */
  function startCall(view, call) {
    if (view.rows.has(call.index)) return;
    const elapsed = el('td', { class: 'num elapsed' }, `${seconds(0)}…`);
    placeRow(view, call.index, el('tr', { class: 'call in-flight' },
      el('td', { class: 'num' }, String(call.index)),
      el('td', {}, call.qualified || call.tool),
      el('td', { class: 'args' }, compact(call.arguments)),
      el('td', { class: 'status-in-flight' }, 'in flight'),
      elapsed,
      el('td', {})));
    // The page's own clock: the CLI's may differ from the browser's (a remote workbench).
    inFlight.set(elapsed, Date.now());
    if (ticker === undefined) ticker = setInterval(tick, 100);
  }

  function addCall(view, call) {
    const known = view.rows.get(call.index);
    if (known && !known.classList.contains('in-flight')) return;
    const fault = call.fault ? el('span', { class: 'fault-mark', title: call.fault.detail || '' }, `⚡ ${call.fault.type}${call.fault.executed ? ' (executed)' : ''}`) : '';
    placeRow(view, call.index, el('tr', { class: `call ${call.fault ? 'fault' : ''}` },
      el('td', { class: 'num' }, String(call.index)),
      el('td', {}, call.qualified || call.tool),
      el('td', { class: 'args' }, compact(call.arguments)),
      el('td', { class: `status-${call.status}` }, call.status),
      el('td', { class: 'num' }, `${Math.round(call.latency_ms)} ms`),
      el('td', {}, fault)));
  }

  /** Calls of `view` (or of every episode) still in flight when their episode or the run ended: never answered. */
  function settleInFlight(view) {
    for (const v of view ? [view] : [...episodes.values()]) {
      for (const row of v.rows.values()) {
        if (!row.classList.contains('in-flight')) continue;
        const cell = row.querySelector('.elapsed');
        inFlight.delete(cell);
        row.classList.remove('in-flight');
        row.querySelector('.status-in-flight').textContent = 'not answered';
      }
    }
    tick();
  }

  function verdictTree(node, root) {
    const value = node.value === undefined || node.value === null ? 'undecided' : String(node.value);
    const mark = value === 'true' ? '✓' : value === 'false' ? '✗' : '?';
    const label = node.kind === 'leaf' ? node.name || 'leaf' : node.kind;
    const item = el('li', {}, el('span', { class: value }, `${mark} ${label} = ${value}`),
      node.undecided ? el('span', { class: 'evidence' }, `  (${node.undecided})`) : undefined,
      node.evidence !== undefined ? el('span', { class: 'evidence' }, `  ${compact(node.evidence)}`) : undefined);
    if (node.children && node.children.length) item.append(el('ul', { class: 'tree' }, ...node.children.map((c) => verdictTree(c, false))));
    return root ? el('ul', { class: 'tree root' }, item) : item;
  }

  /** Why an episode did not get a verdict of its own: whose error, its code, and what the process did. */
  function errorView(error) {
    const who = error.kind === 'agent' ? 'Agent error' : 'Infrastructure error (not counted against the agent)';
    const fate = [
      error.namespace !== undefined ? `namespace ${error.namespace}` : '',
      error.exit_code !== undefined && error.exit_code !== null ? `exit code ${error.exit_code}` : '',
      error.signal ? `signal ${error.signal}` : '',
      error.http_status !== undefined ? `HTTP ${error.http_status}` : '',
    ].filter(Boolean).join(' · ');
    return el('div', { class: 'error-box' },
      el('p', { class: 'error-text' }, `${who} (${error.code}): ${error.message}`),
      fate ? el('p', { class: 'muted' }, fate) : undefined,
      error.stderr_tail ? el('pre', { class: 'error-text' }, error.stderr_tail) : undefined);
  }

  /** The goal a perturbed episode showed its agent. */
  function goalShown(level, goal) {
    return el('p', { class: 'goal-shown' }, el('span', { class: 'muted' }, `Goal shown (perturbation ${level}): `), goal);
  }

  /**
   * The badge of a finished episode. In a check, `check` says how it came out against the outcome it must have:
   * the noop agent and a counterexample failing is what a good task does (green), one of them passing is the
   * problem (red).
   */
  function finishEpisode(result, check) {
    const view = episodeView(result);
    for (const call of result.calls || []) addCall(view, call);
    settleInFlight(view);
    view.badge.className = `badge ${check ? (check.asExpected ? 'passed' : 'failed') : result.status}`;
    view.badge.textContent = check
      ? check.label
      : result.status === 'infra_error'
        ? `infra error (attempt ${result.attempt})`
        : result.status === 'agent_error'
          ? 'agent error'
          : result.status;
    const summary = `${result.tool_calls}/${result.max_steps} tool calls · ${result.unlisted_calls} unlisted · ${result.errors_seen} errors seen · ${Math.round(result.duration_ms)} ms`;
    view.body.replaceChildren(el('p', { class: 'muted' }, summary));
    if (result.goal !== undefined) view.body.append(goalShown(result.perturbation, result.goal));
    if (result.error) view.body.append(errorView(result.error));
    if (result.failure) view.body.append(el('p', { class: 'error-text' }, `Stopped before it finished (${result.failure.code}): ${result.failure.message}`));
    if (result.model) {
      const m = result.model;
      const cost = m.cost === null || m.cost === undefined ? '' : ` · ${m.currency || ''} ${m.cost.toFixed(4)}`;
      const mean = m.turn_latency_ms.length ? Math.round(m.turn_latency_ms.reduce((a, b) => a + b, 0) / m.turn_latency_ms.length) : 0;
      view.body.append(el('p', { class: 'muted' }, `${m.model} · ${m.turns} turns · ${(m.prompt_tokens + m.completion_tokens).toLocaleString()} tokens${cost} · ${mean} ms per turn · ${result.malformed_calls || 0} malformed calls`));
    }
    if (result.budget_exceeded) view.body.append(el('p', { class: 'error-text' }, 'Over max_steps.'));
    if (result.answer !== undefined) view.body.append(el('p', {}, `Answer: ${result.answer}`));
    if (result.verdict) view.body.append(el('h2', {}, 'Predicate'), verdictTree(result.verdict, true));
    // The episode's own page (written with the run's report): the whole trace, turn by turn.
    if (!check && result.work_unit) view.body.append(el('button', { type: 'button', class: 'link open-episode', onclick: () => vscode.postMessage({ type: 'openEpisode', runId: result.run_id, workUnit: result.work_unit }) }, 'open episode page'));
    if (check ? check.asExpected : result.passed) view.details.removeAttribute('open');
  }

  const pct = (v) => (v === null || v === undefined ? '–' : `${(v * 100).toFixed(1)}%`);
  const ci = (i) => (i ? ` [${(i.low * 100).toFixed(1)}, ${(i.high * 100).toFixed(1)}]` : '');

  function showScores(event) {
    runDirectory = event.directory;
    const scores = event.kind === 'run' ? event.scores : undefined;
    const table = $('scores-table');
    table.replaceChildren();
    const row = (name, value) => table.append(el('tr', {}, el('th', {}, name), el('td', {}, value)));
    if (event.kind === 'check') {
      for (const c of event.checks) {
        row(c.task_id, `${c.ok ? 'ok' : 'FAIL'} · ${c.coverage.paths.covered}/${c.coverage.paths.total} solution paths · ${c.coverage.leaves.covered}/${c.coverage.leaves.total} leaves`);
        for (const p of c.problems) row('', `– ${p}`);
      }
    } else if (scores && scores.success_rate) {
      const e = scores.episodes;
      const n = (count, word) => `${count} ${word}${count === 1 ? '' : 's'}`;
      row('outcomes', `${e.passed} passed · ${e.failed} failed · ${n(e.agent_errors, 'agent error')} · ${n(e.infra_unresolved, 'infrastructure error')}`);
      for (const x of (scores.errors || []).slice(0, 5)) row(`${x.count}× ${x.kind === 'agent' ? 'agent' : 'infra'}`, `${x.code}: ${x.message}`);
      row('success rate', `${pct(scores.success_rate.value)}${ci(scores.success_rate.ci)} (${scores.success_rate.numerator}/${scores.success_rate.denominator})`);
      if (scores.tool_call_efficiency) row('tool-call efficiency', scores.tool_call_efficiency.value === null ? '–' : scores.tool_call_efficiency.value.toFixed(3));
      if (scores.hallucinated_tool_rate) row('hallucinated-tool rate', pct(scores.hallucinated_tool_rate.value));
      if (scores.recovery_rate) row('recovery-from-error', pct(scores.recovery_rate.value));
      if (scores.malformed_call_rate && (scores.model || scores.malformed_call_rate.numerator > 0)) row('malformed-call rate', `${pct(scores.malformed_call_rate.value)} (${scores.malformed_call_rate.numerator}/${scores.malformed_call_rate.denominator})`);
      const m = scores.model;
      if (m) {
        const money = (v) => `${m.currency || ''} ${v.toFixed(4)}`.trim();
        row('tokens', `${m.total_tokens.toLocaleString()} (prompt ${m.prompt_tokens.toLocaleString()}, completion ${m.completion_tokens.toLocaleString()})${m.responses_without_usage ? ` · ${m.responses_without_usage} responses without usage` : ''}`);
        row('cost', m.cost === null ? 'not counted (no price)' : money(m.cost));
        row('cost per passed task', m.cost_per_passed === null ? '–' : money(m.cost_per_passed));
        if (m.latency_per_turn_ms) row('model latency per turn', `${Math.round(m.latency_per_turn_ms.mean)} ms (p95 ${Math.round(m.latency_per_turn_ms.p95)} ms)`);
      }
      for (const p of scores.pass_k || []) row(`pass^${p.k}`, `${pct(p.value)}${ci(p.ci)}`);
    } else {
      row('scores', 'not available');
    }
    $('scores').hidden = false;
    // A check writes no HTML report (its verdicts are above), nor does an interrupted run: the button is for
    // runs that have one.
    $('open-report').hidden = !runDirectory || event.kind !== 'run' || !event.report;
  }

  function onEvent(event, check) {
    switch (event.type) {
      case 'run-started':
        $('status').textContent = `${event.run_id} · agent ${event.agent} · faults ${event.fault_profile} · ${event.episodes} episode${event.episodes === 1 ? '' : 's'} · seed ${event.seed}`;
        break;
      case 'episode-started': {
        const view = episodeView(event.key);
        if (event.goal !== undefined) view.body.replaceChildren(goalShown(event.key.perturbation, event.goal));
        break;
      }
      case 'call-started':
        startCall(episodeView(event.key), event.call);
        break;
      case 'call':
        addCall(episodeView(event.key), event.call);
        break;
      case 'episode-finished':
        finishEpisode(event.result, check);
        break;
      case 'run-finished':
        showScores(event);
        if (event.interrupted) $('status').textContent = 'Interrupted: finished episodes are saved; the run can be resumed.';
        if (event.stopped) $('status').textContent += ` · stopped: cost budget reached (${event.stopped.currency ? event.stopped.currency + ' ' : ''}${event.stopped.spent.toFixed(4)} of ${event.stopped.max}), ${event.stopped.not_started} episodes not started; resume with a higher --max-cost`;
        break;
      case 'notice':
        $('episodes').append(el('p', { class: event.level === 'warning' ? 'error-text' : 'muted' }, event.message));
        break;
    }
  }

  /**
   * The run is over: `message` is what became of it, in the words the Test Explorer's results add up to (the
   * extension makes both from the same outcomes). Episodes and calls that never finished say so.
   */
  function endRun(message) {
    settleInFlight();
    for (const view of episodes.values()) {
      if (!view.badge.classList.contains('running')) continue;
      view.badge.className = 'badge cancelled';
      view.badge.textContent = 'not finished';
    }
    $('status').textContent = message || ($('status').textContent || '').replace(/^Running…$/, 'Finished.');
  }

  function showHistory(runs) {
    const list = $('history');
    list.replaceChildren();
    if (!runs.length) list.append(el('li', { class: 'muted' }, 'No runs in runs/ yet.'));
    for (const run of runs) {
      list.append(el('li', {},
        el('a', { title: run.directory, onclick: () => vscode.postMessage({ type: 'loadRun', directory: run.directory }) }, run.id),
        // The extension words the line (run-history.ts historyLabel): a check says check ok / check failing.
        el('div', { class: `muted history-label${run.kind === 'check' ? (run.checks ? (run.checks.failing.length ? ' check-failing' : ' check-ok') : '') : ''}` }, run.label),
        run.report ? el('button', { type: 'button', class: 'link', onclick: () => vscode.postMessage({ type: 'openReport', directory: run.directory }) }, 'report') : undefined));
    }
  }

  window.addEventListener('message', (message) => {
    const data = message.data;
    switch (data.type) {
      case 'begin': reset(data.title); break;
      case 'event': onEvent(data.event, data.check); break;
      case 'end': endRun(data.message); break;
      case 'history': showHistory(data.runs); break;
    }
  });
  $('open-report').addEventListener('click', () => runDirectory && vscode.postMessage({ type: 'openReport', directory: runDirectory }));
  $('refresh-history').addEventListener('click', () => vscode.postMessage({ type: 'refreshHistory' }));
  vscode.postMessage({ type: 'ready' });
})();
