/**
 * Re-judging a stored run: a real model run keeps the end states it judged (content-addressed in states/),
 * and `mcpbench rejudge` judges them again under the tasks' current predicates without running an agent.
 * A deliberately changed predicate flips exactly its task's verdicts; the new run names its source and the
 * task hashes judged against; a run without stored end states says what is missing.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalHash } from '../../server/src/canonical-json.ts';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { createRun, openRun, readEndState, REPORT_FILES } from '../../server/src/record/run-folder.ts';
import { latestByWorkUnit } from '../../server/src/record/work-units.ts';
import { rejudgeRun } from '../../server/src/traces/rejudge.ts';
import { runCli } from '../../server/src/cli/main.ts';
import { FIXTURES, modelRun, type ModelRun } from './model-run.ts';

let run: ModelRun;
let tasks: string;

before(async () => {
  tasks = mkdtempSync(join(tmpdir(), 'mcpbench-rejudge-tasks-'));
  cpSync(join(FIXTURES, 'travel'), tasks, { recursive: true });
  run = await modelRun({ tasks: [tasks], seed: 5 });
});

after(() => {
  if (run) rmSync(run.work, { recursive: true, force: true });
  rmSync(tasks, { recursive: true, force: true });
});

const standing = (directory: string) => latestByWorkUnit([...openRun(directory).episodes]);

test('a run keeps the end state each episode was judged on, under its hash', () => {
  const records = standing(run.directory);
  assert.ok(records.length === 3 && records.every((r) => r.passed && r.end_state));
  for (const record of records) {
    const kept = readEndState(run.directory, record.end_state!);
    assert.ok(kept && 'states' in kept);
    assert.equal(canonicalHash(kept.states), record.end_state);
  }
  assert.equal(readdirSync(join(run.directory, 'states')).length, new Set(records.map((r) => r.end_state)).size);
});

test('an end state past the limit is kept as a marker that says it was cut', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcpbench-cut-'));
  try {
    const folder = createRun(join(dir, 'r'), { kind: 'run', run_id: 'r', created_at: new Date().toISOString(), task_files: [], tasks: [], agent: 'noop', fault_profile: 'none', perturbations: ['none'], trials: 1, seed: 1, concurrency: 1, sandbox: 'process' });
    const states = { filesystem: { files: { 'a.txt': 'x'.repeat(100) } } };
    const hash = canonicalHash(states);
    folder.keepEndState(hash, states, 50);
    assert.deepEqual(readEndState(folder.directory, hash), { version: 1, hash, cut: { bytes: JSON.stringify(states).length, limit: 50 } });
    assert.throws(() => folder.keepEndState('../../etc', states), /not a SHA-256/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('unchanged predicates: every episode judged again, nothing flips', async () => {
  const result = rejudgeRun(run.directory, { registry: await loadRegistry(), out: join(run.work, 'same') });
  assert.deepEqual(result.counts, { rejudged: 3, flipped: 0, not_rejudged: {} });
  assert.ok(result.episodes.every((e) => e.task_hash.before === e.task_hash.after && e.status.after === 'passed'));
});

test('a deliberately changed predicate flips exactly its task, in a new run that names its source and hashes', async () => {
  const file = join(tasks, 'travel-cheapest-flight-001.json');
  const task = JSON.parse(readFileSync(file, 'utf8'));
  task.success_predicate = { 'travel.reservationConfirmed': { flight_id: 'AA-500', passenger: 'Alice' } };
  writeFileSync(file, JSON.stringify(task, null, 2));
  let stdout = '';
  let stderr = '';
  const code = await runCli(['rejudge', run.directory, '--out', join(run.work, 'changed')], { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), cwd: run.work });
  assert.equal(code, 1, stderr);
  assert.match(stdout, /^flipped  travel-cheapest-flight-001 \[trial 0\] \[openai\] \[faults none\] \[perturbation none\]: passed -> failed$/m);
  assert.equal(stdout.match(/^flipped/gm)?.length, 1);
  assert.match(stdout, /3 episodes judged again, 1 flipped/);

  const [folder] = readdirSync(join(run.work, 'changed'));
  const target = join(run.work, 'changed', folder!);
  const rejudged = openRun(target);
  assert.equal(rejudged.config.rejudged?.run_id, openRun(run.directory).config.run_id);
  assert.equal(rejudged.config.rejudged?.task_hashes['travel-cheapest-flight-001'], canonicalHash(task));
  const after = standing(target);
  const changed = after.find((r) => r.task_id === 'travel-cheapest-flight-001')!;
  assert.deepEqual([changed.status, changed.passed, changed.task_hash, changed.verdict?.value], ['failed', false, canonicalHash(task), false]);
  const before = standing(run.directory);
  for (const r of after.filter((r) => r.task_id !== 'travel-cheapest-flight-001')) {
    const old = before.find((b) => b.task_id === r.task_id)!;
    assert.deepEqual([r.status, r.task_hash, r.work_unit, r.verdict], [old.status, old.task_hash, old.work_unit, old.verdict]);
  }
  assert.ok(existsSync(join(target, REPORT_FILES.html)) && existsSync(join(target, 'views', `${changed.work_unit}.html`)));
});

test('a run without stored end states: nothing judged again, and the reason said', async () => {
  rmSync(join(run.directory, 'states'), { recursive: true });
  const result = rejudgeRun(run.directory, { registry: await loadRegistry(), out: join(run.work, 'none') });
  assert.deepEqual(result.counts, { rejudged: 0, flipped: 0, not_rejudged: { 'no-end-state': 3 } });
  assert.deepEqual(standing(result.directory).map((r) => r.status), standing(run.directory).map((r) => r.status));
});
