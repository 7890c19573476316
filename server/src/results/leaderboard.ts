/**
 * `mcpbench leaderboard`: a static, self-contained leaderboard from the results database, the way benchmarks
 * publish theirs: per set and month, each agent's success rate with its 95% bootstrap interval over tasks,
 * pass^k for every k its trials allow, cost where recorded, and links to each run's report.html.
 */
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { CLIENT_HELPERS, html, loadPlotAssets, renderPage, STYLE, type PlotAssets } from '../scoring/report-html.ts';
import { episodesOf, perTask, summarizeSide, type SideSummary } from './compare.ts';
import { McpbenchError } from '../errors.ts';
import type { ResultsDb } from './db.ts';
import { configurationText, parseConfiguration, type ScoringConfiguration } from './configuration.ts';

export interface LeaderboardEntry {
  agent: string;
  /** What the runs measured under besides agent, set and month: an entry pools only runs of one configuration. */
  configuration: ScoringConfiguration | null;
  configuration_text: string;
  /** Whether every run of the entry is complete (only when incomplete runs were asked for can it be false). */
  complete: boolean;
  runs: { run_id: string; report: string | null; completeness: string }[];
  summary: SideSummary;
  pass_k: { k: number; value: number | null }[];
  cost_per_episode: number | null;
}

export interface LeaderboardSection {
  set: string | null;
  month: string;
  entries: LeaderboardEntry[];
  /** Runs of this set and month left out because they are not complete (unless incomplete runs were asked for). */
  not_ranked: { run_id: string; agent: string; completeness: string }[];
}

export class LeaderboardError extends McpbenchError {
  static override readonly code: string = 'leaderboard';
}

export interface Leaderboard {
  generated_at: string;
  sections: LeaderboardSection[];
}

/**
 * The leaderboard's data. Report links are relative to `linkFrom` (the output folder) when the run folder
 * still holds its report.html, else null.
 */
export async function buildLeaderboard(db: ResultsDb, options: { set?: string; linkFrom?: string; resamples?: number; seed?: number; now?: Date; includeIncomplete?: boolean } = {}): Promise<Leaderboard> {
  let query = db.selectFrom('runs').select(['run_id', 'agent_label', 'set_name', 'month', 'directory', 'trials', 'completeness', 'configuration']);
  if (options.set) query = query.where('set_name', '=', options.set);
  const all = await query.orderBy('month', 'desc').orderBy('set_name').orderBy('agent_label').orderBy('configuration').orderBy('run_id').execute();
  const ranked = (r: (typeof all)[number]) => options.includeIncomplete === true || r.completeness === 'complete';
  const groups = new Map<string, typeof all>();
  for (const run of all) {
    const key = JSON.stringify([run.set_name, run.month]);
    groups.set(key, [...(groups.get(key) ?? []), run]);
  }
  const bootstrap = { resamples: options.resamples ?? 2000, seed: options.seed ?? 1, confidence: 0.95 };
  const sections: LeaderboardSection[] = [];
  for (const found of groups.values()) {
    const group = found.filter(ranked);
    // One entry per agent and configuration: unlike configurations are never pooled into one rate.
    const byAgent = new Map<string, typeof all>();
    for (const run of group) {
      const key = JSON.stringify([run.agent_label, run.configuration]);
      byAgent.set(key, [...(byAgent.get(key) ?? []), run]);
    }
    const entries: LeaderboardEntry[] = [];
    for (const agentRuns of byAgent.values()) {
      const agent = agentRuns[0]!.agent_label;
      const ids = agentRuns.map((r) => r.run_id);
      const episodes = await episodesOf(db, ids);
      if (episodes.length === 0) continue;
      const maxTrials = Math.max(...agentRuns.map((r) => r.trials));
      const summary = summarizeSide(agent, ids, episodes, perTask(episodes, 1), bootstrap);
      const pass_k = Array.from({ length: maxTrials }, (_, i) => {
        const stats = [...perTask(episodes, i + 1).values()].filter((t) => t.passK !== null);
        return { k: i + 1, value: stats.length ? stats.reduce((s, t) => s + t.passK!, 0) / stats.length : null };
      });
      const report = (dir: string) => {
        const file = join(dir, 'report.html');
        if (!existsSync(file)) return null;
        return options.linkFrom ? relative(options.linkFrom, file).split(sep).join('/') : file;
      };
      entries.push({
        agent,
        configuration: parseConfiguration(agentRuns[0]!.configuration) ?? null,
        configuration_text: configurationText(agentRuns[0]!.configuration),
        complete: agentRuns.every((r) => r.completeness === 'complete'),
        runs: agentRuns.map((r) => ({ run_id: r.run_id, report: report(r.directory), completeness: r.completeness })),
        summary,
        pass_k,
        cost_per_episode: summary.cost_usd === null ? null : summary.cost_usd / summary.episodes,
      });
    }
    entries.sort((a, b) => (b.summary.success_rate ?? -1) - (a.summary.success_rate ?? -1) || a.agent.localeCompare(b.agent));
    const not_ranked = found.filter((r) => !ranked(r)).map((r) => ({ run_id: r.run_id, agent: r.agent_label, completeness: r.completeness }));
    if (entries.length || not_ranked.length) sections.push({ set: found[0]!.set_name, month: found[0]!.month, entries, not_ranked });
  }
  return { generated_at: (options.now ?? new Date()).toISOString(), sections };
}

export function renderLeaderboardHtml(board: Leaderboard, assets: PlotAssets, title = 'MCPBench leaderboard'): string {
  const sections = board.sections
    .map(
      (s, i) => `
  <section class="board" data-section="${i}">
    <h2>${html(s.set ?? 'unnamed set')} · ${html(s.month)}</h2>
    <table class="data"></table>
    <figure><figcaption>Success rate with its 95% bootstrap interval over tasks</figcaption><div class="plot" id="plot-section-${i}" data-mark="dot"></div></figure>
  </section>`,
    )
    .join('');
  return renderPage({
    title,
    assets,
    style: STYLE + BOARD_STYLE,
    client: CLIENT,
    data: board,
    body: `
<header><h1>${html(title)}</h1><p id="meta"></p></header>
<main>
  <section><figure><figcaption>Success rate by month, per agent and set</figcaption><div class="plot" id="plot-trend" data-mark="line"></div></figure></section>${sections}
</main>
`,
  });
}

/** Writes DIR/index.html and DIR/leaderboard.json. */
export async function writeLeaderboard(db: ResultsDb, outDir: string, options: { set?: string; title?: string; assets?: PlotAssets; now?: Date; includeIncomplete?: boolean } = {}): Promise<{ html: string; json: string; board: Leaderboard }> {
  if (existsSync(outDir) && !statSync(outDir).isDirectory()) throw new LeaderboardError(`--out ${outDir}: a file, not a folder: name the folder index.html and leaderboard.json go into`);
  mkdirSync(outDir, { recursive: true });
  const board = await buildLeaderboard(db, { linkFrom: outDir, ...(options.set ? { set: options.set } : {}), ...(options.now ? { now: options.now } : {}), ...(options.includeIncomplete ? { includeIncomplete: true } : {}) });
  const files = { html: join(outDir, 'index.html'), json: join(outDir, 'leaderboard.json') };
  writeFileSync(files.json, JSON.stringify(board, null, 2) + '\n');
  writeFileSync(files.html, renderLeaderboardHtml(board, options.assets ?? loadPlotAssets(), options.title));
  return { ...files, board };
}

const BOARD_STYLE = `
table.data { border-collapse: collapse; font-size: 13px; margin: 6px 0; width: 100%; }
table.data th, table.data td { border: 1px solid var(--border); padding: 4px 8px; text-align: left; }
td.rank { font-weight: 600; width: 2em; }
a { color: var(--accent); }
`;

const CLIENT = String.raw`
(() => {
  const board = JSON.parse(document.getElementById('report-data').textContent);
${CLIENT_HELPERS}
  const sections = board.sections;
  // An agent appears once per configuration: its label names the configuration when the agent has several.
  const label = (e) => e.agent + ' · ' + e.configuration_text;
  document.getElementById('meta').textContent = sections.length + ' set-months · generated ' + board.generated_at;
  sections.forEach((s, i) => {
    const root = document.querySelector('section.board[data-section="' + i + '"]');
    const ks = [...new Set(s.entries.flatMap((e) => e.pass_k.map((p) => p.k)))].filter((k) => k > 1);
    const table = root.querySelector('table');
    table.append(el('thead', {}, el('tr', {}, ...['#', 'agent', 'faults', 'perturbation', 'trials', 'retry', 'success', '95% CI', ...ks.map((k) => 'pass^' + k), 'tasks', 'episodes', 'agent errors', 'cost / episode (USD)', 'runs'].map((h) => el('th', { text: h })))));
    const body = el('tbody');
    s.entries.forEach((e, rank) => {
      const links = el('span');
      e.runs.forEach((r, j) => {
        if (j) links.append(', ');
        // Links come from the database (run folders on this machine), never from agent output.
        links.append(r.report ? el('a', { href: r.report, text: r.run_id }) : el('span', { text: r.run_id }));
      });
      const passK = (k) => { const p = e.pass_k.find((x) => x.k === k); return p ? pct(p.value) : ''; };
      const c = e.configuration || {};
      body.append(el('tr', { class: e.complete ? 'complete' : 'incomplete' }, el('td', { class: 'rank', text: String(rank + 1) }), el('td', { text: e.agent + (e.complete ? '' : ' (not complete)') }),
        el('td', { class: 'config', text: c.fault_profile == null ? '?' : c.fault_profile + (c.fault_rate == null ? '' : ' @' + c.fault_rate) }), el('td', { class: 'config', text: c.perturbation ?? '?' }),
        el('td', { class: 'config', text: c.trials == null ? '?' : String(c.trials) }), el('td', { class: 'config', text: c.retry ? 'yes' : 'no' }), el('td', { text: pct(e.summary.success_rate) }),
        el('td', { text: e.summary.ci ? pct(e.summary.ci.low) + ' to ' + pct(e.summary.ci.high) : '' }), ...ks.map((k) => el('td', { text: passK(k) })),
        el('td', { text: String(e.summary.tasks) }), el('td', { text: String(e.summary.episodes) }), el('td', { text: String(e.summary.agent_errors) }),
        el('td', { text: e.cost_per_episode == null ? 'n/a' : e.cost_per_episode.toFixed(4) }), el('td', {}, links)));
    });
    table.append(body);
    if (s.not_ranked.length) root.insertBefore(el('p', { class: 'not-ranked', text: 'Not ranked (not complete): ' + s.not_ranked.map((r) => r.run_id + ' (' + r.agent + ', ' + r.completeness + ')').join(', ') }), table.nextSibling);
    mount('plot-section-' + i, (width) => {
      const rows = s.entries.filter((e) => e.summary.success_rate != null);
      if (!rows.length) return null;
      return Plot.plot({
        className: 'chart', width, marginLeft: 170, height: 50 + 28 * rows.length,
        x: { domain: [0, 1], label: 'success rate', grid: true, tickFormat: (v) => (100 * v).toFixed(0) + '%' },
        y: { domain: rows.map(label), label: null },
        marks: [
          Plot.ruleY(rows.filter((e) => e.summary.ci), { y: label, x1: (e) => e.summary.ci.low, x2: (e) => e.summary.ci.high, stroke: 'currentColor' }),
          Plot.dot(rows, { y: label, x: (e) => e.summary.success_rate, fill: '#4e79a7', r: 5, title: (e) => label(e) + ': ' + pct(e.summary.success_rate) + ' ' + ci(e.summary.ci) }),
        ],
      });
    });
  });
  mount('plot-trend', (width) => {
    const points = sections.flatMap((s) => s.entries.map((e) => ({ series: label(e) + (s.set ? ' · ' + s.set : ''), month: s.month, value: e.summary.success_rate })));
    if (!points.length) return null;
    points.sort((a, b) => (a.month < b.month ? -1 : 1));
    return Plot.plot({
      className: 'chart', width, height: 280, grid: true, color: { legend: true },
      x: { type: 'point', label: 'month' }, y: { domain: [0, 1], label: 'success rate', tickFormat: (v) => (100 * v).toFixed(0) + '%' },
      marks: [Plot.line(points, { x: 'month', y: 'value', stroke: 'series', marker: true }), Plot.dot(points, { x: 'month', y: 'value', fill: 'series', title: (p) => p.series + ' ' + p.month + ': ' + pct(p.value) })],
    });
  });
  document.body.dataset.rendered = 'true';
})();
`;
