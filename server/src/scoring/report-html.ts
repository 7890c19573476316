/**
 * report.html: one self-contained page. d3 and Observable Plot (UMD builds) are inlined, the run's data is
 * embedded as JSON, and a Content-Security-Policy forbids every fetch, so the page works offline and agent
 * output shown in the trace viewer can neither load nor send anything. Agent-controlled text reaches the
 * page only through textContent, never through markup.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { packageRoot } from '../paths.ts';
import type { Scores } from './metrics.ts';
import type { FailureSummary } from './derive.ts';
import { FAILURE_MODE_INFO, FAILURE_MODES } from './failure-modes.ts';
import type { EpisodeRecord, RunRecord } from '../record/schema.ts';
import { outcomeReason } from '../record/work-units.ts';
import { VIEWS_DIR } from '../record/run-folder.ts';


export interface PlotAssets {
  /** d3 UMD build (defines the global `d3`). */
  d3: string;
  /** Observable Plot UMD build (defines the global `Plot`; needs `d3`). */
  plot: string;
  versions: { d3: string; plot: string };
}

/** Where Node would find a package from the package root: walks up through node_modules folders. */
function findPackage(name: string): string {
  for (let dir = packageRoot(); ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dirname(dir) === dir) throw new Error(`${name} is not installed (needed to draw the plots of report.html)`);
  }
}

let cachedAssets: PlotAssets | undefined;

/**
 * Reads the UMD builds from node_modules. Both packages export only `umd`/`default` conditions, so the
 * files are read by path rather than through require.resolve.
 */
export function loadPlotAssets(): PlotAssets {
  if (cachedAssets) return cachedAssets;
  const d3 = findPackage('d3');
  const plot = findPackage('@observablehq/plot');
  const version = (dir: string) => String(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version);
  return (cachedAssets = {
    d3: readFileSync(join(d3, 'dist', 'd3.min.js'), 'utf8'),
    plot: readFileSync(join(plot, 'dist', 'plot.umd.min.js'), 'utf8'),
    versions: { d3: version(d3), plot: version(plot) },
  });
}

export interface HtmlInput {
  config: RunRecord;
  scores: Scores;
  /** One record per work unit (see latestByWorkUnit). */
  results: EpisodeRecord[];
  warnings: string[];
  failures?: FailureSummary;
}

export interface HtmlOptions {
  /** Longest arguments / result / evidence text kept per call in the trace viewer (default 2000). */
  maxValueChars?: number;
  /** Link each episode to its page in the episode viewer (`views/<work unit>.html`, written beside the report). */
  views?: boolean;
}

/** A value as text (strings as they are, the rest as JSON indented by `indent`), cut to `max` characters with a note. */
export function cut(value: unknown, max: number, indent = 1): string {
  let text: string;
  try {
    text = typeof value === 'string' ? value : (JSON.stringify(value, null, indent) ?? String(value));
  } catch {
    text = String(value);
  }
  return text.length > max ? `${text.slice(0, max)}\n… (${text.length - max} more characters in episodes.jsonl)` : text;
}

interface VerdictView {
  label: string;
  value: boolean | null;
  evidence?: string;
  undecided?: string;
  children?: VerdictView[];
}

function verdictView(node: NonNullable<EpisodeRecord['verdict']>, max: number): VerdictView {
  const view: VerdictView = { label: node.kind === 'leaf' ? (node.name ?? 'leaf') : node.kind, value: node.value ?? null };
  if (node.evidence !== undefined) view.evidence = cut(node.evidence, max);
  if (node.undecided) view.undecided = node.undecided;
  if (node.children) view.children = node.children.map((c) => verdictView(c, max));
  return view;
}

/** The trace viewer's data: what it shows and nothing more, with long values cut. */
function episodeView(r: EpisodeRecord, max: number, views: boolean) {
  return {
    task_id: r.task_id,
    view: views ? `${VIEWS_DIR}/${r.work_unit}.html` : null,
    trial: r.trial,
    variant: r.variant,
    fault_profile: r.fault_profile,
    perturbation: r.perturbation,
    status: r.status,
    passed: r.passed,
    category: r.category,
    namespaces: r.namespaces,
    tool_calls: r.tool_calls,
    max_steps: r.max_steps,
    unlisted_calls: r.unlisted_calls,
    errors_seen: r.errors_seen,
    budget_exceeded: r.budget_exceeded,
    duration_ms: r.duration_ms,
    attempt: r.attempt,
    answer: r.answer === undefined ? null : cut(r.answer, max),
    goal: r.goal ?? null,
    perturbed: r.perturbed ?? null,
    reason: outcomeReason(r),
    error: r.error ?? null,
    failure: r.failure ?? null,
    model: r.model
      ? {
          model: r.model.model,
          turns: r.model.turns,
          requests: r.model.requests,
          tokens: r.model.prompt_tokens + r.model.completion_tokens,
          prompt_tokens: r.model.prompt_tokens,
          completion_tokens: r.model.completion_tokens,
          cost: r.model.cost,
          currency: r.model.currency ?? null,
          end: r.model.end ?? null,
          malformed: r.malformed_calls ?? 0,
          formats: [...new Set(r.model.calls.map((c) => c.format))],
        }
      : null,
    verdict: r.verdict ? verdictView(r.verdict, max) : null,
    calls: r.calls.map((c) => ({
      index: c.index,
      tool: c.tool,
      status: c.status,
      fault: c.fault ?? null,
      latency_ms: c.latency_ms,
      arguments: cut(c.arguments, max),
      result: cut(c.result, max),
    })),
  };
}

function compareTuples(a: string[], b: string[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  return 0;
}

/** JSON inside a <script> element: `<` escaped so no `</script>` or `<!--` in the data can end it. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');
/** A library inside a <script> element; `<\/` means the same as `</` in JS strings, regexes and comments. */
const scriptSource = (source: string) => source.replace(/<\/(script)/gi, '<\\/$1');
export const html = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export interface PageParts {
  title: string;
  /** Markup of the page between <body> and the footer (static, no agent text). */
  body: string;
  /** Embedded as JSON in <script id="report-data">; agent text reaches the page only through it. */
  data: unknown;
  /** The page's script (plain ES2020 over the globals d3 and Plot). */
  client: string;
  style: string;
  assets: PlotAssets;
}

/**
 * One self-contained page: inlined d3 and Observable Plot, the data as JSON, and a Content-Security-Policy
 * that forbids every fetch. The run report, the comparison and the leaderboard are all made by it.
 */
export function renderPage(parts: PageParts): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<meta name="color-scheme" content="light dark">
<title>${html(parts.title)}</title>
<style>${parts.style}</style>
</head>
<body>${parts.body}
<footer>Plots drawn with Observable Plot ${html(parts.assets.versions.plot)} and d3 ${html(parts.assets.versions.d3)} (ISC licence), inlined.</footer>
<script type="application/json" id="report-data">${scriptJson(parts.data)}</script>
<script>${scriptSource(parts.assets.d3)}</script>
<script>${scriptSource(parts.assets.plot)}</script>
<script>${parts.client}</script>
</body>
</html>
`;
}

export function renderHtml(input: HtmlInput, assets: PlotAssets, options: HtmlOptions = {}): string {
  const max = options.maxValueChars ?? 2000;
  const order = (r: EpisodeRecord) => [r.task_id, r.variant, r.fault_profile, r.perturbation];
  const episodes = [...input.results]
    .sort((a, b) => compareTuples(order(a), order(b)) || a.trial - b.trial)
    .map((r) => episodeView(r, max, options.views ?? false));
  // Each failed episode's failure mode, attached to its view by key.
  const modeKey = (r: { task_id: string; trial: number; variant: string; fault_profile: string; perturbation: string }) => JSON.stringify([r.task_id, r.trial, r.variant, r.fault_profile, r.perturbation]);
  const modes = new Map((input.failures?.episodes ?? []).map((f) => [modeKey(f), { mode: f.mode, label: FAILURE_MODE_INFO[f.mode].label, ...f.evidence, also: f.also }]));
  for (const episode of episodes) Object.assign(episode, { mode: modes.get(modeKey(episode)) ?? null });
  const failures = input.failures
    ? { failed: input.failures.failed, specific_share: input.failures.specific_share, modes: FAILURE_MODES.map((mode) => ({ mode, label: FAILURE_MODE_INFO[mode].label, family: FAILURE_MODE_INFO[mode].family, description: FAILURE_MODE_INFO[mode].description, count: input.failures!.counts[mode] })) }
    : null;
  const data = { config: input.config, scores: input.scores, warnings: input.warnings, failures, episodes };
  const title = `MCPBench report: ${input.config.run_id}`;
  return renderPage({ title, assets, data, style: STYLE, client: CLIENT, body: `
<header>
  <h1>${html(title)}</h1>
  <p id="meta"></p>
</header>
<main>
  <section id="summary" class="cards" aria-label="Scores"></section>
  <section id="agent-settings" hidden><h2>Agent settings</h2></section>
  <section id="warnings" hidden><h2>Warnings</h2><ul></ul></section>
  <section class="grid">
    <figure><figcaption>Success by server</figcaption><div class="plot" id="plot-namespace" data-mark="bar"></div></figure>
    <figure><figcaption>Success by category</figcaption><div class="plot" id="plot-category" data-mark="bar"></div></figure>
  </section>
  <section class="grid">
    <figure>
      <figcaption><span>Reliability surface: pass<sup>k</sup> over fault profile × perturbation level</span>
        <label>k <select id="surface-k"></select></label></figcaption>
      <div class="plot" id="plot-surface" data-mark="cell"></div>
    </figure>
    <figure><figcaption><span>pass<sup>k</sup> by k (95% bootstrap interval)</span></figcaption><div class="plot" id="plot-passk" data-mark="line"></div></figure>
  </section>
  <section class="grid">
    <figure><figcaption>Fault outcomes: share of episodes that still passed, per injected fault type</figcaption><div class="plot" id="plot-faults" data-mark="bar"></div></figure>
    <figure><figcaption>Failure modes of the failed episodes</figcaption><div class="plot" id="plot-failures" data-mark="bar"></div></figure>
  </section>
  <section id="faults" hidden>
    <h2>Faults decided and delivered</h2>
    <p class="muted">The profile's rates are rates of decisions: the seeded generator decides a fault per call, but not every decision can be delivered (StaleData needs an earlier read result of the same tool, SchemaDrift a field name to rename, PartialResponse and EmptyResponse a successful result). Calls carrying it: the delivered ones, and the later calls a rate-limit window or a cascade failed too.</p>
    <table class="calls" id="faults-table"><thead><tr><th>fault type</th><th>decided</th><th>delivered</th><th>calls carrying it</th><th>episodes</th><th>passed</th></tr></thead><tbody></tbody></table>
  </section>
  <section id="errors" hidden>
    <h2>Most frequent errors</h2>
    <table class="calls" id="errors-table"><thead><tr><th>count</th><th>kind</th><th>code</th><th>message</th></tr></thead><tbody></tbody></table>
  </section>
  <section id="episodes">
    <h2>Episodes</h2>
    <div class="filters">
      <input id="filter-text" type="search" placeholder="Filter by task, variant, tool…" aria-label="Filter episodes">
      <select id="filter-status" aria-label="Outcome"><option value="">all outcomes</option><option value="passed">passed</option><option value="failed">failed</option><option value="agent_error">agent error</option><option value="infra_error">infrastructure error</option><option value="error">any error</option></select>
      <span id="episode-count"></span>
    </div>
    <div id="episode-list"></div>
  </section>
</main>
` });
}

export const STYLE = `
:root { color-scheme: light dark; --bg: #ffffff; --fg: #1f2328; --muted: #59636e; --card: #f6f8fa; --border: #d1d9e0;
  --pass: #1a7f37; --fail: #cf222e; --agent: #8250df; --infra: #9a6700; --fault: #fff8c5; --accent: #0969da; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --card: #161b22; --border: #3d444d;
    --pass: #3fb950; --fail: #f85149; --agent: #ab7df8; --infra: #d29922; --fault: #3b2e00; --accent: #4493f8; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; }
header, main, footer { max-width: 1200px; margin: 0 auto; padding: 0 20px; }
header h1 { font-size: 22px; margin: 20px 0 4px; }
#meta, footer, .muted { color: var(--muted); }
footer { padding: 24px 20px; font-size: 12px; }
h2 { font-size: 17px; margin: 28px 0 10px; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(170px, 1fr)); gap: 10px; margin-top: 16px; }
.card { background: var(--card); border: 1px solid var(--border); border-radius: 8px; padding: 10px 12px; }
.card .label { color: var(--muted); font-size: 12px; }
.card .value { font-size: 22px; font-weight: 600; }
.card .detail { color: var(--muted); font-size: 12px; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(480px, 1fr)); gap: 16px; }
figure { margin: 16px 0 0; background: var(--card); border: 1px solid var(--border); border-radius: 8px; padding: 12px; min-width: 0; }
figcaption { font-weight: 600; margin-bottom: 8px; display: flex; gap: 12px; align-items: center; flex-wrap: wrap; }
.plot { color: var(--fg); overflow-x: auto; }
.plot svg, .plot figure { background: transparent; }
.plot figure { border: 0; padding: 0; margin: 0; }
.chart { --plot-background: var(--card); }
.empty { color: var(--muted); font-style: italic; }
select, input { font: inherit; color: var(--fg); background: var(--bg); border: 1px solid var(--border); border-radius: 6px; padding: 3px 6px; }
.filters { display: flex; gap: 8px; align-items: center; margin-bottom: 8px; }
.filters input { flex: 1; max-width: 360px; }
details.episode { border: 1px solid var(--border); border-radius: 6px; margin: 4px 0; background: var(--card); }
details.episode > summary { cursor: pointer; padding: 6px 10px; display: flex; gap: 10px; align-items: baseline; flex-wrap: wrap; }
details.episode[open] > summary { border-bottom: 1px solid var(--border); }
.trace { padding: 8px 10px 12px; overflow-x: auto; }
.badge { font-size: 11px; font-weight: 600; border-radius: 10px; padding: 1px 8px; border: 1px solid currentColor; white-space: nowrap; }
.s-passed { color: var(--pass); } .s-failed { color: var(--fail); } .s-agent_error { color: var(--agent); } .s-infra_error { color: var(--infra); }
.reason { color: var(--muted); font-size: 12px; }
.tag { color: var(--muted); font-size: 12px; }
.badge.mode { color: var(--muted); font-weight: 500; }
p.failure { border-left: 3px solid var(--fail); padding-left: 8px; }
table.calls { border-collapse: collapse; width: 100%; margin: 6px 0 12px; font-size: 12px; }
table.calls th, table.calls td { border: 1px solid var(--border); padding: 4px 6px; text-align: left; vertical-align: top; }
table.calls tr.fault td { background: var(--fault); }
table.calls pre { margin: 0; max-height: 220px; overflow: auto; white-space: pre-wrap; word-break: break-word; font-size: 11px; }
.fault-mark { font-weight: 600; color: var(--infra); white-space: nowrap; }
ul.verdict, ul.verdict ul { list-style: none; padding-left: 18px; margin: 2px 0; }
ul.verdict { padding-left: 0; }
.v { font-weight: 600; font-family: ui-monospace, monospace; }
.v-true { color: var(--pass); } .v-false { color: var(--fail); } .v-null { color: var(--infra); }
.evidence { color: var(--muted); font-family: ui-monospace, monospace; font-size: 11px; white-space: pre-wrap; word-break: break-word; }
pre.answer, pre.infra { white-space: pre-wrap; background: var(--bg); border: 1px solid var(--border); border-radius: 6px; padding: 6px; }
`;

/**
 * Helpers every page's script starts with: `el` builds elements (text only through textContent), `pct` and
 * `ci` format rates and intervals, `mount` draws a plot into its container (or says there is no data).
 */
export const CLIENT_HELPERS = String.raw`
  const el = (tag, props, ...children) => {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (k === 'class') node.className = v; else if (k === 'text') node.textContent = v; else node.setAttribute(k, v);
    }
    for (const child of children) if (child != null) node.append(child);
    return node;
  };
  const pct = (v) => (v == null ? 'n/a' : (100 * v).toFixed(1) + '%');
  const ci = (c) => (c ? '95% CI ' + pct(c.low) + ' to ' + pct(c.high) : '');
  const mount = (id, build) => {
    const container = document.getElementById(id);
    container.replaceChildren();
    try {
      const chart = build(container.clientWidth || 560);
      container.append(chart || el('p', { class: 'empty', text: 'No data for this plot.' }));
    } catch (error) {
      container.append(el('p', { class: 'empty', text: 'Plot failed: ' + error.message }));
      throw error;
    }
  };

`;

/** The page's script: plain ES2020 over the globals `d3` and `Plot`, no framework. */
const CLIENT = String.raw`
(() => {
  const data = JSON.parse(document.getElementById('report-data').textContent);
  const { config, scores } = data;
${CLIENT_HELPERS}
  const PROFILE_ORDER = ['none', 'light', 'medium', 'heavy'];
  const orderBy = (values, known) => [...new Set(values)].sort((a, b) => {
    const ia = known.indexOf(a), ib = known.indexOf(b);
    if (ia >= 0 || ib >= 0) return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib);
    const na = Number(a), nb = Number(b);
    return Number.isFinite(na) && Number.isFinite(nb) ? na - nb : String(a).localeCompare(String(b));
  });
  const BAR = '#4e79a7';

  document.getElementById('meta').textContent = [
    'agent ' + config.agent, 'faults ' + config.fault_profile,
    ...(config.perturbations.some((p) => p !== 'none') ? ['perturbation ' + config.perturbations.join(', ')] : []),
    'seed ' + config.seed, config.tasks.length + ' tasks', 'created ' + config.created_at,
  ].join(' · ');

  // ---- Summary cards
  const summary = document.getElementById('summary');
  const card = (label, value, detail) => summary.append(el('div', { class: 'card' },
    el('div', { class: 'label', text: label }), el('div', { class: 'value', text: value }), el('div', { class: 'detail', text: detail || '' })));
  const e = scores.episodes;
  card('Success rate', pct(scores.success_rate.value), scores.success_rate.numerator + '/' + scores.success_rate.denominator + ' · ' + ci(scores.success_rate.ci));
  for (const p of scores.pass_k.slice(1)) card('pass^' + p.k, pct(p.value), p.tasks + ' tasks · ' + ci(p.ci));
  card('Tool-call efficiency', scores.tool_call_efficiency.value == null ? 'n/a' : scores.tool_call_efficiency.value.toFixed(2),
    'calls / max_steps over ' + scores.tool_call_efficiency.episodes + ' passed (lower is better)');
  card('Hallucinated tools', pct(scores.hallucinated_tool_rate.value), scores.hallucinated_tool_rate.numerator + ' of ' + scores.hallucinated_tool_rate.denominator + ' calls');
  card('Recovery from error', pct(scores.recovery_rate.value), scores.recovery_rate.numerator + '/' + scores.recovery_rate.denominator + ' recovery episodes that saw an error');
  card('Outcomes', e.passed + ' / ' + e.failed + ' / ' + e.agent_errors + ' / ' + e.infra_unresolved, 'passed / failed / agent errors / infrastructure errors');
  card('Agent errors', String(e.agent_errors), 'the agent process or its model endpoint broke · scored as not passed');
  card('Infrastructure errors', String(e.infra_errors), e.infra_unresolved + ' unresolved after retries · not counted as failures');
  const m = scores.model;
  if (m || (scores.malformed_call_rate && scores.malformed_call_rate.numerator > 0)) {
    card('Malformed calls', pct(scores.malformed_call_rate.value), scores.malformed_call_rate.numerator + ' of ' + scores.malformed_call_rate.denominator + ' attempted calls rejected before the gateway');
  }
  if (m) {
    const int = (n) => Math.round(n).toLocaleString('en-US');
    const money = (v) => (m.currency ? m.currency + ' ' : '') + v.toFixed(4);
    card('Tokens', int(m.total_tokens), 'prompt ' + int(m.prompt_tokens) + ' (' + int(m.cached_tokens) + ' cached) · completion ' + int(m.completion_tokens) + ' · ' + int(m.requests) + ' requests' + (m.responses_without_usage ? ' · ' + m.responses_without_usage + ' without usage' : ''));
    card('Cost', m.cost == null ? 'n/a' : money(m.cost), m.cost == null ? 'no price for the model (--prices FILE)' : (m.unpriced_episodes ? m.unpriced_episodes + ' episodes without a price' : 'all episodes priced'));
    card('Cost per passed task', m.cost_per_passed == null ? 'n/a' : money(m.cost_per_passed), m.tokens_per_passed == null ? '' : int(m.tokens_per_passed) + ' tokens per passed task');
    if (m.latency_per_turn_ms) card('Model latency per turn', int(m.latency_per_turn_ms.mean) + ' ms', 'p50 ' + int(m.latency_per_turn_ms.p50) + ' · p95 ' + int(m.latency_per_turn_ms.p95) + ' ms · ' + int(m.latency_per_turn_ms.turns) + ' turns');
  }
  // The agent's options as run.json records them: for a model agent, every setting it ran with.
  const options = config.agent_options || {};
  const keys = Object.keys(options).filter((k) => k !== 'system_prompt');
  if (keys.length || config.max_cost !== undefined) {
    const shown = keys.map((k) => {
      const v = options[k];
      if (k === 'prices' && v && typeof v === 'object') return 'prices ' + v.file + (v.model ? '' : ' (no price for the model)');
      return k + ' ' + (typeof v === 'object' ? JSON.stringify(v) : String(v));
    });
    if (config.max_cost !== undefined) shown.push('max_cost ' + config.max_cost);
    const settings = document.getElementById('agent-settings');
    settings.hidden = false;
    settings.append(el('p', { class: 'muted', text: shown.join(' · ') }));
    if (typeof options.system_prompt === 'string') settings.append(el('details', {}, el('summary', { text: 'System prompt' }), el('pre', { class: 'answer', text: options.system_prompt })));
  }

  const rowsOf = (tableId, rows) => {
    const body = document.querySelector('#' + tableId + ' tbody');
    for (const cells of rows) body.append(el('tr', {}, ...cells.map((c) => el('td', { text: String(c) }))));
  };
  if (scores.fault_outcomes.length) {
    document.getElementById('faults').hidden = false;
    rowsOf('faults-table', scores.fault_outcomes.map((f) => [f.type + (f.recoverable ? '' : ' (not recoverable)'), f.decided, f.delivered, f.calls_injected, f.episodes, f.passed]));
  }
  if (scores.errors.length) {
    document.getElementById('errors').hidden = false;
    rowsOf('errors-table', scores.errors.map((x) => [x.count, x.kind, x.code, x.message]));
  }

  if (data.warnings.length) {
    const section = document.getElementById('warnings');
    section.hidden = false;
    for (const w of data.warnings) section.querySelector('ul').append(el('li', { text: w }));
  }

  // ---- Plots
  const successBars = (rows) => (width) => {
    rows = rows.filter((r) => r.success_rate != null);
    if (!rows.length) return null;
    return Plot.plot({
      className: 'chart', width, marginLeft: 120, marginRight: 110, height: 40 + 28 * rows.length,
      x: { domain: [0, 100], percent: true, label: 'success rate (%)', grid: true },
      y: { label: null, domain: rows.map((r) => r.key) },
      marks: [
        Plot.barX(rows, { x: 'success_rate', y: 'key', fill: BAR, title: (r) => r.key + ': ' + r.passed + '/' + r.attempted + ' ' + ci(r.ci) }),
        Plot.ruleY(rows.filter((r) => r.ci), { y: 'key', x1: (r) => r.ci.low, x2: (r) => r.ci.high, stroke: 'currentColor', strokeWidth: 1.5 }),
        Plot.text(rows, { x: 1, y: 'key', text: (r) => pct(r.success_rate) + ' (' + r.passed + '/' + r.attempted + ')', textAnchor: 'start', dx: 8, fill: 'currentColor' }),
        Plot.ruleX([0]),
      ],
    });
  };
  mount('plot-namespace', successBars(scores.by_namespace));
  mount('plot-category', successBars(scores.by_category));

  const ks = [...new Set(scores.surface.map((c) => c.k))].sort((a, b) => a - b);
  const kSelect = document.getElementById('surface-k');
  for (const k of ks) kSelect.append(el('option', { value: String(k), text: String(k) }));
  const drawSurface = () => mount('plot-surface', (width) => {
    const k = Number(kSelect.value || 1);
    const cells = scores.surface.filter((c) => c.k === k);
    if (!cells.length) return null;
    const profiles = orderBy(scores.surface.map((c) => c.fault_profile), PROFILE_ORDER);
    const levels = orderBy(scores.surface.map((c) => c.perturbation), ['none', 'light', 'medium', 'heavy']);
    return Plot.plot({
      className: 'chart', width: Math.min(width, 160 + 110 * levels.length), marginLeft: 90, height: 70 + 48 * profiles.length,
      x: { domain: levels, label: 'perturbation level', axis: 'top' },
      y: { domain: profiles, label: 'fault profile' },
      color: { type: 'linear', scheme: 'RdYlGn', domain: [0, 100], legend: true, label: 'pass^' + k + ' (%)', percent: true },
      marks: [
        Plot.cell(cells, { x: 'perturbation', y: 'fault_profile', fill: 'pass_k', inset: 1, title: (c) => 'pass^' + k + ' = ' + pct(c.pass_k) + ' over ' + c.tasks + ' tasks' }),
        // Two text marks with constant fills: a fill channel would go through the color scale.
        ...[[(c) => c.pass_k < 0.2 || c.pass_k > 0.8, 'white'], [(c) => c.pass_k >= 0.2 && c.pass_k <= 0.8, 'black']].map(([keep, fill]) =>
          Plot.text(cells.filter(keep), { x: 'perturbation', y: 'fault_profile', text: (c) => pct(c.pass_k) + '\nn=' + c.tasks, fill })),
      ],
    });
  });
  kSelect.addEventListener('change', drawSurface);
  drawSurface();

  mount('plot-passk', (width) => {
    const rows = scores.pass_k.filter((p) => p.value != null);
    if (!rows.length) return null;
    return Plot.plot({
      className: 'chart', width, height: 260,
      x: { label: 'k (trials that must all pass)', ticks: rows.map((p) => p.k), tickFormat: 'd' },
      y: { domain: [0, 100], percent: true, label: 'pass^k (%)', grid: true },
      marks: [
        Plot.areaY(rows.filter((p) => p.ci), { x: 'k', y1: (p) => p.ci.low, y2: (p) => p.ci.high, fill: BAR, fillOpacity: 0.2 }),
        Plot.line(rows, { x: 'k', y: 'value', stroke: BAR, strokeWidth: 2 }),
        Plot.dot(rows, { x: 'k', y: 'value', fill: BAR, title: (p) => 'pass^' + p.k + ' = ' + pct(p.value) + ' ' + ci(p.ci) }),
      ],
    });
  });

  mount('plot-faults', (width) => {
    const rows = scores.fault_outcomes.filter((f) => f.pass_rate != null);
    if (!rows.length) return null;
    return Plot.plot({
      className: 'chart', width, marginLeft: 130, marginRight: 200, height: 50 + 28 * rows.length,
      x: { domain: [0, 100], percent: true, label: 'episodes with this fault that passed (%)', grid: true },
      y: { label: null, domain: rows.map((f) => f.type) },
      color: { domain: ['recoverable', 'not recoverable'], range: ['#59a14f', '#e15759'], legend: true },
      marks: [
        Plot.barX(rows, { x: 'pass_rate', y: 'type', fill: (f) => (f.recoverable ? 'recoverable' : 'not recoverable') }),
        Plot.text(rows, { x: 1, y: 'type', dx: 8, textAnchor: 'start', fill: 'currentColor',
          text: (f) => f.calls_injected + ' calls injected · ' + f.passed + '/' + f.episodes + ' passed' }),
        Plot.ruleX([0]),
      ],
    });
  });

  mount('plot-failures', (width) => {
    const rows = data.failures ? data.failures.modes.filter((m) => m.count > 0) : [];
    if (!rows.length) return null;
    return Plot.plot({
      className: 'chart', width, marginLeft: 160, marginRight: 60, height: 50 + 28 * rows.length,
      x: { label: 'failed episodes', grid: true },
      y: { label: null, domain: rows.map((m) => m.label) },
      color: { domain: ['tool-call', 'cognitive', 'unknown'], range: ['#e15759', '#4e79a7', '#bab0ac'], legend: true },
      marks: [
        Plot.barX(rows, { x: 'count', y: 'label', fill: 'family', title: (m) => m.label + ': ' + m.description }),
        Plot.text(rows, { x: 'count', y: 'label', text: (m) => String(m.count), dx: 6, textAnchor: 'start', fill: 'currentColor' }),
        Plot.ruleX([0]),
      ],
    });
  });

  // ---- Trace viewer: summaries up front, a trace built the first time it is opened.
  const list = document.getElementById('episode-list');
  const verdictTree = (node) => {
    const value = node.value === null ? 'unknown' : String(node.value);
    const li = el('li', {}, el('span', { class: 'v v-' + String(node.value), text: value }), ' ', el('span', { text: node.label }));
    if (node.undecided) li.append(' ', el('span', { class: 'evidence', text: '(undecided: ' + node.undecided + ')' }));
    if (node.evidence != null) li.append(el('div', { class: 'evidence', text: 'evidence: ' + node.evidence }));
    if (node.children && node.children.length) li.append(el('ul', {}, ...node.children.map(verdictTree)));
    return li;
  };
  const traceOf = (ep) => {
    const box = el('div', { class: 'trace' });
    const facts = ep.category + ' · ' + ep.namespaces.join(', ') + ' · ' + ep.tool_calls + '/' + ep.max_steps + ' steps · ' +
      ep.unlisted_calls + ' unlisted · ' + ep.errors_seen + ' errors seen' + (ep.budget_exceeded ? ' · budget exceeded' : '') + ' · attempt ' + ep.attempt;
    box.append(el('p', { class: 'muted', text: facts }));
    if (ep.goal != null) {
      // What the agent was shown: a perturbed goal, with the transforms that made it from the task's.
      box.append(el('h4', { text: 'Goal shown (perturbation ' + ep.perturbation + ')' }), el('pre', { class: 'answer', text: ep.goal }));
      const applied = ep.perturbed ? ep.perturbed.applied.map((a) => a.kind + ': ' + a.detail) : [];
      if (ep.perturbed && ep.perturbed.paraphrase) applied.push('paraphrase (' + ep.perturbed.paraphrase.model + '): ' + (ep.perturbed.paraphrase.paraphrased ? 'used' : 'not used, ' + (ep.perturbed.paraphrase.error || 'refused')));
      if (applied.length) box.append(el('p', { class: 'muted', text: applied.join(' · ') }));
    }
    if (ep.mode) {
      const where = ep.mode.call_index != null ? ' (call #' + ep.mode.call_index + ')' : ep.mode.leaf ? ' (' + ep.mode.leaf + ')' : '';
      box.append(el('p', { class: 'failure' }, el('strong', { text: 'Failure mode: ' + ep.mode.label + where }), ' ', el('span', { text: ep.mode.detail }),
        ep.mode.also.length ? el('span', { class: 'muted', text: ' · also ' + ep.mode.also.join(', ') }) : null));
    }
    if (ep.error) {
      const x = ep.error;
      const fate = [x.namespace != null ? 'namespace ' + x.namespace : '', x.exit_code != null ? 'exit code ' + x.exit_code : '', x.signal ? 'signal ' + x.signal : '',
        x.exited != null ? (x.exited ? 'the process had exited' : 'the process was still running') : '', x.http_status != null ? 'HTTP ' + x.http_status : '', x.attempts != null ? x.attempts + ' attempts' : ''].filter(Boolean).join(' · ');
      box.append(el('h4', { text: (x.kind === 'agent' ? 'Agent error' : 'Infrastructure error') + ' (' + x.code + ')' }),
        el('pre', { class: 'infra', text: x.message + (fate ? '\n' + fate : '') + (x.stderr_tail ? '\n--- last lines of its stderr ---\n' + x.stderr_tail : '') }));
    }
    if (ep.failure) box.append(el('h4', { text: 'Failed (' + ep.failure.code + ')' }), el('pre', { class: 'infra', text: ep.failure.message }));
    if (ep.model) {
      const m = ep.model;
      box.append(el('p', { class: 'muted', text: m.model + ' · ' + m.turns + ' turns, ' + m.requests + ' requests · ' + m.tokens + ' tokens (prompt ' + m.prompt_tokens + ', completion ' + m.completion_tokens + ')' +
        (m.cost == null ? '' : ' · ' + (m.currency ? m.currency + ' ' : '') + m.cost.toFixed(4)) + ' · ' + m.malformed + ' malformed calls' + (m.formats.length ? ' · formats ' + m.formats.join(', ') : '') + (m.end ? ' · ended: ' + m.end : '') }));
    }
    const table = el('table', { class: 'calls' });
    table.append(el('thead', {}, el('tr', {}, ...['#', 'tool', 'status', 'fault', 'latency', 'arguments', 'result'].map((h) => el('th', { text: h })))));
    const body = el('tbody');
    for (const call of ep.calls) {
      const fault = call.fault ? el('span', { class: 'fault-mark', text: '⚡ ' + call.fault.type + (call.fault.executed ? ' (executed)' : ' (not executed)') + (call.fault.detail ? ': ' + call.fault.detail : '') }) : '';
      body.append(el('tr', { class: call.fault ? 'fault' : '' },
        el('td', { text: String(call.index) }), el('td', {}, el('code', { text: call.tool })), el('td', { text: call.status }),
        el('td', {}, fault), el('td', { text: call.latency_ms.toFixed(0) + ' ms' }),
        el('td', {}, el('pre', { text: call.arguments })), el('td', {}, el('pre', { text: call.result }))));
    }
    table.append(body);
    box.append(el('h4', { text: ep.calls.length + ' calls' }), ep.calls.length ? table : el('p', { class: 'muted', text: 'No calls.' }));
    if (ep.answer != null) box.append(el('h4', { text: 'Final answer' }), el('pre', { class: 'answer', text: ep.answer }));
    box.append(el('h4', { text: 'Verdict' }), ep.verdict ? el('ul', { class: 'verdict' }, verdictTree(ep.verdict)) : el('p', { class: 'muted', text: 'No verdict.' }));
    return box;
  };
  const rows = data.episodes.map((ep, i) => {
    const faults = ep.calls.filter((c) => c.fault).length;
    const details = el('details', { class: 'episode', 'data-episode': String(i) },
      el('summary', {},
        el('span', { class: 'badge s-' + ep.status, text: ep.status.replace('_', ' ') }),
        el('strong', { text: ep.task_id }),
        ep.reason ? el('span', { class: 'reason', text: ep.reason }) : null,
        ep.mode ? el('span', { class: 'badge mode', text: ep.mode.label }) : null,
        el('span', { class: 'tag', text: 'trial ' + ep.trial + ' · ' + ep.variant + ' · faults ' + ep.fault_profile + ' · perturbation ' + ep.perturbation }),
        el('span', { class: 'tag', text: ep.calls.length + ' calls' + (faults ? ' · ' + faults + ' faults' : '') + ' · ' + (ep.duration_ms / 1000).toFixed(2) + ' s' }),
        ep.view ? el('a', { class: 'open-view', href: ep.view, text: 'open episode ↗' }) : null));
    details.addEventListener('toggle', () => { if (details.open && details.children.length === 1) details.append(traceOf(ep)); });
    const haystack = [ep.task_id, ep.variant, ep.fault_profile, ep.perturbation, ep.category, ep.reason, ep.mode ? ep.mode.label : '', ...ep.namespaces, ...ep.calls.map((c) => c.tool)].join(' ').toLowerCase();
    return { ep, details, haystack };
  });
  const text = document.getElementById('filter-text');
  const status = document.getElementById('filter-status');
  const applyFilter = () => {
    const needle = text.value.trim().toLowerCase();
    let shown = 0;
    for (const row of rows) {
      const outcome = status.value === 'error' ? row.ep.error != null : !status.value || row.ep.status === status.value;
      const visible = (!needle || row.haystack.includes(needle)) && outcome;
      row.details.hidden = !visible;
      if (visible) shown++;
    }
    document.getElementById('episode-count').textContent = shown + ' of ' + rows.length + ' episodes';
  };
  text.addEventListener('input', applyFilter);
  status.addEventListener('change', applyFilter);
  list.append(...rows.map((r) => r.details));
  applyFilter();
  document.body.dataset.rendered = 'true';
})();
`;
