/**
 * Like for like (issue 28, case 4): an agent's runs under different configurations (fault profile, retry)
 * are separate leaderboard rows and are refused as one `compare` side with the reason; below MIN_TEST_TASKS
 * tasks no difference is tested or called significant; an interval is never zero-width when outcomes vary.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { compare, CompareError, MIN_TEST_TASKS } from '../../server/src/results/compare.ts';
import { openResultsDb } from '../../server/src/results/db.ts';
import { importPaths } from '../../server/src/results/import.ts';
import { buildLeaderboard } from '../../server/src/results/leaderboard.ts';
import { pairedBootstrap } from '../../server/src/results/stats.ts';
import { RUN_RECORD_VERSION, type EpisodeRecord } from '../../server/src/record/schema.ts';
import { moveEpisode, rekeyed, writeRunFolder } from './fixtures.ts';

const scratch = mkdtempSync(join(tmpdir(), 'mcpbench-like-for-like-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** A run of `tasks` tasks of one namespace, passing those `passes` says, under a fault profile and retry setting. */
function run(run_id: string, tasks: number, passes: (t: number) => boolean, faults: string, retry: boolean): string {
  const episodes: EpisodeRecord[] = [];
  for (let t = 0; t < tasks; t++) {
    episodes.push(rekeyed({ ...moveEpisode(run_id, { trial: 0, passed: passes(t), fault_profile: faults }), task_id: `task-${t}`, task_hash: t.toString(16).padStart(64, 'c') }));
  }
  return writeRunFolder(join(scratch, run_id), { run_id, extra: { version: RUN_RECORD_VERSION, kind: 'run', perturbations: ['none'], fault_profile: faults, agent_options: { retry }, set: { name: 'dev', month: '2026-05' } } }, episodes);
}

test('unlike configurations are separate rows and refused as one side; few tasks are not tested; intervals have width', async () => {
  const opened = await openResultsDb('memory://');
  try {
    const registry = await loadRegistry();
    await importPaths(opened.db, [run('plain', 2, () => false, 'none', false), run('heavy', 2, () => true, 'heavy', false), run('retry', 2, () => true, 'none', true)], { registry, agentLabel: 'ref' });
    await importPaths(opened.db, [run('other', 2, () => true, 'none', false)], { registry, agentLabel: 'other' });

    const board = await buildLeaderboard(opened.db, { resamples: 200 });
    const rows = board.sections[0]!.entries.filter((e) => e.agent === 'ref');
    assert.deepEqual(rows.map((e) => e.runs.map((r) => r.run_id)).sort(), [['heavy'], ['plain'], ['retry']]);
    assert.deepEqual(rows.map((e) => [e.configuration?.fault_profile, e.configuration?.retry]).sort(), [['heavy', false], ['none', false], ['none', true]]);

    await assert.rejects(compare(opened.db, ['ref', 'other'], { resamples: 200 }), (error: unknown) => {
      assert.ok(error instanceof CompareError);
      assert.match(error.message, /^ref: its runs measured unlike things and are not pooled into one side \(.*faults heavy.*retry/);
      return true;
    });

    // Two tasks, all failed on one side, all passed on the other: a difference, but no test over 2 tasks.
    const c = await compare(opened.db, ['plain', 'other'], { resamples: 200 });
    assert.ok(2 < MIN_TEST_TASKS);
    assert.deepEqual(c.pairs[0]!.p_adjusted, { bootstrap: null, mcnemar: null });
    for (const d of c.deltas) assert.equal(d.p_adjusted, null);
    const ci = c.pairs[0]!.success!.ci;
    assert.ok(ci.high - ci.low > 0, `interval ${JSON.stringify(ci)} has width`);
    assert.ok(c.warnings.some((w) => /fewer than \d+ tasks: not tested/.test(w)));
  } finally {
    await opened.close();
  }
});

test('a constant difference over n tasks gets an interval that narrows with n, never zero-width', () => {
  const widths = [2, 10, 50].map((n) => {
    const b = pairedBootstrap(Array(n).fill(1), { resamples: 100, seed: 1, confidence: 0.95, label: 'x' })!;
    assert.equal(b.mean, 1);
    assert.equal(b.ci.high, 1);
    return b.ci.high - b.ci.low;
  });
  assert.ok(widths[0]! > widths[1]! && widths[1]! > widths[2]! && widths[2]! > 0, String(widths));
});
