import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RunOutcomeTracker, runSummary, type TaskOutcome } from '../../client/src/run-outcomes.ts';
import type {  RunEvent } from '../../server/src/engine/protocol.ts';
import type { EpisodeRecord, EpisodeStatus } from '../../server/src/record/schema.ts';

const result = (task_id: string, trial: number, status: EpisodeStatus, over: Partial<EpisodeRecord> = {}): EpisodeRecord => ({
  work_unit: `${task_id}${trial}`.padEnd(64, '0'), task_id, trial, variant: 'reference:0', fault_profile: 'none', perturbation: 'none', run_id: 'r', task_hash: 'h', agent: 'reference',
  seed: 1, status, passed: status === 'passed', category: 'c', namespaces: ['n'], max_steps: 5, tool_calls: 1, unlisted_calls: 0,
  errors_seen: 0, budget_exceeded: false, calls: [], started_at: '', duration_ms: 100, attempt: 1, ...over,
});
const finished = (r: EpisodeRecord): RunEvent => ({ type: 'episode-finished', run_id: 'r', result: r });
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
      { task_id: 'a', file: '/t/a.json', task_hash: 'h', ok: true, problems: [], coverage, faults: {}, findings: [] },
      { task_id: 'b', file: '/t/b.json', task_hash: 'h', ok: false, problems: ['counterexample 1 passes'], coverage, faults: {}, findings: [] },
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
  assert.equal(checkedOutcome({ ...episode('noop', false), status: 'agent_error' }), undefined, 'an error is neither as expected nor not');
});

test('after a cancel, a task not yet decided is not run (skipped), whatever part of it arrived', () => {
  const tracker = new RunOutcomeTracker('run');
  tracker.onEvent(runStarted(['a', 'b', 'c'], 6));
  tracker.onEvent(finished(result('a', 0, 'passed')));
  assert.equal(tracker.onEvent(finished(result('a', 1, 'passed'))).finished[0]!.state, 'passed', 'decided before the cancel');
  tracker.onEvent(started('b'));
  tracker.onEvent(finished(result('b', 0, 'passed')));
  const rest = tracker.finish('Cancelled.', { cancelled: true });
  assert.deepEqual(rest.map((o) => [o.taskId, o.state]), [['b', 'skipped'], ['c', 'skipped']], 'one trial of two says nothing of pass^2');
});

test('the closing line of the runner panel is made from the outcomes the Test Explorer shows', () => {
  const outcome = (taskId: string, state: TaskOutcome['state'], message?: string): TaskOutcome => ({ taskId, state, durationMs: 0, results: [], ...(message ? { message } : {}) });
  assert.equal(runSummary([outcome('a', 'passed'), outcome('b', 'failed', 'Failed (...)')]), 'Finished: 1 passed, 1 failed.');
  assert.equal(
    runSummary([outcome('a', 'errored', 'Agent error (command, faults none, trial 0): agent-exit: the agent exited with code 3\nexit code 3')]),
    'Finished: 1 errored.\na errored: Agent error (command, faults none, trial 0): agent-exit: the agent exited with code 3',
    'an error says whose and why, in its first line',
  );
  // Cancelled after the last episode: the same outcome as without the cancel, and that nothing was cut short.
  assert.equal(runSummary([outcome('a', 'passed')], { cancelled: true }), '1 passed (cancelled after the last episode had finished: nothing was cut short).');
  assert.equal(runSummary([outcome('a', 'passed'), outcome('b', 'skipped', 'Cancelled.')], { cancelled: true }), 'Cancelled: 1 passed, 1 not run.');
  const many = ['a', 'b', 'c', 'd', 'e'].map((id) => outcome(id, 'errored', 'Infrastructure error (reference:0, faults none, trial 0, attempt 3): state-seed: could not seed'));
  assert.match(runSummary(many), /^Finished: 5 errored\.\n(a|b|c) errored.*\n.*\n.*\n… and 2 more errored \(see the Test Results\)$/);
});
