import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RunOutcomeTracker } from '../../client/src/run-outcomes.ts';
import type { EpisodeResult, EpisodeStatus, RunEvent } from '../../server/src/runner/types.ts';

const result = (task_id: string, trial: number, status: EpisodeStatus, over: Partial<EpisodeResult> = {}): EpisodeResult => ({
  work_unit: `${task_id}${trial}`.padEnd(64, '0'), task_id, trial, variant: 'reference:0', fault_profile: 'none', perturbation: 'none', run_id: 'r', task_hash: 'h', agent: 'reference',
  seed: 1, status, passed: status === 'passed', category: 'c', namespaces: ['n'], max_steps: 5, tool_calls: 1, unlisted_calls: 0,
  errors_seen: 0, budget_exceeded: false, calls: [], started_at: '', duration_ms: 100, attempt: 1, ...over,
});
const finished = (r: EpisodeResult): RunEvent => ({ type: 'episode-finished', run_id: 'r', result: r });
const started = (task_id: string, trial = 0): RunEvent => ({ type: 'episode-started', run_id: 'r', work_unit: 'w', key: { task_id, trial, variant: 'reference:0', fault_profile: 'none', perturbation: 'none' } });
const runStarted = (tasks: string[], episodes: number, kind: 'run' | 'check' = 'run'): RunEvent => ({
  type: 'run-started', kind, run_id: 'r', directory: '/runs/r', tasks, episodes, recorded: 0, agent: kind === 'check' ? 'check' : 'reference', fault_profile: kind === 'check' ? 'check' : 'none', seed: 1,
});

test('a task is decided when all its trials finished: passed only if every trial passed', () => {
  const tracker = new RunOutcomeTracker('run');
  tracker.onEvent(runStarted(['a', 'b'], 4));
  assert.deepEqual(tracker.onEvent(started('a')).started, ['a']);
  assert.deepEqual(tracker.onEvent(started('a', 1)).started, []);
  assert.deepEqual(tracker.onEvent(finished(result('a', 0, 'passed'))).finished, []);
  const a = tracker.onEvent(finished(result('a', 1, 'passed'))).finished;
  assert.deepEqual(a.map((o) => [o.taskId, o.state, o.durationMs]), [['a', 'passed', 200]]);
  tracker.onEvent(finished(result('b', 0, 'failed')));
  const b = tracker.onEvent(finished(result('b', 1, 'agent_error', { error: { kind: 'agent', code: 'agent-exit', message: 'gave up' } }))).finished;
  assert.equal(b[0]!.state, 'errored', 'an agent that broke is an error, not a failure');
  assert.match(b[0]!.message!, /Agent error \(.*trial 1\): agent-exit: gave up/);
  assert.deepEqual(tracker.finish('ended'), []);
});

test('an infrastructure error is retried by the runner: errored only when nothing scored arrives', () => {
  const tracker = new RunOutcomeTracker('run');
  tracker.expect(['a', 'b', 'c']);
  tracker.onEvent(runStarted(['a', 'b', 'c'], 3));
  assert.deepEqual(tracker.onEvent(finished(result('a', 0, 'infra_error', { error: { kind: 'infra', code: 'server-exited', message: 'crash' } }))).finished, []);
  assert.equal(tracker.onEvent(finished(result('a', 0, 'passed', { attempt: 2 }))).finished[0]!.state, 'passed');
  tracker.onEvent(started('b'));
  tracker.onEvent(finished(result('b', 0, 'infra_error', { error: { kind: 'infra', code: 'server-exited', message: 'server died' } })));
  const rest = tracker.finish('the CLI exited');
  assert.deepEqual(rest.map((o) => [o.taskId, o.state]), [['b', 'errored'], ['c', 'skipped']]);
  assert.match(rest[0]!.message!, /server died/);
});

test('check: the verdict per task comes from run-finished checks, with problems and coverage', () => {
  const tracker = new RunOutcomeTracker('check');
  tracker.expect(['a', 'b']);
  tracker.onEvent(runStarted(['a', 'b'], 12, 'check'));
  assert.deepEqual(tracker.onEvent(finished(result('a', 0, 'passed'))).finished, []);
  const coverage = { paths: { covered: 1, total: 2 }, leaves: { covered: 1, total: 2 }, items: [] };
  const update = tracker.onEvent({
    type: 'run-finished', kind: 'check', run_id: 'c', directory: '/runs/c', interrupted: false,
    checks: [
      { task_id: 'a', file: '/t/a.json', task_hash: 'h', ok: true, problems: [], coverage, faults: {} },
      { task_id: 'b', file: '/t/b.json', task_hash: 'h', ok: false, problems: ['counterexample 1 passes'], coverage, faults: {} },
    ],
  });
  assert.deepEqual(update.finished.map((o) => [o.taskId, o.state]), [['a', 'passed'], ['b', 'failed']]);
  assert.match(update.finished[1]!.message!, /- counterexample 1 passes\nCoverage: 1\/2 solution paths, 1\/2 leaves witnessed/);
  assert.equal(update.checks.length, 2);
});

test('a check episode against the outcome it must have: noop and counterexamples fail, references pass', async () => {
  const { checkedOutcome } = await import('../../client/src/run-outcomes.ts');
  const episode = (variant: string, passed: boolean, fault_profile = 'none') => ({ variant, passed, fault_profile, status: passed ? 'passed' : 'failed' });
  assert.deepEqual(checkedOutcome(episode('noop', false)), { label: 'failed, as expected', asExpected: true });
  assert.deepEqual(checkedOutcome(episode('counterexample:1', true)), { label: 'passed, but must fail', asExpected: false });
  assert.deepEqual(checkedOutcome(episode('reference:0', true)), { label: 'passed, as expected', asExpected: true });
  assert.deepEqual(checkedOutcome(episode('reference:0', false)), { label: 'failed, but must pass', asExpected: false });
  assert.equal(checkedOutcome(episode('reference:0', false, 'TransientTimeout-only')), undefined, 'a fault probe is judged by the check as a whole');
  assert.equal(checkedOutcome({ ...episode('noop', false), status: 'infra_error' }), undefined);
});
