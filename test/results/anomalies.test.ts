/**
 * Rotation anomalies on a seeded synthetic history (test/results/synthetic-history.ts) with planted jumps,
 * leaks, an easy and a broken task and a verdict flip, and clean controls: every planted anomaly is flagged,
 * no control is, at alpha 0.05 with Holm's correction. Then the history as the database gives it: runs with
 * their set and month and a rotation's retired tasks, public from that month on.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { anomaliesText, detectAnomalies, fisherExact, loadHistory } from '../../server/src/results/anomalies.ts';
import { openResultsDb } from '../../server/src/results/db.ts';
import { importPaths } from '../../server/src/results/import.ts';
import { adjustPValues, mcnemarExact, pairedBootstrap, studentTTwoSided } from '../../server/src/results/stats.ts';
import { MOVE, MOVE_HASH, moveEpisode, writeRunFolder } from './fixtures.ts';
import { syntheticHistory } from './synthetic-history.ts';

test('the statistics against known values', () => {
  // McNemar exact: b = 1, c = 9 → 2 * P(X <= 1 | 10, 1/2) = 2 * 11 / 1024.
  assert.ok(Math.abs(mcnemarExact(1, 9).p - 22 / 1024) < 1e-12);
  assert.equal(mcnemarExact(0, 0).p, 1);
  // Fisher: the tea-tasting table [[3,1],[1,3]] has two-sided p = 0.4857.
  assert.ok(Math.abs(fisherExact(3, 1, 1, 3) - 0.4857142857) < 1e-9);
  // Student's t: t = 2.086, df = 20 is the two-sided 5% point.
  assert.ok(Math.abs(studentTTwoSided(2.086, 20) - 0.05) < 5e-4);
  // Holm and BH on a textbook family.
  assert.deepEqual(adjustPValues([0.01, 0.04, 0.03, 0.005], 'holm').map((p) => +p.toFixed(4)), [0.03, 0.06, 0.06, 0.02]);
  assert.deepEqual(adjustPValues([0.01, 0.04, 0.03, 0.005], 'bh').map((p) => +p.toFixed(4)), [0.02, 0.04, 0.04, 0.02]);
  // The paired bootstrap is seeded: the same seed and label give the same interval; a zero difference is p = 1.
  const diffs = [0.1, 0.2, -0.1, 0.3, 0, 0.2, 0.1];
  assert.deepEqual(pairedBootstrap(diffs, { resamples: 500, seed: 3, confidence: 0.95, label: 'x' }), pairedBootstrap(diffs, { resamples: 500, seed: 3, confidence: 0.95, label: 'x' }));
  assert.equal(pairedBootstrap([0, 0, 0], { resamples: 500, seed: 3, confidence: 0.95, label: 'x' })!.p, 1);
});

test('synthetic history: every planted anomaly is flagged, no clean control is', () => {
  const history = syntheticHistory(1);
  const report = detectAnomalies(history.cells, { seed: 1 });
  const flagged = new Set(report.flags.map((f) => f.key));
  const missed = history.planted.filter((key) => !flagged.has(key));
  const controls = report.flags.filter((f) => !history.planted.includes(f.key) && !history.subtle.includes(f.key));
  const subtle = history.subtle.filter((key) => flagged.has(key));
  console.log(`synthetic history (seed 1, ${history.cells.length} cells, ${report.tests.length} tests): planted caught ${history.planted.length - missed.length}/${history.planted.length}, controls flagged ${controls.length}/${report.tests.length - history.planted.length - history.subtle.length}, subtle caught ${subtle.length}/${history.subtle.length}`);
  assert.deepEqual(missed, [], 'every planted anomaly is caught');
  assert.deepEqual(controls.map((c) => c.detail), [], 'no control is flagged');
  // Each flag carries its statistic, threshold and evidence.
  for (const flag of report.flags) {
    assert.ok(flag.p_adjusted < flag.threshold && flag.p <= flag.p_adjusted);
    assert.ok(Number.isFinite(flag.statistic.value) && flag.statistic.name.length > 0);
    assert.ok(Object.keys(flag.evidence).length > 0);
  }
  const jump = report.flags.find((f) => f.kind === 'score_jump')!;
  assert.equal(jump.agent, 'jumper');
  assert.ok(jump.statistic.value > 0.15, 'the jump is up');
  const broken = report.flags.find((f) => f.kind === 'task_outlier' && f.statistic.value < 0)!;
  assert.match(broken.detail, /0\/\d+ passed .* too hard or broken/);
  // Seeded: the same history and seed give the same report.
  assert.equal(anomaliesText(detectAnomalies(history.cells, { seed: 1 })), anomaliesText(report));
  assert.match(anomaliesText(report), /FLAG verdict_flip: .*all 6 agents went from pass to fail/);
});

test('the history from the database: set, month, agent, and tasks public from their rotation month on', async () => {
  const scratch = mkdtempSync(join(tmpdir(), 'mcpbench-anomalies-'));
  const opened = await openResultsDb('memory://');
  try {
    const run = (id: string, month: string, passed: boolean[]) =>
      writeRunFolder(join(scratch, id), { run_id: id, extra: { set: { name: 'private', month } } }, passed.map((p, trial) => moveEpisode(id, { trial, passed: p })));
    run('may', '2026-05', [true, false, false]);
    run('june', '2026-06', [true, true, true]);
    writeFileSync(
      join(scratch, 'Historical-2026-06.json'),
      JSON.stringify({
        kind: 'mcpbench-historical', tag: 'Historical-2026-06', set: 'private', month: '2026-06', seed: 1, share: 0.25,
        attestations: [{ task_id: MOVE.id, sha256: MOVE_HASH }],
        retired: [{ task_id: MOVE.id, sha256: MOVE_HASH, file: 'x.json', namespace: 'filesystem', category: 'single-tool', added: '2026-01' }],
        replacements: [], previous_set_sha256: 'a'.repeat(64), set_sha256: 'b'.repeat(64),
      }),
    );
    await importPaths(opened.db, [scratch], { registry: await loadRegistry() });
    const cells = await loadHistory(opened.db);
    assert.deepEqual(
      cells.map((c) => [c.set, c.agent, c.month, c.task_id, c.namespace, c.difficulty, c.historical, c.passed, c.episodes]),
      [
        ['private', 'reference', '2026-05', MOVE.id, 'filesystem', 'easy', false, 1, 3],
        ['private', 'reference', '2026-06', MOVE.id, 'filesystem', 'easy', true, 3, 3],
      ],
    );
    assert.equal((await loadHistory(opened.db, { set: 'other' })).length, 0);
  } finally {
    await opened.close();
    rmSync(scratch, { recursive: true, force: true });
  }
});
