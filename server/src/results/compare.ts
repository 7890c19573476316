/**
 * `mcpbench compare`: runs or agents side by side from the results database.
 *
 * A side is one run (selected by run id) or one agent (every run of that agent label, optionally narrowed to
 * a set and month). Tasks are paired by canonical hash, so an edited task is never compared with its older
 * version. Per side and task, the cell is pass^k (the unbiased estimator over the task's trials, averaged
 * over its variant x fault profile x perturbation units). Episodes with an infrastructure error are left out;
 * agent errors count as not passed and are reported apart.
 *
 * Every pair of sides gets: the paired bootstrap over common tasks of the difference in success rate (B - A)
 * with its interval and p-value, and McNemar's exact test on pass@1 (each task's first trial) with the
 * conditional odds ratio and its interval; Holm-adjusted over the pairs (or BH). Per namespace and category,
 * the same paired bootstrap, adjusted over all those deltas with Benjamini-Hochberg (or Holm).
 */
import { type Interval, passHatK } from '../scoring/metrics.ts';
import type { ResultsDb } from './db.ts';
import { configurationText } from './configuration.ts';
import { countModes, FAILURE_MODES, type FailureMode } from '../scoring/failure-modes.ts';
import { adjustPValues, mcnemarExact, pairedBootstrap, type Correction, type McNemar, type PairedBootstrap } from './stats.ts';
import { McpbenchError } from '../errors.ts';

export interface CompareOptions {
  k?: number;
  resamples?: number;
  seed?: number;
  confidence?: number;
  /** Narrow agent selectors to a set and/or month. */
  set?: string;
  month?: string;
  correction?: Correction;
}

export interface SideSummary {
  label: string;
  runs: string[];
  tasks: number;
  episodes: number;
  passed: number;
  agent_errors: number;
  success_rate: number | null;
  ci: Interval | null;
  pass_k: number | null;
  cost_usd: number | null;
  tokens: number | null;
  failure_modes: Record<FailureMode, number>;
}

export interface MatrixTask {
  task_hash: string;
  task_id: string;
  namespace: string;
  category: string;
}

export interface Cell {
  side: string;
  task_hash: string;
  /** pass^k of the task on this side; null when it has fewer than k trials. */
  pass_k: number | null;
  episodes: number;
  passed: number;
  cost_usd: number | null;
}

export interface PairComparison {
  a: string;
  b: string;
  tasks: number;
  /** B - A in per-task success rate, paired over tasks. */
  success: PairedBootstrap | null;
  mcnemar: McNemar;
  /** Null when the pair has fewer than MIN_TEST_TASKS common tasks: no test is claimed. */
  p_adjusted: { bootstrap: number | null; mcnemar: number | null };
}

/** Below this many tasks no difference is tested (or called significant): the interval is shown alone. */
export const MIN_TEST_TASKS = 6;

export interface GroupDelta {
  a: string;
  b: string;
  group: 'namespace' | 'category';
  key: string;
  tasks: number;
  delta: PairedBootstrap | null;
  p_adjusted: number | null;
}

export interface Comparison {
  k: number;
  correction: { pairs: Correction; groups: Correction };
  bootstrap: { resamples: number; seed: number; confidence: number };
  sides: SideSummary[];
  tasks: MatrixTask[];
  cells: Cell[];
  pairs: PairComparison[];
  deltas: GroupDelta[];
  warnings: string[];
}

export class CompareError extends McpbenchError {
  static override readonly code: string = 'compare';
}

export interface EpisodeFacts {
  task_hash: string;
  task_id: string;
  namespace: string;
  category: string;
  unit: string;
  trial: number;
  passed: boolean;
  status: string;
  failure_mode: string | null;
  cost_usd: number | null;
  tokens: number | null;
}

/** Resolves a selector (run id, else agent label) to the runs it names. */
export async function resolveSide(db: ResultsDb, selector: string, options: Pick<CompareOptions, 'set' | 'month'> = {}): Promise<{ label: string; runs: string[] }> {
  const run = await db.selectFrom('runs').select(['run_id', 'agent_label']).where('run_id', '=', selector).executeTakeFirst();
  if (run) return { label: `${run.agent_label} (${run.run_id})`, runs: [run.run_id] };
  let query = db.selectFrom('runs').select(['run_id', 'set_name', 'month', 'configuration']).where('agent_label', '=', selector);
  if (options.set) query = query.where('set_name', '=', options.set);
  if (options.month) query = query.where('month', '=', options.month);
  const found = await query.orderBy('run_id').execute();
  const runs = found.map((r) => r.run_id);
  // Like for like: one side pools runs of one set, month and configuration only.
  const kinds = new Map<string, string[]>();
  for (const r of found) {
    const key = `${r.set_name ?? 'unnamed set'} ${r.month}, ${configurationText(r.configuration)}`;
    kinds.set(key, [...(kinds.get(key) ?? []), r.run_id]);
  }
  if (kinds.size > 1) {
    const listed = [...kinds].map(([key, ids]) => `${key}: ${ids.join(', ')}`).join('; ');
    throw new CompareError(`${selector}: its runs measured unlike things and are not pooled into one side (${listed}); name runs by id, or narrow with --set / --month`);
  }
  if (runs.length === 0) {
    const known = (await db.selectFrom('runs').select(['agent_label']).distinct().orderBy('agent_label').execute()).map((r) => r.agent_label);
    throw new CompareError(`${selector}: no run with this id and no agent with this label${options.set || options.month ? ` in ${[options.set, options.month].filter(Boolean).join(' ')}` : ''} in the results database (agents: ${known.join(', ') || 'none'})`);
  }
  return { label: selector, runs };
}

export async function episodesOf(db: ResultsDb, runs: string[]): Promise<EpisodeFacts[]> {
  const rows = await db
    .selectFrom('episodes as e')
    .innerJoin('tasks as t', 't.task_hash', 'e.task_hash')
    .select(['e.task_hash', 'e.task_id', 't.primary_namespace', 't.category', 'e.run_id', 'e.variant', 'e.fault_profile', 'e.perturbation', 'e.trial', 'e.passed', 'e.status', 'e.failure_mode', 'e.cost_usd', 'e.prompt_tokens', 'e.completion_tokens'])
    .where('e.run_id', 'in', runs)
    .where('e.status', '!=', 'infra_error')
    .execute();
  return rows.map((r) => ({
    task_hash: r.task_hash,
    task_id: r.task_id,
    namespace: r.primary_namespace,
    category: r.category,
    unit: JSON.stringify([r.run_id, r.variant, r.fault_profile, r.perturbation]),
    trial: r.trial,
    passed: r.passed,
    status: r.status,
    failure_mode: r.failure_mode,
    cost_usd: r.cost_usd,
    tokens: r.prompt_tokens === null && r.completion_tokens === null ? null : (r.prompt_tokens ?? 0) + (r.completion_tokens ?? 0),
  }));
}

export interface TaskStats {
  task: MatrixTask;
  episodes: number;
  passed: number;
  /** pass@1: the first unit's first trial. */
  first: boolean;
  passK: number | null;
  cost: number | null;
}

export function perTask(episodes: readonly EpisodeFacts[], k: number): Map<string, TaskStats> {
  const byTask = new Map<string, EpisodeFacts[]>();
  for (const e of episodes) {
    const list = byTask.get(e.task_hash) ?? [];
    list.push(e);
    byTask.set(e.task_hash, list);
  }
  const out = new Map<string, TaskStats>();
  for (const [hash, list] of byTask) {
    list.sort((a, b) => (a.unit < b.unit ? -1 : a.unit > b.unit ? 1 : a.trial - b.trial));
    const units = new Map<string, { n: number; c: number }>();
    for (const e of list) {
      const u = units.get(e.unit) ?? { n: 0, c: 0 };
      u.n++;
      if (e.passed) u.c++;
      units.set(e.unit, u);
    }
    const eligible = [...units.values()].filter((u) => u.n >= k);
    const costs = list.filter((e) => e.cost_usd !== null);
    out.set(hash, {
      task: { task_hash: hash, task_id: list[0]!.task_id, namespace: list[0]!.namespace, category: list[0]!.category },
      episodes: list.length,
      passed: list.filter((e) => e.passed).length,
      first: list[0]!.passed,
      passK: eligible.length ? eligible.reduce((s, u) => s + passHatK(u.n, u.c, k), 0) / eligible.length : null,
      cost: costs.length ? costs.reduce((s, e) => s + e.cost_usd!, 0) / costs.length : null,
    });
  }
  return out;
}

const sum = (values: readonly number[]) => values.reduce((s, v) => s + v, 0);

/** One side's totals: success as the mean per-task rate with its bootstrap interval, pass^k, cost, failure modes. */
export function summarizeSide(label: string, runs: string[], episodes: readonly EpisodeFacts[], tasks: Map<string, TaskStats>, bootstrap: { resamples: number; seed: number; confidence: number }): SideSummary {
  const stats = [...tasks.values()];
  const rates = stats.map((t) => t.passed / t.episodes);
  const interval = pairedBootstrap(rates, { ...bootstrap, label: `side:${label}`, bounds: [0, 1] });
  const withK = stats.filter((t) => t.passK !== null);
  const costs = episodes.filter((e) => e.cost_usd !== null);
  const tokens = episodes.filter((e) => e.tokens !== null);
  return {
    label,
    runs,
    tasks: stats.length,
    episodes: episodes.length,
    passed: episodes.filter((e) => e.passed).length,
    agent_errors: episodes.filter((e) => e.status === 'agent_error').length,
    success_rate: rates.length ? sum(rates) / rates.length : null,
    ci: interval ? interval.ci : null,
    pass_k: withK.length ? sum(withK.map((t) => t.passK!)) / withK.length : null,
    cost_usd: costs.length ? sum(costs.map((e) => e.cost_usd!)) : null,
    tokens: tokens.length ? sum(tokens.map((e) => e.tokens!)) : null,
    failure_modes: countModes(episodes.map((e) => ((FAILURE_MODES as readonly string[]).includes(e.failure_mode ?? '') ? (e.failure_mode as FailureMode) : null))),
  };
}

export async function compare(db: ResultsDb, selectors: readonly string[], options: CompareOptions = {}): Promise<Comparison> {
  if (selectors.length < 1) throw new CompareError('compare needs at least one run or agent');
  const k = options.k ?? 1;
  const bootstrap = { resamples: options.resamples ?? 2000, seed: options.seed ?? 1, confidence: options.confidence ?? 0.95 };
  const correction = options.correction;
  const warnings: string[] = [];
  const sides: { label: string; runs: string[]; episodes: EpisodeFacts[]; tasks: Map<string, TaskStats> }[] = [];
  for (const selector of selectors) {
    const side = await resolveSide(db, selector, options);
    if (sides.some((s) => s.label === side.label)) throw new CompareError(`${selector} is named twice`);
    const episodes = await episodesOf(db, side.runs);
    if (episodes.length === 0) warnings.push(`${side.label}: no scored episode`);
    sides.push({ ...side, episodes, tasks: perTask(episodes, k) });
  }

  const summaries = sides.map((side) => summarizeSide(side.label, side.runs, side.episodes, side.tasks, bootstrap));

  const taskIndex = new Map<string, MatrixTask>();
  for (const side of sides) for (const t of side.tasks.values()) taskIndex.set(t.task.task_hash, t.task);
  const tasks = [...taskIndex.values()].sort((a, b) => a.namespace.localeCompare(b.namespace) || a.task_id.localeCompare(b.task_id) || a.task_hash.localeCompare(b.task_hash));
  const cells: Cell[] = [];
  for (const side of sides) {
    for (const task of tasks) {
      const t = side.tasks.get(task.task_hash);
      if (t) cells.push({ side: side.label, task_hash: task.task_hash, pass_k: t.passK, episodes: t.episodes, passed: t.passed, cost_usd: t.cost });
    }
  }
  const ids = new Map<string, Set<string>>();
  for (const t of tasks) ids.set(t.task_id, (ids.get(t.task_id) ?? new Set()).add(t.task_hash));
  const edited = [...ids.entries()].filter(([, hashes]) => hashes.size > 1).map(([id]) => id);
  if (edited.length) warnings.push(`${edited.length} task(s) ran in different versions (not paired across them): ${edited.slice(0, 5).join(', ')}${edited.length > 5 ? ' ...' : ''}`);

  const pairs: PairComparison[] = [];
  const deltas: GroupDelta[] = [];
  for (let i = 0; i < sides.length; i++) {
    for (let j = i + 1; j < sides.length; j++) {
      const A = sides[i]!;
      const B = sides[j]!;
      const common = tasks.filter((t) => A.tasks.has(t.task_hash) && B.tasks.has(t.task_hash));
      const diff = (t: MatrixTask) => B.tasks.get(t.task_hash)!.passed / B.tasks.get(t.task_hash)!.episodes - A.tasks.get(t.task_hash)!.passed / A.tasks.get(t.task_hash)!.episodes;
      let b = 0;
      let c = 0;
      for (const t of common) {
        const a1 = A.tasks.get(t.task_hash)!.first;
        const b1 = B.tasks.get(t.task_hash)!.first;
        if (a1 && !b1) b++;
        if (!a1 && b1) c++;
      }
      pairs.push({
        a: A.label,
        b: B.label,
        tasks: common.length,
        success: pairedBootstrap(common.map(diff), { ...bootstrap, label: `pair:${A.label}|${B.label}` }),
        mcnemar: mcnemarExact(b, c, bootstrap.confidence),
        p_adjusted: { bootstrap: null, mcnemar: 1 },
      });
      for (const group of ['namespace', 'category'] as const) {
        const keys = [...new Set(common.map((t) => t[group]))].sort();
        for (const key of keys) {
          const subset = common.filter((t) => t[group] === key);
          deltas.push({ a: A.label, b: B.label, group, key, tasks: subset.length, delta: pairedBootstrap(subset.map(diff), { ...bootstrap, label: `delta:${A.label}|${B.label}|${group}:${key}` }), p_adjusted: null });
        }
      }
    }
  }
  const pairMethod = correction ?? 'holm';
  const groupMethod = correction ?? 'bh';
  // One family of tests per kind: the pairs' bootstrap and McNemar tests together, and the group deltas.
  // Only comparisons over at least MIN_TEST_TASKS tasks are tested; the others are left out of the families.
  const testedPairs = pairs.filter((p) => p.tasks >= MIN_TEST_TASKS);
  const pairAdjusted = adjustPValues(testedPairs.flatMap((p) => [p.success?.p ?? 1, p.mcnemar.p]), pairMethod);
  pairs.forEach((p) => (p.p_adjusted = { bootstrap: null, mcnemar: null }));
  testedPairs.forEach((p, i) => (p.p_adjusted = { bootstrap: p.success ? pairAdjusted[2 * i]! : null, mcnemar: pairAdjusted[2 * i + 1]! }));
  const testedDeltas = deltas.filter((d) => d.delta && d.tasks >= MIN_TEST_TASKS);
  const deltaAdjusted = adjustPValues(testedDeltas.map((d) => d.delta!.p), groupMethod);
  testedDeltas.forEach((d, i) => (d.p_adjusted = deltaAdjusted[i]!));
  const untested = pairs.filter((p) => p.tasks < MIN_TEST_TASKS).length + deltas.filter((d) => d.tasks < MIN_TEST_TASKS).length;
  if (untested) warnings.push(`${untested} comparison(s) over fewer than ${MIN_TEST_TASKS} tasks: not tested, no significance claimed`);

  return { k, correction: { pairs: pairMethod, groups: groupMethod }, bootstrap, sides: summaries, tasks, cells, pairs, deltas, warnings };
}

// ---------------------------------------------------------------------------------------------------------
// Text

const pct = (v: number | null | undefined) => (v === null || v === undefined ? 'n/a' : `${(100 * v).toFixed(1)}%`);
const signedPct = (v: number) => `${v >= 0 ? '+' : ''}${(100 * v).toFixed(1)}`;
const pval = (p: number | null) => (p === null ? 'n/a' : p < 0.001 ? '<0.001' : p.toFixed(3));
const interval = (ci: Interval | null | undefined) => (ci ? `[${signedPct(ci.low)}, ${signedPct(ci.high)}]` : '');

const ratio = (v: number) => (v === Infinity ? 'inf' : v.toFixed(2));

/** The conditional odds ratio with its interval: `2.50 [1.10, 6.30]`, `inf [...]`, or n/a. */
export function oddsText(m: McNemar): string {
  if (m.odds_ratio === null) return 'n/a';
  return `${ratio(m.odds_ratio)}${m.odds_ratio_ci ? ` [${ratio(m.odds_ratio_ci.low)}, ${ratio(m.odds_ratio_ci.high)}]` : ''}`;
}

/** JSON of a comparison: infinite odds ratios as the string "Infinity" (JSON has no infinity). */
export function comparisonJson(c: Comparison): string {
  return JSON.stringify(c, (_key, value) => (value === Infinity ? 'Infinity' : value), 2) + '\n';
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n') + '\n';
}

export function comparisonText(c: Comparison, options: { alpha?: number; maxTasks?: number } = {}): string {
  const alpha = options.alpha ?? 0.05;
  const out: string[] = [];
  out.push(
    table([
      ['side', 'runs', 'tasks', 'episodes', 'success', `95% CI`, `pass^${c.k}`, 'agent errors', 'cost (USD)'],
      ...c.sides.map((s) => [s.label, String(s.runs.length), String(s.tasks), String(s.episodes), pct(s.success_rate), s.ci ? `${pct(s.ci.low)}-${pct(s.ci.high)}` : '', pct(s.pass_k), String(s.agent_errors), s.cost_usd === null ? 'n/a' : s.cost_usd.toFixed(4)]),
    ]),
  );
  if (c.pairs.length) {
    out.push(`\nPaired over common tasks (B - A, percentage points; ${c.correction.pairs} over ${c.pairs.length * 2} tests):\n`);
    out.push(
      table([
        ['A', 'B', 'tasks', 'delta', '95% CI', 'p (bootstrap)', 'adj.', 'McNemar b/c', 'p (exact)', 'adj.', 'odds ratio', ''],
        ...c.pairs.map((p) => [
          p.a,
          p.b,
          String(p.tasks),
          p.success ? signedPct(p.success.mean) : 'n/a',
          interval(p.success?.ci),
          pval(p.success?.p ?? null),
          pval(p.p_adjusted.bootstrap),
          `${p.mcnemar.b}/${p.mcnemar.c}`,
          pval(p.mcnemar.p),
          pval(p.p_adjusted.mcnemar),
          oddsText(p.mcnemar),
          p.p_adjusted.mcnemar === null ? `untested (< ${MIN_TEST_TASKS} tasks)` : (p.p_adjusted.bootstrap ?? 1) < alpha || p.p_adjusted.mcnemar < alpha ? 'significant' : '',
        ]),
      ]),
    );
    out.push(`\nPer namespace and category (${c.correction.groups} over ${c.deltas.length} deltas):\n`);
    out.push(
      table([
        ['A', 'B', 'group', 'tasks', 'delta', '95% CI', 'p adj.', ''],
        ...c.deltas.map((d) => [d.a, d.b, `${d.group} ${d.key}`, String(d.tasks), d.delta ? signedPct(d.delta.mean) : 'n/a', interval(d.delta?.ci), pval(d.p_adjusted), d.tasks < MIN_TEST_TASKS ? `untested (< ${MIN_TEST_TASKS} tasks)` : (d.p_adjusted ?? 1) < alpha ? 'significant' : '']),
      ]),
    );
  }
  const modes = FAILURE_MODES.filter((m) => c.sides.some((s) => s.failure_modes[m] > 0));
  if (modes.length) {
    out.push('\nFailure modes of failed episodes:\n');
    out.push(table([['mode', ...c.sides.map((s) => s.label)], ...modes.map((m) => [m, ...c.sides.map((s) => String(s.failure_modes[m]))])]));
  }
  if (c.sides.length > 1) {
    const bySide = new Map(c.cells.map((cell) => [`${cell.side}|${cell.task_hash}`, cell]));
    const spread = c.tasks
      .map((t) => {
        const values = c.sides.map((s) => bySide.get(`${s.label}|${t.task_hash}`)?.pass_k ?? null);
        const known = values.filter((v): v is number => v !== null);
        return { t, values, spread: known.length > 1 ? Math.max(...known) - Math.min(...known) : 0 };
      })
      .filter((r) => r.spread > 0)
      .sort((a, b) => b.spread - a.spread || a.t.task_id.localeCompare(b.t.task_id))
      .slice(0, options.maxTasks ?? 15);
    if (spread.length) {
      out.push(`\nTasks that differ most (pass^${c.k}):\n`);
      out.push(table([['task', ...c.sides.map((s) => s.label)], ...spread.map((r) => [r.t.task_id, ...r.values.map((v) => pct(v))])]));
    }
  }
  for (const w of c.warnings) out.push(`warning: ${w}\n`);
  return out.join('');
}
