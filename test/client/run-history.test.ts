/**
 * The runner panel's history, as the language server reads it (engine/history.ts) and the panel labels it: a check says what check decided (check ok / check
 * failing and which tasks, from checks.json), never a count of passed probes; a run says its three outcomes apart.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { historyLabel, labelled } from '../../client/src/run-history.ts';
import { runHistory } from '../../server/src/engine/history.ts';
import { createRun } from '../../server/src/record/run-folder.ts';
import type { EpisodeRecord, NewRunRecord } from '../../server/src/record/schema.ts';

const config: NewRunRecord = {
  kind: 'check', run_id: 'check-20260101-000000-abcdef', created_at: '2026-01-01T00:00:00.000Z', task_files: ['/t/a.json'], tasks: ['a'],
  agent: 'check', fault_profile: 'check', perturbations: ['none'], trials: 1, seed: 1, concurrency: 1, sandbox: 'process',
};
const coverage = { paths: { covered: 1, total: 1 }, leaves: { covered: 1, total: 1 }, items: [] };
const episode = (variant: string, passed: boolean, run_id: string, over: Partial<EpisodeRecord> = {}): EpisodeRecord => ({
  work_unit: createHash('sha256').update(variant).digest('hex'), run_id, task_id: 'a', task_hash: 'h', trial: 0, variant, fault_profile: 'none', perturbation: 'none', agent: 'reference', seed: 1,
  status: passed ? 'passed' : 'failed', passed, category: 'c', namespaces: ['n'], max_steps: 5, tool_calls: 1, unlisted_calls: 0, errors_seen: 0,
  budget_exceeded: false, calls: [], started_at: '', duration_ms: 1, attempt: 1, ...over,
});

const listRuns = (directory: string) => labelled(runHistory(directory));

test('a check is listed as check ok or check failing (which tasks), not as episodes passed', () => {
  const runs = mkdtempSync(join(tmpdir(), 'mcpbench-history-'));
  const check = createRun(join(runs, config.run_id), config);
  // The noop agent and a counterexample failing is what a good task does: 1 of 3 episodes "passed".
  check.append(episode('noop', false, config.run_id));
  check.append(episode('reference:0', true, config.run_id));
  check.append(episode('counterexample:0', false, config.run_id));
  assert.equal(listRuns(runs)[0]!.label, 'check not finished (interrupted, or still running)');
  check.writeChecks([{ task_id: 'a', file: '/t/a.json', task_hash: 'h', ok: true, problems: [], coverage, faults: {}, findings: [] }]);
  const [ok] = listRuns(runs);
  assert.equal(ok!.label, 'check ok · 1 task');
  assert.doesNotMatch(ok!.label, /passed/);
  check.writeChecks([
    { task_id: 'a', file: '/t/a.json', task_hash: 'h', ok: false, problems: ['counterexample 1 passes'], coverage, faults: {}, findings: [] },
    { task_id: 'b', file: '/t/b.json', task_hash: 'h', ok: true, problems: [], coverage, faults: {}, findings: [] },
  ]);
  assert.equal(listRuns(runs)[0]!.label, 'check failing · 1 of 2 tasks: a');
});

test('a run says its outcomes apart; many failing tasks are named up to three', () => {
  const base = { id: 'r', directory: '/runs/r', created_at: '', agent: 'command', fault_profile: 'light', tasks: 2, damaged: 1 };
  assert.equal(
    historyLabel({ ...base, kind: 'run', episodes: 4, outcomes: { passed: 1, failed: 1, agent_error: 1, infra_error: 1 } }),
    'command · faults light · 1/4 passed · 1 failed · 1 agent error · 1 infra error · 1 damaged line',
  );
  assert.equal(
    historyLabel({ ...base, damaged: 0, kind: 'check', episodes: 0, outcomes: { passed: 0, failed: 0, agent_error: 0, infra_error: 0 }, checks: { tasks: 9, failing: ['a', 'b', 'c', 'd', 'e'] } }),
    'check failing · 5 of 9 tasks: a, b, c, and 2 more',
  );
  assert.match(historyLabel({ ...base, kind: 'run', episodes: 0, outcomes: { passed: 0, failed: 0, agent_error: 0, infra_error: 0 }, error: 'run.json: not JSON' }), /^unreadable: run\.json: not JSON$/);
});
