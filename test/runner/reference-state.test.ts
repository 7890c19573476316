/**
 * `<ns>.matchesReference` over real episodes: the runner replays the first reference solution on a fresh
 * sandbox for its end state, so the check of a task whose whole predicate is "end state as the reference's"
 * passes its reference, and fails noop and every counterexample.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { runCheck } from '../../server/src/engine/session.ts';
import { openRun } from '../../server/src/record/run-folder.ts';
import { canonicalHash } from '../../server/src/canonical-json.ts';
import type { Task } from '../../server/src/tasks/model.ts';

const fixture = join(__dirname, '..', 'fixtures', 'tasks', 'calendar', 'calendar-book-review-001.json');

test('check of a task judged by calendar.matchesReference: reference passes, noop and counterexamples fail', { timeout: 180_000 }, async () => {
  const registry = await loadRegistry();
  const task: Task = { ...JSON.parse(readFileSync(fixture, 'utf8')), success_predicate: { 'calendar.matchesReference': { pointers: ['/meetings'] } } };
  const work = mkdtempSync(join(tmpdir(), 'mcpbench-reference-state-'));
  try {
    const finished = await runCheck([{ file: fixture, task, hash: canonicalHash(task) }], { directory: join(work, 'run'), registry, cwd: work, seed: 1, concurrency: 2, backend: 'process', version: 'test' });
    const checks = finished.checks;
    const byVariant = new Map(openRun(finished.directory).episodes.filter((r) => r.fault_profile === 'none').map((r) => [r.variant, r]));
    assert.equal(byVariant.get('reference:0')?.passed, true);
    assert.equal(byVariant.get('noop')?.passed, false);
    for (const i of [0, 1, 2]) assert.equal(byVariant.get(`counterexample:${i}`)?.passed, false, `counterexample ${i}`);
    const evidence = byVariant.get('counterexample:0')?.verdict?.evidence as { differing: { pointer: string }[] };
    assert.deepEqual(evidence.differing.map((d) => d.pointer), ['/meetings']);
    assert.deepEqual(checks[0]?.problems, []);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
