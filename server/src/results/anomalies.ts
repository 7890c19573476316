/**
 * Rotation anomalies (`mcpbench anomalies`): the MCPBench specification's "per-rotation anomaly detection on
 * score jumps and per-task patterns", over the runs and rotations in the results database.
 *
 * The history is a table of cells: (set, agent, month, task version) with passes and episodes, and whether the
 * task was public in that month (retired into a Historical tag of that set in that month or earlier). Four
 * detectors, each a family of tests corrected for multiple comparisons on its own (Holm by default, or
 * Benjamini-Hochberg), each flag with its statistic, threshold and evidence:
 *
 * - score_jump (per agent, consecutive months): the change in success rate on the private tasks both months
 *   share (paired by task, so rotation itself moves nothing), tested with the paired bootstrap over tasks;
 *   flagged when 0 is outside what the bootstrap allows at the corrected level.
 * - historical_advantage (per agent and month): success on public (historical) tasks minus success on fresh
 *   tasks of the same namespace and difficulty, a Mantel-Haenszel-weighted mean of the per-stratum
 *   differences of task pass rates; one-sided permutation test, labels shuffled among tasks within strata.
 * - task_outlier (per task version): its passes against what the other tasks of its namespace and difficulty
 *   passed for the same agents in the same months (and the same public or private status), as a residual on
 *   the logit scale; tested against the peers' residuals with a two-sided prediction-interval t test (so the natural
 *   spread of task difficulty is allowed for). Too easy or leaked above, broken below.
 * - verdict_flip (per task, consecutive months): every agent that ran the task in both months moved the same
 *   way, and the pooled pass rate moved by at least one half (pass to fail, or fail to pass); Fisher's exact
 *   test on the pooled counts. The other task-months stay in the family with p = 1.
 */
import { sql } from 'kysely';
import { mulberry32 } from '../seeded-random.ts';
import type { ResultsDb } from './db.ts';
import { adjustPValues, labelSeed, logGamma, pairedBootstrap, studentTTwoSided, type Correction } from './stats.ts';

export interface HistoryCell {
  set: string | null;
  agent: string;
  month: string;
  task_id: string;
  task_hash: string;
  namespace: string;
  difficulty: string | null;
  /** The task was public (retired into a Historical tag of the set) in this month. */
  historical: boolean;
  passed: number;
  episodes: number;
}

export const ANOMALY_KINDS = ['score_jump', 'historical_advantage', 'task_outlier', 'verdict_flip'] as const;
export type AnomalyKind = (typeof ANOMALY_KINDS)[number];

export interface AnomalyTest {
  kind: AnomalyKind;
  /** A stable key: kind, set, agent or task, month(s). */
  key: string;
  set: string | null;
  agent?: string;
  task_id?: string;
  task_hash?: string;
  month?: string;
  from?: string;
  to?: string;
  statistic: { name: string; value: number };
  p: number;
  p_adjusted: number;
  /** The level p_adjusted is compared with. */
  threshold: number;
  flagged: boolean;
  detail: string;
  evidence: Record<string, unknown>;
}

export interface AnomalyOptions {
  alpha?: number;
  correction?: Correction;
  resamples?: number;
  seed?: number;
  set?: string;
  /** Fewest shared tasks for a score-jump test, fewest peers for an outlier test (default 5, 4). */
  minTasks?: number;
  minPeers?: number;
}

export interface AnomalyReport {
  options: Required<Omit<AnomalyOptions, 'set'>> & { set: string | null };
  tests: AnomalyTest[];
  flags: AnomalyTest[];
  counts: Record<AnomalyKind, { tests: number; flagged: number }>;
}

/** The history cells of the database (scored episodes only: infrastructure errors are left out). */
export async function loadHistory(db: ResultsDb, options: { set?: string } = {}): Promise<HistoryCell[]> {
  let query = db
    .selectFrom('episodes as e')
    .innerJoin('runs as r', 'r.run_id', 'e.run_id')
    .innerJoin('tasks as t', 't.task_hash', 'e.task_hash')
    .select([
      'r.set_name',
      'r.agent_label',
      'r.month',
      'e.task_id',
      'e.task_hash',
      't.primary_namespace',
      't.difficulty',
      sql<boolean>`exists (select 1 from retired_tasks rt where rt.set_name = r.set_name and rt.task_hash = e.task_hash and rt.month <= r.month)`.as('historical'),
      sql<number>`count(*) filter (where e.passed)::int`.as('passed'),
      sql<number>`count(*)::int`.as('episodes'),
    ])
    .where('e.status', '!=', 'infra_error')
    .groupBy(['r.set_name', 'r.agent_label', 'r.month', 'e.task_id', 'e.task_hash', 't.primary_namespace', 't.difficulty']);
  if (options.set) query = query.where('r.set_name', '=', options.set);
  const rows = await query.execute();
  return rows
    .map((r) => ({ set: r.set_name, agent: r.agent_label, month: r.month, task_id: r.task_id, task_hash: r.task_hash, namespace: r.primary_namespace, difficulty: r.difficulty, historical: r.historical, passed: r.passed, episodes: r.episodes }))
    .sort((a, b) => cmp(a.set ?? '', b.set ?? '') || cmp(a.agent, b.agent) || cmp(a.month, b.month) || cmp(a.task_hash, b.task_hash));
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const rate = (c: { passed: number; episodes: number }) => c.passed / c.episodes;
const stratum = (c: HistoryCell) => `${c.namespace}|${c.difficulty ?? '?'}`;

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return new Map([...out.entries()].sort((a, b) => cmp(a[0], b[0])));
}

type Draft = Omit<AnomalyTest, 'p_adjusted' | 'threshold' | 'flagged'>;

// ---- score_jump -----------------------------------------------------------------------------------------

function scoreJumps(cells: readonly HistoryCell[], o: Required<Omit<AnomalyOptions, 'set'>>): Draft[] {
  const out: Draft[] = [];
  for (const [, agentCells] of groupBy(cells.filter((c) => !c.historical), (c) => JSON.stringify([c.set, c.agent]))) {
    const byMonth = groupBy(agentCells, (c) => c.month);
    const months = [...byMonth.keys()];
    for (let i = 1; i < months.length; i++) {
      const from = months[i - 1]!;
      const to = months[i]!;
      const before = new Map(byMonth.get(from)!.map((c) => [c.task_hash, c]));
      const pairs = byMonth.get(to)!.filter((c) => before.has(c.task_hash)).map((c) => ({ after: c, before: before.get(c.task_hash)! }));
      if (pairs.length < o.minTasks) continue;
      const { set, agent } = pairs[0]!.after;
      const key = `score_jump|${set ?? ''}|${agent}|${from}|${to}`;
      const boot = pairedBootstrap(pairs.map((p) => rate(p.after) - rate(p.before)), { resamples: o.resamples, seed: o.seed, confidence: 1 - o.alpha, label: key })!;
      const mean = (side: 'before' | 'after') => pairs.reduce((s, p) => s + rate(p[side]), 0) / pairs.length;
      out.push({
        kind: 'score_jump',
        key,
        set,
        agent,
        from,
        to,
        statistic: { name: 'delta success rate (paired over shared private tasks)', value: boot.mean },
        p: boot.p,
        detail: `${agent}: ${(100 * mean('before')).toFixed(1)}% in ${from} -> ${(100 * mean('after')).toFixed(1)}% in ${to} on the ${pairs.length} private tasks both months share`,
        evidence: { tasks: pairs.length, rate_from: mean('before'), rate_to: mean('after'), ci: boot.ci, resamples: o.resamples },
      });
    }
  }
  return out;
}

// ---- historical_advantage -------------------------------------------------------------------------------

/** Mantel-Haenszel-weighted mean over strata of (mean historical rate - mean fresh rate). */
function weightedAdvantage(strata: readonly { rates: number[]; historical: boolean[] }[]): number {
  let num = 0;
  let den = 0;
  for (const s of strata) {
    let sh = 0;
    let nh = 0;
    let sf = 0;
    let nf = 0;
    s.rates.forEach((r, i) => {
      if (s.historical[i]) {
        sh += r;
        nh++;
      } else {
        sf += r;
        nf++;
      }
    });
    if (nh === 0 || nf === 0) continue;
    const w = (nh * nf) / (nh + nf);
    num += w * (sh / nh - sf / nf);
    den += w;
  }
  return den > 0 ? num / den : 0;
}

function historicalAdvantage(cells: readonly HistoryCell[], o: Required<Omit<AnomalyOptions, 'set'>>): Draft[] {
  const out: Draft[] = [];
  for (const [, group] of groupBy(cells, (c) => JSON.stringify([c.set, c.agent, c.month]))) {
    const strata = [...groupBy(group, stratum).values()]
      .filter((s) => s.some((c) => c.historical) && s.some((c) => !c.historical))
      .map((s) => ({ rates: s.map(rate), historical: s.map((c) => c.historical) }));
    const historical = strata.reduce((n, s) => n + s.historical.filter(Boolean).length, 0);
    const fresh = strata.reduce((n, s) => n + s.historical.filter((h) => !h).length, 0);
    if (historical < 3 || fresh < 3) continue;
    const { set, agent, month } = group[0]!;
    const key = `historical_advantage|${set ?? ''}|${agent}|${month}`;
    const observed = weightedAdvantage(strata);
    const random = mulberry32(labelSeed(o.seed, key));
    let atLeast = 0;
    for (let b = 0; b < o.resamples; b++) {
      const shuffled = strata.map((s) => {
        const labels = [...s.historical];
        for (let i = labels.length - 1; i > 0; i--) {
          const j = Math.floor(random() * (i + 1));
          [labels[i], labels[j]] = [labels[j]!, labels[i]!];
        }
        return { rates: s.rates, historical: labels };
      });
      if (weightedAdvantage(shuffled) >= observed - 1e-12) atLeast++;
    }
    const mean = (h: boolean) => {
      const list = group.filter((c) => c.historical === h);
      return list.reduce((s, c) => s + rate(c), 0) / list.length;
    };
    out.push({
      kind: 'historical_advantage',
      key,
      set,
      agent,
      month,
      statistic: { name: 'public minus fresh success rate within namespace x difficulty (weighted)', value: observed },
      p: (atLeast + 1) / (o.resamples + 1),
      detail: `${agent} in ${month}: ${(100 * mean(true)).toFixed(1)}% on ${historical} public tasks vs ${(100 * mean(false)).toFixed(1)}% on ${fresh} fresh tasks (${observed >= 0 ? '+' : ''}${(100 * observed).toFixed(1)} points within strata)`,
      evidence: { historical_tasks: historical, fresh_tasks: fresh, strata: strata.length, rate_historical: mean(true), rate_fresh: mean(false), permutations: o.resamples },
    });
  }
  return out;
}

// ---- task_outlier ---------------------------------------------------------------------------------------

function taskOutliers(cells: readonly HistoryCell[], o: Required<Omit<AnomalyOptions, 'set'>>): Draft[] {
  const out: Draft[] = [];
  for (const [, setCells] of groupBy(cells, (c) => c.set ?? '')) {
    // What a task's peers (same namespace and difficulty) passed under the same conditions: the same agent, the
    // same month, the same public or private status. Each task's residual is its passes minus that expectation.
    const groups = groupBy(setCells, (c) => JSON.stringify([c.agent, c.month, stratum(c), c.historical]));
    const totals = new Map<string, { passed: number; episodes: number }>();
    for (const [key, list] of groups) totals.set(key, { passed: list.reduce((s, c) => s + c.passed, 0), episodes: list.reduce((s, c) => s + c.episodes, 0) });
    const tasks = [...groupBy(setCells, (c) => c.task_hash).values()].map((list) => {
      let observed = 0;
      let expected = 0;
      let episodes = 0;
      for (const c of list) {
        const key = JSON.stringify([c.agent, c.month, stratum(c), c.historical]);
        const group = groups.get(key)!;
        if (group.length < 3) continue;
        const total = totals.get(key)!;
        const peerEpisodes = total.episodes - c.episodes;
        if (peerEpisodes <= 0) continue;
        observed += c.passed;
        expected += (c.episodes * (total.passed - c.passed)) / peerEpisodes;
        episodes += c.episodes;
      }
      // On the logit scale (half a pass added on both sides), where task difficulty spreads evenly.
      const logit = (x: number) => Math.log((x + 0.5) / (episodes - x + 0.5));
      // The sampling variance of the logit under the null (the task passes as its peers predict): a task run a
      // few times is noisier than one run often.
      const p0 = Math.min(0.99, Math.max(0.01, episodes > 0 ? expected / episodes : 0.5));
      const variance = 1 / Math.max(1, episodes * p0 * (1 - p0));
      return { cell: list[0]!, observed, expected, episodes, variance, residual: episodes > 0 ? logit(observed) - logit(expected) : null, agents: new Set(list.map((c) => c.agent)).size };
    });
    for (const [, peers] of groupBy(tasks.filter((t) => t.residual !== null), (t) => stratum(t.cell))) {
      if (peers.length < o.minPeers + 1) continue;
      for (const task of peers) {
        const rest = peers.filter((p) => p !== task);
        const others = rest.map((p) => p.residual!);
        const n = others.length;
        const mean = others.reduce((s, r) => s + r, 0) / n;
        // The spread of true task difficulty among the peers: their residuals' variance less their sampling noise.
        const spread = others.reduce((s, r) => s + (r - mean) ** 2, 0) / (n - 1) - rest.reduce((s, p) => s + p.variance, 0) / n;
        const tau2 = Math.max(0.05 ** 2, spread);
        const sd = Math.sqrt(tau2);
        // A prediction-interval t statistic: is this task's residual one its peers' could produce, given its own noise?
        const t = (task.residual! - mean) / Math.sqrt(tau2 * (1 + 1 / n) + task.variance);
        const p = studentTTwoSided(t, n - 1);
        const direction = t > 0 ? 'too easy or leaked' : 'too hard or broken';
        const { set, task_id, task_hash, namespace, difficulty } = task.cell;
        out.push({
          kind: 'task_outlier',
          key: `task_outlier|${set ?? ''}|${task_hash}`,
          set,
          task_id,
          task_hash,
          statistic: { name: 't of the logit pass-rate residual against the stratum', value: t },
          p,
          detail: `${task_id}: ${task.observed}/${task.episodes} passed (${(100 * task.observed / task.episodes).toFixed(1)}%) where its ${namespace} ${difficulty ?? ''} peers predict ${(100 * task.expected / task.episodes).toFixed(1)}% for the same agents and months: ${direction}`,
          evidence: { passed: task.observed, episodes: task.episodes, expected_rate: task.expected / task.episodes, residual: task.residual, peers: n, peer_residual_mean: mean, peer_residual_sd: sd, agents: task.agents, direction },
        });
      }
    }
  }
  return out;
}

// ---- verdict_flip ---------------------------------------------------------------------------------------

const logChoose = (n: number, k: number) => logGamma(n + 1) - logGamma(k + 1) - logGamma(n - k + 1);

/** Fisher's exact test, two-sided, on [[a, b], [c, d]] (sum of the tables no more likely than the observed). */
export function fisherExact(a: number, b: number, c: number, d: number): number {
  const row1 = a + b;
  const col1 = a + c;
  const n = a + b + c + d;
  const prob = (x: number) => Math.exp(logChoose(col1, x) + logChoose(n - col1, row1 - x) - logChoose(n, row1));
  const observed = prob(a);
  let p = 0;
  for (let x = Math.max(0, row1 + col1 - n); x <= Math.min(row1, col1); x++) {
    const q = prob(x);
    if (q <= observed * (1 + 1e-9)) p += q;
  }
  return Math.min(1, p);
}

function verdictFlips(cells: readonly HistoryCell[]): Draft[] {
  const out: Draft[] = [];
  for (const [, taskCells] of groupBy(cells, (c) => JSON.stringify([c.set, c.task_hash]))) {
    const byMonth = groupBy(taskCells, (c) => c.month);
    const months = [...byMonth.keys()];
    for (let i = 1; i < months.length; i++) {
      const from = months[i - 1]!;
      const to = months[i]!;
      const before = new Map(byMonth.get(from)!.map((c) => [c.agent, c]));
      const pairs = byMonth.get(to)!.filter((c) => before.has(c.agent)).map((c) => ({ agent: c.agent, before: before.get(c.agent)!, after: c }));
      if (pairs.length < 2) continue;
      const moves = pairs.map((p) => rate(p.after) - rate(p.before));
      const a = pairs.reduce((s, p) => s + p.before.passed, 0);
      const n1 = pairs.reduce((s, p) => s + p.before.episodes, 0);
      const c = pairs.reduce((s, p) => s + p.after.passed, 0);
      const n2 = pairs.reduce((s, p) => s + p.after.episodes, 0);
      const pooled = c / n2 - a / n1;
      const allDown = moves.every((m) => m < 0) && pooled <= -0.5;
      const allUp = moves.every((m) => m > 0) && pooled >= 0.5;
      const { set, task_id, task_hash } = pairs[0]!.after;
      out.push({
        kind: 'verdict_flip',
        key: `verdict_flip|${set ?? ''}|${task_hash}|${from}|${to}`,
        set,
        task_id,
        task_hash,
        from,
        to,
        statistic: { name: 'agents that flipped the same way', value: allDown || allUp ? pairs.length : 0 },
        // Only a flip of every agent at once is a candidate; the rest stay in the family with p = 1.
        p: allDown || allUp ? fisherExact(a, n1 - a, c, n2 - c) : 1,
        detail: `${task_id}: ${a}/${n1} passed in ${from}, ${c}/${n2} in ${to}; ${allDown ? `all ${pairs.length} agents went from pass to fail` : allUp ? `all ${pairs.length} agents went from fail to pass` : 'the agents did not all move the same way'}`,
        evidence: { agents: pairs.length, passed_from: a, episodes_from: n1, passed_to: c, episodes_to: n2, direction: allDown ? 'pass->fail' : allUp ? 'fail->pass' : 'mixed' },
      });
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------

export function detectAnomalies(cells: readonly HistoryCell[], options: AnomalyOptions = {}): AnomalyReport {
  const o = {
    alpha: options.alpha ?? 0.05,
    correction: options.correction ?? ('holm' as Correction),
    resamples: options.resamples ?? 5000,
    seed: options.seed ?? 1,
    minTasks: options.minTasks ?? 5,
    minPeers: options.minPeers ?? 4,
  };
  const scoped = options.set ? cells.filter((c) => c.set === options.set) : cells;
  const families: Draft[][] = [scoreJumps(scoped, o), historicalAdvantage(scoped, o), taskOutliers(scoped, o), verdictFlips(scoped)];
  const tests: AnomalyTest[] = [];
  for (const family of families) {
    const adjusted = adjustPValues(family.map((t) => t.p), o.correction);
    family.forEach((t, i) => tests.push({ ...t, p_adjusted: adjusted[i]!, threshold: o.alpha, flagged: adjusted[i]! < o.alpha }));
  }
  const counts = Object.fromEntries(ANOMALY_KINDS.map((k) => [k, { tests: tests.filter((t) => t.kind === k).length, flagged: tests.filter((t) => t.kind === k && t.flagged).length }])) as AnomalyReport['counts'];
  return { options: { ...o, set: options.set ?? null }, tests, flags: tests.filter((t) => t.flagged).sort((a, b) => a.p_adjusted - b.p_adjusted || cmp(a.key, b.key)), counts };
}

const pv = (p: number) => (p < 0.0001 ? p.toExponential(1) : p.toFixed(4));

export function anomaliesText(report: AnomalyReport): string {
  const lines: string[] = [];
  const o = report.options;
  lines.push(`${report.tests.length} tests (${ANOMALY_KINDS.map((k) => `${k} ${report.counts[k].tests}`).join(', ')}), ${o.correction} within each kind, alpha ${o.alpha}${o.set ? `, set ${o.set}` : ''}`);
  if (report.flags.length === 0) lines.push('no anomaly flagged');
  for (const f of report.flags) {
    lines.push(`FLAG ${f.kind}: ${f.detail}`);
    lines.push(`     ${f.statistic.name} = ${f.statistic.value.toFixed(3)}; p = ${pv(f.p)}, ${o.correction}-adjusted ${pv(f.p_adjusted)} < ${f.threshold}`);
  }
  return lines.join('\n') + '\n';
}
