/**
 * `mcpbench leaderboard`: a static, self-contained leaderboard from the results database, the way benchmarks
 * publish theirs: per set and month, each agent's success rate with its 95% bootstrap interval over tasks,
 * pass^k for every k its trials allow, cost where recorded, and links to each run's report.html.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { CLIENT_HELPERS, html, loadPlotAssets, renderPage, STYLE, type PlotAssets } from '../scoring/report-html.ts';
import { episodesOf, perTask, summarizeSide, type SideSummary } from './compare.ts';
import type { ResultsDb } from './db.ts';

export interface LeaderboardEntry {
  agent: string;
  runs: { run_id: string; report: string | null }[];
  summary: SideSummary;
  pass_k: { k: number; value: number | null }[];
  cost_per_episode: number | null;
}

export interface LeaderboardSection {
  set: string | null;
  month: string;
  entries: LeaderboardEntry[];
}

export interface Leaderboard {
  generated_at: string;
  sections: LeaderboardSection[];
}

/**
 * The leaderboard's data. Report links are relative to `linkFrom` (the output folder) when the run folder
 * still holds its report.html, else null.
 */
export async function buildLeaderboard(db: ResultsDb, options: { set?: string; linkFrom?: string; resamples?: number; seed?: number; now?: Date } = {}): Promise<Leaderboard> {
  let query = db.selectFrom('runs').select(['run_id', 'agent_label', 'set_name', 'month', 'directory', 'trials']);
  if (options.set) query = query.where('set_name', '=', options.set);
  const runs = await query.orderBy('month', 'desc').orderBy('set_name').orderBy('agent_label').orderBy('run_id').execute();
  const groups = new Map<string, typeof runs>();
  for (const run of runs) {
    const key = JSON.stringify([run.set_name, run.month]);
    groups.set(key, [...(groups.get(key) ?? []), run]);
  }
  const bootstrap = { resamples: options.resamples ?? 2000, seed: options.seed ?? 1, confidence: 0.95 };
  const sections: LeaderboardSection[] = [];
  for (const group of groups.values()) {
    const byAgent = new Map<string, typeof runs>();
    for (const run of group) byAgent.set(run.agent_label, [...(byAgent.get(run.agent_label) ?? []), run]);
    const entries: LeaderboardEntry[] = [];
    for (const [agent, agentRuns] of byAgent) {
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
        runs: agentRuns.map((r) => ({ run_id: r.run_id, report: report(r.directory) })),
        summary,
        pass_k,
        cost_per_episode: summary.cost_usd === null ? null : summary.cost_usd / summary.episodes,
      });
    }
    entries.sort((a, b) => (b.summary.success_rate ?? -1) - (a.summary.success_rate ?? -1) || a.agent.localeCompare(b.agent));
    if (entries.length) sections.push({ set: group[0]!.set_name, month: group[0]!.month, entries });
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
export async function writeLeaderboard(db: ResultsDb, outDir: string, options: { set?: string; title?: string; assets?: PlotAssets; now?: Date } = {}): Promise<{ html: string; json: string; board: Leaderboard }> {
  mkdirSync(outDir, { recursive: true });
  const board = await buildLeaderboard(db, { linkFrom: outDir, ...(options.set ? { set: options.set } : {}), ...(options.now ? { now: options.now } : {}) });
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
  document.getElementById('meta').textContent = sections.length + ' set-months · generated ' + board.generated_at;
  sections.forEach((s, i) => {
    const root = document.querySelector('section.board[data-section="' + i + '"]');
    const ks = [...new Set(s.entries.flatMap((e) => e.pass_k.map((p) => p.k)))].filter((k) => k > 1);
    const table = root.querySelector('table');
    table.append(el('thead', {}, el('tr', {}, ...['#', 'agent', 'success', '95% CI', ...ks.map((k) => 'pass^' + k), 'tasks', 'episodes', 'agent errors', 'cost / episode (USD)', 'runs'].map((h) => el('th', { text: h })))));
    const body = el('tbody');
    s.entries.forEach((e, rank) => {
      const links = el('span');
      e.runs.forEach((r, j) => {
        if (j) links.append(', ');
        // Links come from the database (run folders on this machine), never from agent output.
        links.append(r.report ? el('a', { href: r.report, text: r.run_id }) : el('span', { text: r.run_id }));
      });
      const passK = (k) => { const p = e.pass_k.find((x) => x.k === k); return p ? pct(p.value) : ''; };
      body.append(el('tr', {}, el('td', { class: 'rank', text: String(rank + 1) }), el('td', { text: e.agent }), el('td', { text: pct(e.summary.success_rate) }),
        el('td', { text: e.summary.ci ? pct(e.summary.ci.low) + ' to ' + pct(e.summary.ci.high) : '' }), ...ks.map((k) => el('td', { text: passK(k) })),
        el('td', { text: String(e.summary.tasks) }), el('td', { text: String(e.summary.episodes) }), el('td', { text: String(e.summary.agent_errors) }),
        el('td', { text: e.cost_per_episode == null ? 'n/a' : e.cost_per_episode.toFixed(4) }), el('td', {}, links)));
    });
    table.append(body);
    mount('plot-section-' + i, (width) => {
      const rows = s.entries.filter((e) => e.summary.success_rate != null);
      if (!rows.length) return null;
      return Plot.plot({
        className: 'chart', width, marginLeft: 170, height: 50 + 28 * rows.length,
        x: { domain: [0, 1], label: 'success rate', grid: true, tickFormat: (v) => (100 * v).toFixed(0) + '%' },
        y: { domain: rows.map((e) => e.agent), label: null },
        marks: [
          Plot.ruleY(rows.filter((e) => e.summary.ci), { y: 'agent', x1: (e) => e.summary.ci.low, x2: (e) => e.summary.ci.high, stroke: 'currentColor' }),
          Plot.dot(rows, { y: 'agent', x: (e) => e.summary.success_rate, fill: '#4e79a7', r: 5, title: (e) => e.agent + ': ' + pct(e.summary.success_rate) + ' ' + ci(e.summary.ci) }),
        ],
      });
    });
  });
  mount('plot-trend', (width) => {
    const points = sections.flatMap((s) => s.entries.map((e) => ({ series: e.agent + (s.set ? ' · ' + s.set : ''), month: s.month, value: e.summary.success_rate })));
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
