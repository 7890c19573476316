/**
 * Scores against hand-computed cases: every expected number below is worked out in the comment beside it,
 * not taken from the implementation.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bootstrapRatio, computeScores, passHatK, quantile, seededRandom } from '../../server/src/scoring/metrics.ts';
import type { FaultType } from '../../server/src/record/faults.ts';
import type { CallRecord, EpisodeRecord } from '../../server/src/record/schema.ts';
import { latestByWorkUnit, workUnitKey } from '../../server/src/record/work-units.ts';

let counter = 0;

/** A scored episode with sensible defaults; `calls` default to `tool_calls` plain ok calls. */
function episode(fields: Partial<EpisodeRecord> & { task_id: string }): EpisodeRecord {
  const toolCalls = fields.tool_calls ?? 2;
  const passed = fields.passed ?? (fields.status === undefined ? true : fields.status === 'passed');
  const calls: CallRecord[] =
    fields.calls ??
    Array.from({ length: toolCalls }, (_, index) => ({ index, tool: 'fs_read', qualified: 'fs.read', arguments: {}, status: 'ok' as const, result: {}, latency_ms: 1 }));
  const status = fields.status ?? (passed ? 'passed' : 'failed');
  const record: Omit<EpisodeRecord, 'work_unit'> = {
    run_id: 'r1',
    // One hash per task, as a real run has: the work unit hashes it.
    task_hash: `hash-${fields.task_id}`,
    agent: 'test',
    seed: 1,
    trial: counter++,
    variant: 'agent',
    fault_profile: 'none',
    perturbation: '0',
    category: 'single-tool',
    namespaces: ['fs'],
    max_steps: 10,
    unlisted_calls: 0,
    errors_seen: 0,
    budget_exceeded: false,
    started_at: '2026-01-01T00:00:00.000Z',
    duration_ms: 5,
    attempt: 1,
    ...(status === 'infra_error' ? { error: { kind: 'infra' as const, code: 'server-exited', message: 'the server exited' } } : {}),
    ...(status === 'agent_error' ? { error: { kind: 'agent' as const, code: 'agent-exit', message: 'the agent exited with code 1' } } : {}),
    ...fields,
    status,
    passed,
    tool_calls: toolCalls,
    calls,
  };
  return { work_unit: workUnitKey(record), ...record };
}

const faultCall = (index: number, type: FaultType): CallRecord => ({
  index,
  tool: 'fs_read',
  qualified: 'fs.read',
  arguments: {},
  status: 'fault',
  fault: { type, executed: false },
  result: { isError: true },
  latency_ms: 1,
});

/** n trials of one task, the first c passed. */
function trials(task_id: string, n: number, c: number, extra: Partial<EpisodeRecord> = {}): EpisodeRecord[] {
  return Array.from({ length: n }, (_, trial) => episode({ task_id, trial, passed: trial < c, ...extra }));
}

const close = (actual: number | null | undefined, expected: number, message?: string) => {
  assert.ok(actual !== null && actual !== undefined, message ?? 'a value');
  assert.ok(Math.abs(actual - expected) < 1e-12, `${message ?? ''} expected ${expected}, got ${actual}`);
};

test('pass^k estimator: C(c,k)/C(n,k) by hand', () => {
  close(passHatK(5, 3, 2), 0.3); // C(3,2)/C(5,2) = 3/10
  close(passHatK(5, 3, 1), 0.6); // c/n
  close(passHatK(5, 3, 3), 0.1); // 1/10
  assert.equal(passHatK(5, 3, 4), 0); // fewer passes than k
  close(passHatK(4, 4, 4), 1);
  close(passHatK(10, 7, 0), 1); // the empty draw always passes
  assert.throws(() => passHatK(3, 4, 1), RangeError);
  assert.throws(() => passHatK(3, 2, 4), RangeError);
  assert.throws(() => passHatK(3, 1.5, 1), RangeError);
});

test('pass^k stays finite where factorials overflow: C(900,300)/C(1000,300)', () => {
  // 1000! is Infinity in doubles; the product form is Π (900-i)/(1000-i) for i < 300, computed here in log space.
  let log = 0;
  for (let i = 0; i < 300; i++) log += Math.log(900 - i) - Math.log(1000 - i);
  const value = passHatK(1000, 900, 300);
  assert.ok(Number.isFinite(value) && value > 0);
  assert.ok(Math.abs(Math.log(value) - log) < 1e-9);
});

test('pass^k over tasks: mean of per-task estimates, for k = 1..n, with hand-computed CIs on a degenerate sample', () => {
  // Task a: n=5, c=3 → pass^1 = .6, pass^2 = .3, pass^3 = .1, pass^4 = pass^5 = 0.
  // Task b: n=5, c=5 → 1 for every k.  Means: .8, .65, .55, .5, .5.
  const scores = computeScores([...trials('a', 5, 3), ...trials('b', 5, 5)], { resamples: 200 });
  assert.deepEqual(scores.pass_k.map((p) => p.k), [1, 2, 3, 4, 5]);
  [0.8, 0.65, 0.55, 0.5, 0.5].forEach((expected, i) => close(scores.pass_k[i]!.value, expected, `pass^${i + 1}`));
  assert.ok(scores.pass_k.every((p) => p.tasks === 2));
  // Each interval lies within [min, max] of the task values and contains the point estimate's range ends.
  for (const p of scores.pass_k) {
    assert.ok(p.ci && p.ci.low <= p.value! && p.value! <= p.ci.high, `pass^${p.k} interval contains its estimate`);
  }
  // pass^5 resamples from {0, 1}: with 200 draws of two tasks, both extremes (all-a, all-b) occur.
  assert.deepEqual(scores.pass_k[4]!.ci, { low: 0, high: 1 });

  const degenerate = computeScores([...trials('a', 3, 3), ...trials('b', 3, 3), ...trials('c', 3, 3)]);
  for (const p of degenerate.pass_k) assert.deepEqual(p.ci, { low: 1, high: 1 }, 'every resample gives 1: zero width');
  assert.deepEqual(degenerate.success_rate.ci, { low: 1, high: 1 });
});

test('pass^k: a task with fewer trials only counts for k up to its n', () => {
  // a: n=3, c=2 → pass^1 = 2/3, pass^2 = 1/3, pass^3 = 0.  b: n=1, c=1 → pass^1 = 1 only.
  const scores = computeScores([...trials('a', 3, 2), ...trials('b', 1, 1)], { resamples: 50 });
  close(scores.pass_k[0]!.value, (2 / 3 + 1) / 2);
  assert.equal(scores.pass_k[0]!.tasks, 2);
  close(scores.pass_k[1]!.value, 1 / 3);
  assert.equal(scores.pass_k[1]!.tasks, 1);
  close(scores.pass_k[2]!.value, 0);
});

test('success rate, infra errors left out of every score and counted separately', () => {
  const results = [
    episode({ task_id: 'a', trial: 0, passed: true }),
    episode({ task_id: 'a', trial: 1, passed: false }),
    episode({ task_id: 'b', trial: 0, passed: true }),
    // An infra error on its own key: never scored.
    episode({ task_id: 'c', trial: 0, status: 'infra_error', passed: false, unlisted_calls: 5, tool_calls: 0, calls: [], error: { kind: 'infra', code: 'server-start', message: 'server would not start' }, category: 'recovery', errors_seen: 3 }),
    // An infra error retried into a pass: the key counts once, as passed.
    episode({ task_id: 'b', trial: 1, status: 'infra_error', passed: false, attempt: 1 }),
    episode({ task_id: 'b', trial: 1, passed: true, attempt: 2 }),
  ];
  const scores = computeScores(results, { resamples: 100 });
  assert.deepEqual(scores.episodes, { records: 6, scored: 4, passed: 3, failed: 1, agent_errors: 0, infra_errors: 2, infra_unresolved: 1 });
  assert.equal(scores.tasks, 2, 'task c has no scored episode');
  assert.equal(scores.success_rate.numerator, 3);
  assert.equal(scores.success_rate.denominator, 4);
  close(scores.success_rate.value, 0.75);
  // The infra error's 5 unlisted calls and recovery category do not leak into the rates.
  assert.equal(scores.hallucinated_tool_rate.numerator, 0);
  assert.equal(scores.recovery_rate.denominator, 0);
  assert.equal(scores.recovery_rate.value, null);
  assert.deepEqual(scores.by_namespace.map((b) => [b.key, b.attempted, b.passed]), [['fs', 4, 3]]);
});

test('a later infra error never replaces a scored result of the same work unit', () => {
  const pass = episode({ task_id: 'a', trial: 0, passed: true });
  const infra = episode({ task_id: 'a', trial: 0, status: 'infra_error', passed: false, attempt: 2 });
  assert.equal(pass.work_unit, infra.work_unit);
  assert.deepEqual(latestByWorkUnit([pass, infra]), [pass]);
  assert.deepEqual(latestByWorkUnit([infra, pass]), [pass]);
});

test('an agent error is scored as not passed and counted on its own; the most frequent errors are listed', () => {
  const results = [
    episode({ task_id: 'a', trial: 0, passed: true }),
    episode({ task_id: 'a', trial: 1, passed: false }),
    episode({ task_id: 'b', trial: 0, status: 'agent_error', passed: false }),
    episode({ task_id: 'b', trial: 1, status: 'agent_error', passed: false }),
    episode({ task_id: 'c', trial: 0, status: 'agent_error', passed: false, error: { kind: 'agent', code: 'agent-timeout', message: 'the agent did not finish within 5 s' } }),
    episode({ task_id: 'd', trial: 0, status: 'infra_error', passed: false }),
  ];
  const scores = computeScores(results, { resamples: 10 });
  // Scored: a0 a1 b0 b1 c0 (d0 is infra). Passed 1 of 5: an agent that breaks gains nothing by breaking.
  assert.deepEqual(scores.episodes, { records: 6, scored: 5, passed: 1, failed: 1, agent_errors: 3, infra_errors: 1, infra_unresolved: 1 });
  assert.deepEqual([scores.success_rate.numerator, scores.success_rate.denominator], [1, 5]);
  assert.deepEqual(scores.errors, [
    { kind: 'agent', code: 'agent-exit', message: 'the agent exited with code 1', count: 2 },
    { kind: 'agent', code: 'agent-timeout', message: 'the agent did not finish within 5 s', count: 1 },
    { kind: 'infra', code: 'server-exited', message: 'the server exited', count: 1 },
  ]);
});

test('tool-call efficiency over passed episodes only; hallucinated-tool rate over all calls', () => {
  const unlisted: CallRecord = { index: 2, tool: 'fs_nope', arguments: {}, status: 'unlisted', result: { isError: true }, latency_ms: 0 };
  const results = [
    episode({ task_id: 'a', passed: true, tool_calls: 2, max_steps: 4 }), // 0.5
    episode({ task_id: 'b', passed: true, tool_calls: 3, max_steps: 12 }), // 0.25
    episode({ task_id: 'c', passed: false, tool_calls: 10, max_steps: 10 }), // failed: not in efficiency
    // 2 forwarded calls + 1 unlisted call recorded: 3 calls, 1 unlisted.
    episode({ task_id: 'd', passed: false, tool_calls: 2, unlisted_calls: 1, calls: [...trials('x', 1, 1)[0]!.calls, unlisted] }),
  ];
  const scores = computeScores(results, { resamples: 10 });
  close(scores.tool_call_efficiency.value, (0.5 + 0.25) / 2);
  assert.equal(scores.tool_call_efficiency.episodes, 2);
  // Calls: 2 + 3 + 10 + 3 = 18, unlisted 1.
  assert.equal(scores.hallucinated_tool_rate.denominator, 18);
  assert.equal(scores.hallucinated_tool_rate.numerator, 1);
  close(scores.hallucinated_tool_rate.value, 1 / 18);
  // Without call records, all calls = tool_calls + unlisted_calls.
  const bare = computeScores([episode({ task_id: 'e', tool_calls: 3, unlisted_calls: 1, calls: [] })], { resamples: 10 });
  close(bare.hallucinated_tool_rate.value, 1 / 4);
  // No passed episode: efficiency is undefined, not 0.
  assert.equal(computeScores([episode({ task_id: 'f', passed: false })], { resamples: 10 }).tool_call_efficiency.value, null);
});

test('recovery rate: only recovery tasks where the agent saw an error', () => {
  const results = [
    episode({ task_id: 'r1', category: 'recovery', errors_seen: 1, passed: true }),
    episode({ task_id: 'r2', category: 'recovery', errors_seen: 2, passed: false }),
    episode({ task_id: 'r3', category: 'recovery', errors_seen: 3, passed: true }),
    episode({ task_id: 'r4', category: 'recovery', errors_seen: 0, passed: false }), // saw no error: out
    episode({ task_id: 's1', category: 'single-tool', errors_seen: 4, passed: false }), // not a recovery task: out
  ];
  const scores = computeScores(results, { resamples: 10 });
  assert.deepEqual([scores.recovery_rate.numerator, scores.recovery_rate.denominator], [2, 3]);
  close(scores.recovery_rate.value, 2 / 3);
});

test('reliability surface: one cell per (k, perturbation, fault profile)', () => {
  const results = [
    // none/0: a n=2 c=2, b n=2 c=1 → k=1: (1 + .5)/2 = .75; k=2: (1 + 0)/2 = .5
    ...trials('a', 2, 2),
    ...trials('b', 2, 1),
    // heavy/0: a n=2 c=1 → k=1: .5, k=2: 0
    ...trials('a', 2, 1, { fault_profile: 'heavy' }),
    // none/2: a n=1 c=0 → k=1: 0 only
    ...trials('a', 1, 0, { perturbation: '2' }),
  ];
  const { surface } = computeScores(results, { resamples: 10 });
  const cells = surface.map((c) => [c.k, c.perturbation, c.fault_profile, c.pass_k, c.tasks]);
  assert.deepEqual(cells, [
    [1, '0', 'heavy', 0.5, 1],
    [1, '0', 'none', 0.75, 2],
    [1, '2', 'none', 0, 1],
    [2, '0', 'heavy', 0, 1],
    [2, '0', 'none', 0.5, 2],
  ]);
  // Overall pass^1 averages the four units: (1 + .5 + .5 + 0)/4.
  const scores = computeScores(results, { resamples: 10 });
  close(scores.pass_k[0]!.value, 0.5);
  assert.equal(scores.pass_k[0]!.tasks, 4);
});

test('breakdowns by namespace (cross-server tasks count in each) and category', () => {
  const results = [
    episode({ task_id: 'g', namespaces: ['github'], category: 'composition', passed: true }),
    episode({ task_id: 'gc', namespaces: ['github', 'chat'], category: 'composition', passed: false }),
    episode({ task_id: 'c', namespaces: ['chat'], category: 'single-tool', passed: true }),
  ];
  const scores = computeScores(results, { resamples: 10 });
  assert.deepEqual(scores.by_namespace.map((b) => [b.key, b.attempted, b.passed, b.success_rate]), [
    ['chat', 2, 1, 0.5],
    ['github', 2, 1, 0.5],
  ]);
  assert.deepEqual(scores.by_category.map((b) => [b.key, b.attempted, b.passed, b.success_rate]), [
    ['composition', 2, 1, 0.5],
    ['single-tool', 1, 1, 1],
  ]);
  assert.deepEqual(scores.by_category[1]!.ci, { low: 1, high: 1 });
});

test('fault outcomes: calls injected, and the share of episodes with that fault that still passed', () => {
  const results = [
    episode({ task_id: 'a', passed: true, calls: [faultCall(0, 'TransientTimeout'), faultCall(1, 'TransientTimeout')] }),
    episode({ task_id: 'b', passed: false, calls: [faultCall(0, 'TransientTimeout'), faultCall(1, 'SchemaDrift')] }),
    episode({ task_id: 'c', passed: false, calls: [faultCall(0, 'SchemaDrift')] }),
    // An infra error's injected faults are not the agent's outcome.
    episode({ task_id: 'd', status: 'infra_error', passed: false, calls: [faultCall(0, 'HardRateLimit')] }),
  ];
  const { fault_outcomes } = computeScores(results, { resamples: 10 });
  assert.deepEqual(fault_outcomes, [
    { type: 'TransientTimeout', recoverable: true, decided: 0, delivered: 0, calls_injected: 3, episodes: 2, passed: 1, pass_rate: 0.5 },
    { type: 'SchemaDrift', recoverable: false, decided: 0, delivered: 0, calls_injected: 2, episodes: 2, passed: 0, pass_rate: 0 },
  ]);
});

test('faults decided vs delivered: a decision that could not be delivered is counted as decided only', () => {
  const ok = (index: number, decided?: FaultType): CallRecord => ({ index, tool: 'fs_read', arguments: {}, status: 'ok', result: {}, latency_ms: 1, ...(decided ? { decided } : {}) });
  const results = [
    // StaleData decided on a first read (nothing to replay): delivered as a plain call. Twice.
    episode({ task_id: 'a', passed: true, calls: [ok(0, 'StaleData'), ok(1)] }),
    episode({ task_id: 'b', passed: true, calls: [ok(0, 'StaleData')] }),
    // SchemaDrift decided twice, delivered once (the other result had no field to rename).
    episode({ task_id: 'c', passed: false, calls: [{ ...faultCall(0, 'SchemaDrift'), decided: 'SchemaDrift' }, ok(1, 'SchemaDrift')] }),
    // A rate-limit window carries SoftRateLimit to a later call that had no decision of its own.
    episode({ task_id: 'd', passed: true, calls: [{ ...faultCall(0, 'SoftRateLimit'), decided: 'SoftRateLimit' }, faultCall(1, 'SoftRateLimit'), ok(2)] }),
  ];
  const byType = Object.fromEntries(computeScores(results, { resamples: 10 }).fault_outcomes.map((f) => [f.type, [f.decided, f.delivered, f.calls_injected, f.episodes]]));
  assert.deepEqual(byType, { StaleData: [2, 0, 0, 0], SchemaDrift: [2, 1, 1, 1], SoftRateLimit: [1, 1, 2, 1] });
});

test('bootstrap: percentile interval over tasks, seeded, independent of journal order', () => {
  // Two tasks, one always passing and one always failing, one episode each. A resample of 2 tasks gives
  // 0 (p = 1/4), .5 (p = 1/2) or 1 (p = 1/4): the 2.5th percentile is 0 and the 97.5th is 1.
  const results = [episode({ task_id: 'p', passed: true }), episode({ task_id: 'f', passed: false })];
  assert.deepEqual(computeScores(results).success_rate.ci, { low: 0, high: 1 });
  // Tasks, not episodes, are resampled: 1 task with 4 episodes (2 pass) gives one value, .5, every time.
  assert.deepEqual(computeScores(trials('only', 4, 2)).success_rate.ci, { low: 0.5, high: 0.5 });

  const many = Array.from({ length: 30 }, (_, i) => trials(`t${i}`, 3, i % 4)).flat();
  const shuffled = [...many];
  const random = seededRandom(7);
  for (let i = shuffled.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
  }
  const a = computeScores(many, { seed: 3 });
  assert.deepEqual(computeScores(shuffled, { seed: 3 }), a, 'the same scores whatever the journal order');
  assert.notDeepEqual(computeScores(many, { seed: 4 }).success_rate.ci, a.success_rate.ci, 'another seed, another draw');
  const ci = a.success_rate.ci!;
  assert.ok(ci.low < a.success_rate.value! && a.success_rate.value! < ci.high);
  assert.equal(a.bootstrap.resamples, 1000);
  // JSON-serialisable: a round trip changes nothing.
  assert.deepEqual(JSON.parse(JSON.stringify(a)), a);
});

test('bootstrapRatio and quantile helpers', () => {
  assert.equal(bootstrapRatio([], { resamples: 10, seed: 1, confidence: 0.95, label: 'x' }), null);
  assert.deepEqual(bootstrapRatio([{ numerator: 3, denominator: 4 }], { resamples: 10, seed: 1, confidence: 0.95, label: 'x' }), { low: 0.75, high: 0.75 });
  // Type 7: position (n-1)q; for [0, 10, 20, 30] and q = .5 → 15; q = .9 → 27.
  assert.equal(quantile([0, 10, 20, 30], 0.5), 15);
  close(quantile([0, 10, 20, 30], 0.9), 27);
  assert.equal(quantile([4], 0.025), 4);
});

test('no episodes: every rate is null, nothing throws', () => {
  const scores = computeScores([]);
  assert.equal(scores.success_rate.value, null);
  assert.equal(scores.success_rate.ci, null);
  assert.deepEqual(scores.pass_k, []);
  assert.deepEqual(scores.surface, []);
});

test('malformed-call rate over attempted calls; model usage summed over every record, cost per passed task', () => {
  const model = (fields: Partial<NonNullable<EpisodeRecord['model']>>): NonNullable<EpisodeRecord['model']> => ({
    protocol: 'openai', model: 'm', requests: 2, turns: 2, retries: 0, prompt_tokens: 100, completion_tokens: 10, cached_tokens: 40, cache_write_tokens: 0,
    responses_without_usage: 0, cost: 0.5, currency: 'USD', turn_latency_ms: [100, 300], calls: [{ turn: 0, format: 'native', name: 'fs_read', status: 'sent' }], ...fields,
  });
  const results = [
    // 2 gateway calls + 2 malformed: 4 attempted.
    episode({ task_id: 'a', passed: true, malformed_calls: 2, model: model({}) }),
    // 2 gateway calls, none malformed; its model had no price, one response reported no usage.
    episode({ task_id: 'b', passed: false, malformed_calls: 0, model: model({ cost: null, responses_without_usage: 1, turn_latency_ms: [200], calls: [{ turn: 0, format: 'hermes', status: 'malformed', problem: 'no-name' }] }) }),
    // An infra error: not scored, but what it spent was spent.
    episode({ task_id: 'c', status: 'infra_error', passed: false, model: model({ prompt_tokens: 1000, cost: 1, turn_latency_ms: [] }) }),
    // No model agent: no model record.
    episode({ task_id: 'd', passed: true }),
  ];
  const scores = computeScores(results, { resamples: 10 });
  // Scored calls: a 2, b 2, d 2 = 6; malformed 2: 2 / (6 + 2).
  assert.deepEqual([scores.malformed_call_rate.numerator, scores.malformed_call_rate.denominator], [2, 8]);
  close(scores.malformed_call_rate.value, 0.25);
  const m = scores.model!;
  assert.deepEqual([m.episodes, m.requests, m.prompt_tokens, m.completion_tokens, m.cached_tokens, m.total_tokens, m.responses_without_usage, m.unpriced_episodes], [3, 6, 1200, 30, 120, 1230, 1, 1]);
  close(m.cost, 1.5);
  assert.equal(m.currency, 'USD');
  // Passed: a and d. 1.5 / 2; 1230 / 2.
  close(m.cost_per_passed, 0.75);
  close(m.tokens_per_passed, 615);
  // Latencies 100, 300, 200: mean 200, p50 200, p95 290 (type 7: 200 + 0.9 * 100).
  assert.deepEqual(m.latency_per_turn_ms, { mean: 200, p50: 200, p95: 290, turns: 3 });
  assert.deepEqual(m.calls_by_format, { hermes: 1, native: 2 });
  assert.equal(computeScores([episode({ task_id: 'e' })], { resamples: 10 }).model, null, 'no model agent, no model scores');
});
