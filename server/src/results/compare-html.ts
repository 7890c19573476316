/**
 * The comparison as one self-contained page (the report's page shell): the sides and the paired tests as
 * tables, the model x task matrix as a heatmap, success against cost per task where cost is recorded, the
 * per-namespace and per-category deltas with their intervals, and the failure modes of each side.
 */
import { CLIENT_HELPERS, html, renderPage, STYLE, type PlotAssets } from '../scoring/report-html.ts';
import { FAILURE_MODE_INFO } from '../scoring/failure-modes.ts';
import { oddsText, type Comparison } from './compare.ts';

export function renderComparisonHtml(comparison: Comparison, assets: PlotAssets, title = 'MCPBench comparison'): string {
  const labels = Object.fromEntries(Object.entries(FAILURE_MODE_INFO).map(([mode, info]) => [mode, info.label]));
  return renderPage({
    title,
    assets,
    style: STYLE + EXTRA_STYLE,
    client: CLIENT,
    data: { comparison, labels, odds: comparison.pairs.map((p) => oddsText(p.mcnemar)) },
    body: `
<header><h1>${html(title)}</h1><p id="meta"></p></header>
<main>
  <section><h2>Sides</h2><table class="data" id="sides"></table></section>
  <section><h2>Paired tests</h2><table class="data" id="pairs"></table></section>
  <section>
    <figure><figcaption>Model × task matrix: pass<sup>k</sup> per cell</figcaption><div class="plot" id="plot-matrix" data-mark="cell"></div></figure>
  </section>
  <section class="grid">
    <figure><figcaption>Deltas per namespace and category (B − A, 95% interval)</figcaption><div class="plot" id="plot-deltas" data-mark="dot"></div></figure>
    <figure><figcaption>Failure modes per side</figcaption><div class="plot" id="plot-failures" data-mark="bar"></div></figure>
  </section>
  <section>
    <figure><figcaption>Success against cost per task</figcaption><div class="plot" id="plot-cost" data-mark="dot"></div></figure>
  </section>
  <section id="warnings" hidden><h2>Warnings</h2><ul></ul></section>
</main>
`,
  });
}

const EXTRA_STYLE = `
table.data { border-collapse: collapse; font-size: 13px; margin: 6px 0; }
table.data th, table.data td { border: 1px solid var(--border); padding: 4px 8px; text-align: left; }
table.data td.num { text-align: right; font-variant-numeric: tabular-nums; }
.sig { color: var(--fail); font-weight: 600; }
`;

const CLIENT = String.raw`
(() => {
  const { comparison: c, labels, odds } = JSON.parse(document.getElementById('report-data').textContent);
${CLIENT_HELPERS}
  const signed = (v) => (v == null ? 'n/a' : (v >= 0 ? '+' : '') + (100 * v).toFixed(1));
  const pv = (p) => (p == null ? 'n/a' : p < 0.001 ? '<0.001' : p.toFixed(3));
  const fill = (id, head, rows) => {
    const table = document.getElementById(id);
    table.append(el('thead', {}, el('tr', {}, ...head.map((h) => el('th', { text: h })))));
    table.append(el('tbody', {}, ...rows.map((r) => el('tr', {}, ...r.map((cell) => (cell instanceof Node ? el('td', {}, cell) : el('td', { text: String(cell) })))))));
  };
  document.getElementById('meta').textContent = c.sides.length + ' sides · ' + c.tasks.length + ' tasks · pass^' + c.k + ' · bootstrap ' + c.bootstrap.resamples + ' resamples, seed ' + c.bootstrap.seed + ' · ' + c.correction.pairs + ' over pairs, ' + c.correction.groups + ' over deltas';
  fill('sides', ['side', 'runs', 'tasks', 'episodes', 'success', '95% CI', 'pass^' + c.k, 'agent errors', 'cost (USD)'],
    c.sides.map((s) => [s.label, s.runs.length, s.tasks, s.episodes, pct(s.success_rate), s.ci ? pct(s.ci.low) + ' to ' + pct(s.ci.high) : '', pct(s.pass_k), s.agent_errors, s.cost_usd == null ? 'n/a' : s.cost_usd.toFixed(4)]));
  fill('pairs', ['A', 'B', 'tasks', 'delta (pp)', '95% CI', 'p bootstrap (adj.)', 'McNemar b/c', 'p exact (adj.)', 'odds ratio'],
    c.pairs.map((p, i) => {
      const sig = (q) => el('span', { class: q != null && q < 0.05 ? 'sig' : '', text: pv(q) });
      const both = (raw, adj) => el('span', {}, pv(raw) + ' (', sig(adj), ')');
      return [p.a, p.b, p.tasks, p.success ? signed(p.success.mean) : 'n/a', p.success ? signed(p.success.ci.low) + ' to ' + signed(p.success.ci.high) : '',
        both(p.success ? p.success.p : null, p.p_adjusted.bootstrap), p.mcnemar.b + '/' + p.mcnemar.c, both(p.mcnemar.p, p.p_adjusted.mcnemar), odds[i]];
    }));

  const taskOrder = c.tasks.map((t) => t.task_hash);
  const taskId = Object.fromEntries(c.tasks.map((t) => [t.task_hash, t.task_id + ' (' + t.namespace + ')']));
  mount('plot-matrix', (width) => {
    const cells = c.cells.filter((x) => x.pass_k != null);
    if (!cells.length) return null;
    return Plot.plot({
      className: 'chart', width: Math.max(width, 160 + 7 * taskOrder.length), height: 90 + 26 * c.sides.length, marginLeft: 160, marginBottom: 40,
      x: { domain: taskOrder, tickFormat: () => '', label: 'tasks (grouped by namespace)' },
      y: { domain: c.sides.map((s) => s.label), label: null },
      color: { type: 'linear', scheme: 'RdYlGn', domain: [0, 1], legend: true, label: 'pass^' + c.k },
      marks: [Plot.cell(cells, { x: 'task_hash', y: 'side', fill: 'pass_k', inset: 0.5, title: (x) => taskId[x.task_hash] + '\n' + x.side + ': pass^' + c.k + ' ' + pct(x.pass_k) + ' (' + x.passed + '/' + x.episodes + ')' })],
    });
  });
  mount('plot-deltas', (width) => {
    const pairCount = new Set(c.deltas.map((d) => d.a + '|' + d.b)).size;
    const rows = c.deltas.filter((d) => d.delta).map((d) => ({ ...d, row: (pairCount > 1 ? d.b + ' − ' + d.a + ' · ' : '') + d.group + ' ' + d.key }));
    if (!rows.length) return null;
    return Plot.plot({
      className: 'chart', width, marginLeft: pairCount > 1 ? 320 : 170, height: 60 + 24 * rows.length,
      x: { label: 'delta in success rate (percentage points)', grid: true, tickFormat: (v) => (100 * v).toFixed(0) },
      y: { domain: rows.map((r) => r.row), label: null },
      marks: [
        Plot.ruleX([0]),
        Plot.ruleY(rows, { y: 'row', x1: (r) => r.delta.ci.low, x2: (r) => r.delta.ci.high, stroke: 'currentColor' }),
        Plot.dot(rows, { y: 'row', x: (r) => r.delta.mean, fill: (r) => (r.p_adjusted != null && r.p_adjusted < 0.05 ? '#e15759' : '#4e79a7'), r: 4,
          title: (r) => r.b + ' − ' + r.a + ' · ' + r.group + ' ' + r.key + ': ' + signed(r.delta.mean) + ' pp [' + signed(r.delta.ci.low) + ', ' + signed(r.delta.ci.high) + '] p adj. ' + pv(r.p_adjusted) + ' over ' + r.tasks + ' tasks' }),
      ],
    });
  });
  mount('plot-failures', (width) => {
    const rows = c.sides.flatMap((s) => Object.entries(s.failure_modes).filter(([, n]) => n > 0).map(([mode, n]) => ({ side: s.label, mode: labels[mode], n })));
    if (!rows.length) return null;
    return Plot.plot({
      className: 'chart', width, marginLeft: 160, height: 70 + 30 * c.sides.length,
      x: { label: 'failed episodes', grid: true }, y: { domain: c.sides.map((s) => s.label), label: null },
      color: { legend: true },
      marks: [Plot.barX(rows, { x: 'n', y: 'side', fill: 'mode', title: (r) => r.side + ' · ' + r.mode + ': ' + r.n }), Plot.ruleX([0])],
    });
  });
  mount('plot-cost', (width) => {
    const cells = c.cells.filter((x) => x.cost_usd != null && x.pass_k != null);
    if (!cells.length) {
      const note = el('p', { class: 'empty', text: 'No cost recorded for these runs (model agents record tokens and cost per episode).' });
      return note;
    }
    return Plot.plot({
      className: 'chart', width, height: 320, grid: true,
      x: { label: 'mean cost per episode (USD)', type: 'log' }, y: { label: 'pass^' + c.k, domain: [0, 1] }, color: { legend: true },
      marks: [Plot.dot(cells, { x: 'cost_usd', y: 'pass_k', stroke: 'side', title: (x) => taskId[x.task_hash] + ' · ' + x.side })],
    });
  });
  if (c.warnings.length) {
    const section = document.getElementById('warnings');
    section.hidden = false;
    for (const w of c.warnings) section.querySelector('ul').append(el('li', { text: w }));
  }
  document.body.dataset.rendered = 'true';
})();
`;
