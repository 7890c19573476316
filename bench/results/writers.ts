/**
 * One writer, measured: N `mcpbench results import` processes at once into one PGlite folder (each its own
 * run, and every one of them also a run shared by all), then N `mcpbench run --resume` coordinators at once on
 * one run folder. Prints what was lost (a run or episode missing), duplicated (a work unit recorded twice) and
 * corrupted (a database that does not open, rows that differ from the folder): 0 / 0 / 0 is the goal.
 *
 *   npx tsx bench/results/writers.ts [N=4]
 */
import { execSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openRun } from '../../server/src/record/run-folder.ts';
import { openResultsDb } from '../../server/src/results/db.ts';
import { moveEpisode, writeRunFolder } from '../../test/results/fixtures.ts';

const n = Number(process.argv[2] ?? 4);
const root = join(__dirname, '..', '..');
const work = mkdtempSync(join(tmpdir(), 'mcpbench-bench-writers-'));

function cli(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'server/src/cli/index.ts'), ...args], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

async function main() {
  console.log(`load before: ${execSync('uptime').toString().trim()}`);
  const trials = [0, 1, 2, 3, 4];
  const shared = writeRunFolder(join(work, 'runs', 'shared'), { run_id: 'shared', trials: trials.length }, trials.map((trial) => moveEpisode('shared', { trial, passed: trial % 2 === 0 })));
  const own = Array.from({ length: n }, (_, i) => writeRunFolder(join(work, 'runs', `run-${i}`), { run_id: `run-${i}`, trials: trials.length }, trials.map((trial) => moveEpisode(`run-${i}`, { trial, passed: trial !== i % 5 }))));
  const db = join(work, 'results.pglite');
  let started = Date.now();
  const imports = await Promise.all(own.map((dir) => cli(['results', 'import', dir, shared, '--db', db])));
  const importSeconds = (Date.now() - started) / 1000;
  let lost = 0;
  let duplicated = 0;
  let corrupted = 0;
  const failedImports = imports.filter((r) => r.code !== 0);
  try {
    const opened = await openResultsDb(db, root, { waitMs: 0 });
    try {
      const runs = new Set((await opened.db.selectFrom('runs').select('run_id').execute()).map((r) => r.run_id));
      lost += ['shared', ...own.map((_, i) => `run-${i}`)].filter((id) => !runs.has(id)).length;
      const episodes = await opened.db.selectFrom('episodes').select(['run_id', 'work_unit']).execute();
      const keys = episodes.map((e) => `${e.run_id} ${e.work_unit}`);
      duplicated += keys.length - new Set(keys).size;
      const expected = (n + 1) * trials.length;
      if (new Set(keys).size < expected) lost += expected - new Set(keys).size;
      if (new Set(keys).size > expected) corrupted += new Set(keys).size - expected;
    } finally {
      await opened.close();
    }
  } catch (error) {
    corrupted++;
    console.log(`the database does not open: ${(error as Error).message}`);
  }
  console.log(`${n} concurrent imports in ${importSeconds.toFixed(1)} s: ${n - failedImports.length} exited 0${failedImports.length ? `, failed: ${failedImports.map((r) => r.stderr.trim().split('\n').pop()).join(' | ')}` : ''}`);

  // N coordinators at once on one run folder (a reference run of the move task with n trials, none recorded yet).
  const folder = writeRunFolder(join(work, 'coord', 'run-c'), { run_id: 'run-c', trials: n, extra: { version: 2, kind: 'run', perturbations: ['none'], agent_options: {} } }, []);
  started = Date.now();
  const coordinators = await Promise.all(Array.from({ length: n }, () => cli(['run', '--resume', folder, '--sandbox', 'process', '--reporter', 'none', '--no-report'])));
  const refused = coordinators.filter((r) => /is in use by/.test(r.stderr)).length;
  const run = openRun(folder);
  const units = run.episodes.map((e) => e.work_unit);
  duplicated += units.length - new Set(units).size;
  lost += Math.max(0, (run.config.plan?.units ?? n) - new Set(units).size);
  corrupted += run.damaged.length;
  console.log(`${n} concurrent coordinators on one run folder in ${((Date.now() - started) / 1000).toFixed(1)} s: ${coordinators.filter((r) => r.code === 0).length} ran, ${refused} refused (in use), journal ${units.length} records for ${new Set(units).size} units`);
  console.log(`lost / duplicated / corrupted: ${lost} / ${duplicated} / ${corrupted}`);
  console.log(`load after: ${execSync('uptime').toString().trim()}`);
  rmSync(work, { recursive: true, force: true });
}

void main();
