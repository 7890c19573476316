/**
 * Identity and completeness (issue 28, case 2): a run is its run id and its plan; a partial copy (fewer
 * episodes) or another plan under the same run id never replaces what the database holds, and the import says
 * why (exit 1); a run is complete, incomplete or unresolved, `results list` says which, and the leaderboard
 * ranks only complete runs unless asked. `leaderboard --out` naming a file is a clean error.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { openResultsDb } from '../../server/src/results/db.ts';
import { importPaths } from '../../server/src/results/import.ts';
import { buildLeaderboard } from '../../server/src/results/leaderboard.ts';
import { planRecord } from '../../server/src/record/work-units.ts';
import { RUN_RECORD_VERSION, type EpisodeRecord } from '../../server/src/record/schema.ts';
import { cliIn, moveEpisode, writeRunFolder } from './fixtures.ts';

const scratch = mkdtempSync(join(tmpdir(), 'mcpbench-identity-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const cli = cliIn(scratch);

const TRIALS = 6;
const episodesOf = (run_id: string, trials: number[], agent = 'reference') => trials.map((trial) => ({ ...moveEpisode(run_id, { trial, passed: trial % 2 === 0 }), agent }));
/** A run folder whose run.json records the plan of `TRIALS` trials of the move task (what a session writes). */
function runFolder(name: string, run_id: string, episodes: EpisodeRecord[], plannedTrials = TRIALS): string {
  const plan = planRecord(episodesOf(run_id, Array.from({ length: plannedTrials }, (_, t) => t)).map((e) => e.work_unit));
  return writeRunFolder(join(scratch, name), { run_id, trials: plannedTrials, extra: { version: RUN_RECORD_VERSION, plan, perturbations: ['none'], kind: 'run' } }, episodes);
}

test('a partial copy or another plan never replaces a run; the import says why and exits 1', async () => {
  const full = runFolder('full/run-1', 'run-1', episodesOf('run-1', [0, 1, 2, 3, 4, 5]));
  const partial = runFolder('partial/run-1', 'run-1', episodesOf('run-1', [0, 1]));
  const otherPlan = runFolder('other/run-1', 'run-1', episodesOf('run-1', [0, 1, 2, 3, 4, 5, 6, 7]), 8);
  const result = await cli('results', 'import', full, partial, otherPlan, '--db', 'memory://', '-f', 'json');
  assert.equal(result.code, 1, result.stderr);
  const outcomes = (JSON.parse(result.stdout) as { outcomes: { status: string; refused?: { code: string; message: string } }[] }).outcomes;
  assert.deepEqual(outcomes.map((o) => o.status), ['imported', 'refused', 'refused']);
  assert.equal(outcomes[1]!.refused!.code, 'fewer-episodes');
  assert.match(outcomes[1]!.refused!.message, /holds 6 episodes of this run .*this folder has 2/);
  assert.equal(outcomes[2]!.refused!.code, 'other-plan');

  const registry = await loadRegistry();
  const opened = await openResultsDb('memory://');
  try {
    await importPaths(opened.db, [full], { registry });
    await importPaths(opened.db, [partial], { registry });
    const rows = await opened.db.selectFrom('episodes').select('work_unit').where('run_id', '=', 'run-1').execute();
    assert.equal(rows.length, 6, 'the full run is still there');
  } finally {
    await opened.close();
  }
});

test('complete, incomplete and unresolved runs: listed as such, only complete ones ranked unless asked', async () => {
  const infra = { ...moveEpisode('run-u', { trial: 5, passed: false }), status: 'infra_error' as const, error: { kind: 'infra' as const, code: 'server-start', message: 'the server did not start' } };
  const complete = runFolder('runs/run-c', 'run-c', episodesOf('run-c', [0, 1, 2, 3, 4, 5], 'alpha'));
  const incomplete = runFolder('runs/run-i', 'run-i', episodesOf('run-i', [0, 1, 2], 'beta'));
  const unresolved = runFolder('runs/run-u', 'run-u', [...episodesOf('run-u', [0, 1, 2, 3, 4]), infra]);
  const registry = await loadRegistry();
  const opened = await openResultsDb('memory://');
  try {
    const outcomes = await importPaths(opened.db, [complete, incomplete, unresolved], { registry, agentLabel: 'agent' });
    assert.deepEqual(outcomes.map((o) => (o.kind === 'run' ? o.completeness : o.kind)), ['complete', 'incomplete', 'unresolved']);
    const ranked = await buildLeaderboard(opened.db, { resamples: 50 });
    assert.deepEqual(ranked.sections[0]!.entries.flatMap((e) => e.runs.map((r) => r.run_id)), ['run-c']);
    assert.deepEqual(ranked.sections[0]!.not_ranked.map((r) => [r.run_id, r.completeness]), [['run-i', 'incomplete'], ['run-u', 'unresolved']]);
    const all = await buildLeaderboard(opened.db, { resamples: 50, includeIncomplete: true });
    assert.deepEqual(all.sections[0]!.entries.flatMap((e) => e.runs.map((r) => r.run_id)).sort(), ['run-c', 'run-i', 'run-u']);
    assert.equal(all.sections[0]!.entries[0]!.complete, false);
  } finally {
    await opened.close();
  }
  const listed = await cli('results', 'import', 'runs', '--db', 'listing.pglite');
  assert.equal(listed.code, 0, listed.stderr);
  const list = await cli('results', 'list', '--db', 'listing.pglite');
  assert.match(list.stdout, /run-c .* complete /);
  assert.match(list.stdout, /run-i .* INCOMPLETE \(3 of 6 units\)/);
  assert.match(list.stdout, /run-u .* UNRESOLVED \(1 units infra errors\)/);
  writeFileSync(join(scratch, 'board.html'), 'a file');
  const board = await cli('leaderboard', '--out', 'board.html', '--db', 'listing.pglite');
  assert.equal(board.code, 2);
  assert.match(board.stderr, /--out .*board\.html: a file, not a folder/);
  assert.doesNotMatch(board.stderr, /internal error|EEXIST/);
});
