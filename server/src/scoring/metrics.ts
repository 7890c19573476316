/**
 * Scores over a run's episode records: pure functions, no I/O.
 *
 * Which episodes count. An episode with status `infra_error` is the harness failing, not the agent: it is
 * left out of every score and counted on its own. An `agent_error` (the agent process or its model endpoint
 * broke) is scored as not passed, and counted on its own too: an agent that crashes does not get a better
 * score by crashing. The runner retries infrastructure failures, so one work unit can appear several times
 * in a journal; the scored record of a unit is its last non-infra record (journal order, `latestByWorkUnit`),
 * so a retried (or duplicated) episode counts once.
 *
 * Formulas (every rate is `null` when its denominator is 0, so "no data" never reads as 0 %):
 * - success rate = passed / attempted, over scored episodes.
 * - tool-call efficiency = mean over passed episodes of tool_calls / max_steps (lower is better).
 * - hallucinated-tool rate = Σ unlisted_calls / Σ all calls, where all calls of an episode is the number of
 *   calls the gateway recorded (`calls.length`, unlisted and over-budget ones included); an episode whose
 *   journal line carries no call records falls back to tool_calls + unlisted_calls.
 * - malformed-call rate = Σ malformed_calls / Σ (all calls + malformed_calls): calls the agent attempted but
 *   formed so badly (no name, arguments that are not a JSON object) that it answered them itself, over every
 *   call it attempted; beside the hallucinated-tool rate, which counts well-formed calls to unlisted tools.
 * - model usage (tokens, cost, latency per turn, calls by format): summed over every journal record with a
 *   model record, retried attempts included (what was spent was spent); cost per passed task = total cost /
 *   passed episodes.
 * - recovery-from-error rate = among `recovery`-category episodes with errors_seen >= 1, the share passed.
 * - pass^k per unit = C(c, k) / C(n, k) (the unbiased estimator of τ-bench / ReliabilityBench), with n
 *   trials and c passes of one unit; a unit is one (task, variant, fault profile, perturbation). pass^k is
 *   the mean over the units with n >= k, for k = 1 .. max n. C(c,k)/C(n,k) = Π_{i<k} (c-i)/(n-i), which
 *   never forms a factorial.
 * - reliability surface = pass^k per (k, perturbation, fault profile): the mean over that cell's units.
 * - 95 % intervals: percentile bootstrap over tasks (MCP-Atlas resamples tasks): draw as many task ids as
 *   there are, with replacement, recompute the statistic on all their episodes (or units), repeat
 *   `resamples` times, take the 2.5th and 97.5th percentiles (linear interpolation between order
 *   statistics). The generator is seeded from the options' seed and the estimate's name, and tasks are
 *   taken in id order, so intervals do not depend on journal order (concurrency) or on other estimates.
 */
import { mulberry32 } from '../seeded-random.ts';
import type { UsageTotals } from '../runner/agents/usage.ts';
import { FAULT_TYPES, RECOVERABLE, type FaultType } from '../record/faults.ts';
import type { EpisodeError, EpisodeRecord } from '../record/schema.ts';
import { latestByWorkUnit } from '../record/work-units.ts';


export interface ScoreOptions {
  /** Bootstrap resamples per interval (default 1000). */
  resamples?: number;
  /** Seed of the bootstrap generator (default 1). */
  seed?: number;
  /** Interval coverage (default 0.95). */
  confidence?: number;
}

export interface Interval {
  low: number;
  high: number;
}

export interface RateEstimate {
  value: number | null;
  /** Passed (or counted) items. */
  numerator: number;
  denominator: number;
  /** Bootstrap interval; null when there is nothing to resample. */
  ci?: Interval | null;
}

export interface PassK {
  k: number;
  value: number | null;
  /** Units (task x variant x fault profile x perturbation) with at least k scored trials. */
  tasks: number;
  ci: Interval | null;
}

export interface SurfaceCell {
  k: number;
  perturbation: string;
  fault_profile: string;
  pass_k: number;
  /** Units in this cell with at least k scored trials. */
  tasks: number;
}

export interface Breakdown {
  /** The namespace or category. */
  key: string;
  attempted: number;
  passed: number;
  success_rate: number | null;
  ci: Interval | null;
}

export interface FaultOutcome {
  type: FaultType;
  recoverable: boolean;
  /**
   * Calls the seeded generator decided this fault for, over scored episodes: what the profile's rates
   * describe. Not every decision can be delivered (StaleData needs an earlier read result of the tool,
   * SchemaDrift a field name to rename, PartialResponse and EmptyResponse a successful result).
   */
  decided: number;
  /** Of those, calls that did get this fault. */
  delivered: number;
  /** Calls that carried this fault, over scored episodes (delivered ones, and the calls a rate-limit window or a cascade went on to fail). */
  calls_injected: number;
  /** Scored episodes with at least one call carrying this fault. */
  episodes: number;
  passed: number;
  /** passed / episodes: how often the agent still succeeded with this fault in its way. */
  pass_rate: number | null;
}

/** What model agents spent over a run (null in Scores when no episode used a model agent). */
export interface ModelScores extends UsageTotals {
  /** Journal records with a model record (every attempt). */
  episodes: number;
  total_tokens: number;
  /** Total cost; null when no episode was priced. */
  cost: number | null;
  currency?: string;
  /** Episodes whose model had no price (their cost is not in `cost`). */
  unpriced_episodes: number;
  cost_per_passed: number | null;
  tokens_per_passed: number | null;
  latency_per_turn_ms: { mean: number; p50: number; p95: number; turns: number } | null;
  /** Attempted tool calls by the format they were written in (`native`, `hermes` ...). */
  calls_by_format: Record<string, number>;
}

export interface Scores {
  episodes: {
    /** Journal records read. */
    records: number;
    /** Distinct episode keys with a scored (passed or failed) result. */
    scored: number;
    passed: number;
    /** Scored work units the agent failed (predicate false or over budget). */
    failed: number;
    /** Scored work units whose agent broke (scored as not passed): scored = passed + failed + agent_errors. */
    agent_errors: number;
    /** Records with status infra_error (each attempt counts). */
    infra_errors: number;
    /** Episode keys that never got past an infrastructure failure: not scored at all. */
    infra_unresolved: number;
  };
  /** Distinct task ids among scored episodes. */
  tasks: number;
  success_rate: RateEstimate;
  tool_call_efficiency: { value: number | null; episodes: number };
  hallucinated_tool_rate: RateEstimate;
  malformed_call_rate: RateEstimate;
  recovery_rate: RateEstimate;
  model: ModelScores | null;
  pass_k: PassK[];
  surface: SurfaceCell[];
  by_namespace: Breakdown[];
  by_category: Breakdown[];
  fault_outcomes: FaultOutcome[];
  /** The most frequent error messages (agent and infrastructure, every attempt), most frequent first. */
  errors: ErrorCount[];
  bootstrap: { resamples: number; seed: number; confidence: number; method: 'percentile'; unit: 'task' };
}

// ---------------------------------------------------------------------------------------------------------
// Building blocks

/** C(c, k) / C(n, k): the probability that k trials drawn without replacement from n all passed. */
export function passHatK(n: number, c: number, k: number): number {
  if (!Number.isInteger(n) || !Number.isInteger(c) || !Number.isInteger(k) || n < 0 || c < 0 || c > n || k < 0) {
    throw new RangeError(`pass^k needs integers 0 <= c <= n and k >= 0 (n=${n}, c=${c}, k=${k})`);
  }
  if (k > n) throw new RangeError(`pass^k is undefined for k=${k} > n=${n} trials`);
  let p = 1;
  for (let i = 0; i < k; i++) {
    if (c - i <= 0) return 0;
    p *= (c - i) / (n - i);
  }
  return p;
}

/** mulberry32: tiny, fast, and good enough for resampling indices; identical on every platform. */
export const seededRandom = mulberry32;

/** FNV-1a of seed and label: each estimate gets its own stream, so adding one never shifts another. */
function streamSeed(seed: number, label: string): number {
  let h = (0x811c9dc5 ^ (seed >>> 0)) >>> 0;
  for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** Quantile of sorted values by linear interpolation between order statistics (R's type 7). */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) throw new RangeError('quantile of an empty sample');
  const position = (sorted.length - 1) * q;
  const below = Math.floor(position);
  const above = Math.ceil(position);
  const lo = sorted[below]!;
  const hi = sorted[above]!;
  return lo + (hi - lo) * (position - below);
}

/**
 * Percentile bootstrap over clusters (tasks). Each cluster is a pair of sums (numerator, denominator); the
 * statistic of a resample is Σ numerator / Σ denominator, which covers both a rate over episodes (passed,
 * attempted) and a mean over units (Σ pass^k, units). Null when there is no cluster.
 */
export function bootstrapRatio(
  clusters: readonly { numerator: number; denominator: number }[],
  options: { resamples: number; seed: number; confidence: number; label: string },
): Interval | null {
  const m = clusters.length;
  if (m === 0) return null;
  const random = seededRandom(streamSeed(options.seed, options.label));
  const stats: number[] = [];
  for (let b = 0; b < options.resamples; b++) {
    let numerator = 0;
    let denominator = 0;
    for (let i = 0; i < m; i++) {
      const cluster = clusters[Math.floor(random() * m)]!;
      numerator += cluster.numerator;
      denominator += cluster.denominator;
    }
    if (denominator > 0) stats.push(numerator / denominator);
  }
  if (stats.length === 0) return null;
  stats.sort((a, b) => a - b);
  const alpha = (1 - options.confidence) / 2;
  return { low: quantile(stats, alpha), high: quantile(stats, 1 - alpha) };
}

/** One error message and how often it was recorded. */
export interface ErrorCount {
  kind: EpisodeError['kind'];
  code: string;
  /** The first line of the message. */
  message: string;
  count: number;
}

/** Errors grouped by kind, code and the first line of their message, most frequent first (`limit` kept). */
export function errorCounts(records: readonly EpisodeRecord[], limit = 10): ErrorCount[] {
  const counts = new Map<string, ErrorCount>();
  for (const { error } of records) {
    if (!error) continue;
    const message = error.message.split('\n')[0]!;
    const key = JSON.stringify([error.kind, error.code, message]);
    const entry = counts.get(key);
    if (entry) entry.count++;
    else counts.set(key, { kind: error.kind, code: error.code, message, count: 1 });
  }
  return [...counts.values()].sort((a, b) => b.count - a.count || byString(a.kind, b.kind) || byString(a.code, b.code) || byString(a.message, b.message)).slice(0, limit);
}

/** All calls the agent made in an episode, refused ones included. */
export function callCount(result: EpisodeRecord): number {
  return result.calls.length > 0 ? result.calls.length : result.tool_calls + result.unlisted_calls;
}

const rate = (numerator: number, denominator: number): number | null => (denominator > 0 ? numerator / denominator : null);
const byString = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Groups values by a string key, keys sorted, so every derived order is independent of input order. */
function groupSorted<T>(items: readonly T[], keyOf: (item: T) => string): [string, T[]][] {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    let group = groups.get(key);
    if (!group) groups.set(key, (group = []));
    group.push(item);
  }
  return [...groups.entries()].sort((a, b) => byString(a[0], b[0]));
}

interface Unit {
  task_id: string;
  fault_profile: string;
  perturbation: string;
  n: number;
  c: number;
}

function unitsOf(scored: readonly EpisodeRecord[]): Unit[] {
  return groupSorted(scored, (r) => JSON.stringify([r.task_id, r.variant, r.fault_profile, r.perturbation])).map(([, group]) => {
    const first = group[0]!;
    return {
      task_id: first.task_id,
      fault_profile: first.fault_profile,
      perturbation: first.perturbation,
      n: group.length,
      c: group.filter((r) => r.passed).length,
    };
  });
}

/** pass^k clusters: per task, Σ pass^k over its units with n >= k, and their number. */
function passKClusters(units: readonly Unit[], k: number): { numerator: number; denominator: number }[] {
  return groupSorted(
    units.filter((u) => u.n >= k),
    (u) => u.task_id,
  ).map(([, group]) => ({ numerator: group.reduce((s, u) => s + passHatK(u.n, u.c, k), 0), denominator: group.length }));
}

function successClusters(scored: readonly EpisodeRecord[]): { numerator: number; denominator: number }[] {
  return groupSorted(scored, (r) => r.task_id).map(([, group]) => ({
    numerator: group.filter((r) => r.passed).length,
    denominator: group.length,
  }));
}

function breakdown(
  scored: readonly EpisodeRecord[],
  keysOf: (r: EpisodeRecord) => string[],
  bootstrap: { resamples: number; seed: number; confidence: number },
  label: string,
): Breakdown[] {
  const groups = new Map<string, EpisodeRecord[]>();
  for (const result of scored) {
    for (const key of new Set(keysOf(result))) {
      let group = groups.get(key);
      if (!group) groups.set(key, (group = []));
      group.push(result);
    }
  }
  return [...groups.entries()]
    .sort((a, b) => byString(a[0], b[0]))
    .map(([key, group]) => {
      const passed = group.filter((r) => r.passed).length;
      return {
        key,
        attempted: group.length,
        passed,
        success_rate: rate(passed, group.length),
        ci: bootstrapRatio(successClusters(group), { ...bootstrap, label: `${label}:${key}` }),
      };
    });
}

// ---------------------------------------------------------------------------------------------------------

export function computeScores(results: readonly EpisodeRecord[], options: ScoreOptions = {}): Scores {
  const bootstrap = { resamples: options.resamples ?? 1000, seed: options.seed ?? 1, confidence: options.confidence ?? 0.95 };
  if (!Number.isInteger(bootstrap.resamples) || bootstrap.resamples < 1) throw new RangeError('resamples must be a positive integer');
  if (!(bootstrap.confidence > 0 && bootstrap.confidence < 1)) throw new RangeError('confidence must be in (0, 1)');

  const latest = latestByWorkUnit(results);
  const scored = latest.filter((r) => r.status !== 'infra_error');
  const passed = scored.filter((r) => r.passed);

  const passedEpisodes = passed.length;
  const successRate: RateEstimate = {
    value: rate(passedEpisodes, scored.length),
    numerator: passedEpisodes,
    denominator: scored.length,
    ci: bootstrapRatio(successClusters(scored), { ...bootstrap, label: 'success' }),
  };

  const efficiency = passed.length > 0 ? passed.reduce((s, r) => s + r.tool_calls / r.max_steps, 0) / passed.length : null;

  const unlisted = scored.reduce((s, r) => s + r.unlisted_calls, 0);
  const calls = scored.reduce((s, r) => s + callCount(r), 0);
  const malformed = scored.reduce((s, r) => s + (r.malformed_calls ?? 0), 0);

  const recoveryPool = scored.filter((r) => r.category === 'recovery' && r.errors_seen >= 1);
  const recovered = recoveryPool.filter((r) => r.passed).length;

  const units = unitsOf(scored);
  const maxTrials = units.reduce((m, u) => Math.max(m, u.n), 0);
  const passK: PassK[] = [];
  for (let k = 1; k <= maxTrials; k++) {
    const clusters = passKClusters(units, k);
    const total = clusters.reduce((s, c) => s + c.numerator, 0);
    const count = clusters.reduce((s, c) => s + c.denominator, 0);
    passK.push({ k, value: rate(total, count), tasks: count, ci: bootstrapRatio(clusters, { ...bootstrap, label: `pass^${k}` }) });
  }

  const surface: SurfaceCell[] = [];
  for (const [, cell] of groupSorted(units, (u) => JSON.stringify([u.perturbation, u.fault_profile]))) {
    const first = cell[0]!;
    const cellMax = cell.reduce((m, u) => Math.max(m, u.n), 0);
    for (let k = 1; k <= cellMax; k++) {
      const eligible = cell.filter((u) => u.n >= k);
      surface.push({
        k,
        perturbation: first.perturbation,
        fault_profile: first.fault_profile,
        pass_k: eligible.reduce((s, u) => s + passHatK(u.n, u.c, k), 0) / eligible.length,
        tasks: eligible.length,
      });
    }
  }
  surface.sort((a, b) => a.k - b.k || byString(a.fault_profile, b.fault_profile) || byString(a.perturbation, b.perturbation));

  const faultOutcomes: FaultOutcome[] = [];
  for (const type of FAULT_TYPES) {
    let injected = 0;
    let decided = 0;
    let delivered = 0;
    let episodes = 0;
    let stillPassed = 0;
    for (const r of scored) {
      const hits = r.calls.filter((c) => c.fault?.type === type).length;
      injected += hits;
      for (const call of r.calls) {
        if (call.decided !== type) continue;
        decided++;
        if (call.fault?.type === type) delivered++;
      }
      if (hits > 0) {
        episodes++;
        if (r.passed) stillPassed++;
      }
    }
    if (episodes > 0 || decided > 0) {
      faultOutcomes.push({ type, recoverable: RECOVERABLE[type], decided, delivered, calls_injected: injected, episodes, passed: stillPassed, pass_rate: rate(stillPassed, episodes) });
    }
  }

  return {
    episodes: {
      records: results.length,
      scored: scored.length,
      passed: passedEpisodes,
      failed: scored.filter((r) => r.status === 'failed').length,
      agent_errors: scored.filter((r) => r.status === 'agent_error').length,
      infra_errors: results.filter((r) => r.status === 'infra_error').length,
      infra_unresolved: latest.length - scored.length,
    },
    tasks: new Set(scored.map((r) => r.task_id)).size,
    success_rate: successRate,
    tool_call_efficiency: { value: efficiency, episodes: passed.length },
    hallucinated_tool_rate: { value: rate(unlisted, calls), numerator: unlisted, denominator: calls },
    malformed_call_rate: { value: rate(malformed, calls + malformed), numerator: malformed, denominator: calls + malformed },
    recovery_rate: { value: rate(recovered, recoveryPool.length), numerator: recovered, denominator: recoveryPool.length },
    model: modelScores(results, passedEpisodes),
    pass_k: passK,
    surface,
    by_namespace: breakdown(scored, (r) => r.namespaces, bootstrap, 'namespace'),
    by_category: breakdown(scored, (r) => [r.category], bootstrap, 'category'),
    fault_outcomes: faultOutcomes,
    errors: errorCounts(results),
    bootstrap: { ...bootstrap, method: 'percentile', unit: 'task' },
  };
}

/** Sums of every record's model usage (all attempts), per passed episode where asked. */
export function modelScores(results: readonly EpisodeRecord[], passed: number): ModelScores | null {
  const records = results.map((r) => r.model).filter((m): m is NonNullable<EpisodeRecord['model']> => m !== undefined);
  if (records.length === 0) return null;
  const sum = (pick: (m: (typeof records)[number]) => number) => records.reduce((s, m) => s + pick(m), 0);
  const priced = records.filter((m) => m.cost !== null);
  const cost = priced.length > 0 ? priced.reduce((s, m) => s + (m.cost ?? 0), 0) : null;
  const currencies = [...new Set(priced.map((m) => m.currency ?? 'USD'))];
  const latencies = records.flatMap((m) => m.turn_latency_ms).sort((a, b) => a - b);
  const byFormat: Record<string, number> = {};
  for (const m of records) for (const call of m.calls) byFormat[call.format] = (byFormat[call.format] ?? 0) + 1;
  const prompt = sum((m) => m.prompt_tokens);
  const completion = sum((m) => m.completion_tokens);
  return {
    episodes: records.length,
    requests: sum((m) => m.requests),
    turns: sum((m) => m.turns),
    retries: sum((m) => m.retries),
    prompt_tokens: prompt,
    completion_tokens: completion,
    cached_tokens: sum((m) => m.cached_tokens),
    cache_write_tokens: sum((m) => m.cache_write_tokens),
    total_tokens: prompt + completion,
    responses_without_usage: sum((m) => m.responses_without_usage),
    cost,
    ...(currencies.length === 1 ? { currency: currencies[0]! } : {}),
    unpriced_episodes: records.length - priced.length,
    cost_per_passed: cost !== null && passed > 0 ? cost / passed : null,
    tokens_per_passed: passed > 0 ? (prompt + completion) / passed : null,
    latency_per_turn_ms:
      latencies.length > 0
        ? { mean: latencies.reduce((s, v) => s + v, 0) / latencies.length, p50: quantile(latencies, 0.5), p95: quantile(latencies, 0.95), turns: latencies.length }
        : null,
    calls_by_format: Object.fromEntries(Object.entries(byFormat).sort((a, b) => byString(a[0], b[0]))),
  };
}
