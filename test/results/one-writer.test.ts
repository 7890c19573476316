/**
 * One writer (issue 28, case 1): two `results import` processes at once into one PGlite folder both land
 * (the second waits for the first's lock) and the database still opens; a lock held by a live process is
 * refused with who holds it; a lock left by a killed process is taken over; a file or a mysql:// URL as
 * `--db` is a clean error.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FolderLockError, lockFolder } from '../../server/src/folder-lock.ts';
import { openResultsDb, ResultsDbError } from '../../server/src/results/db.ts';
import { cliIn, moveEpisode, writeRunFolder } from './fixtures.ts';

const scratch = mkdtempSync(join(tmpdir(), 'mcpbench-one-writer-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
const root = join(__dirname, '..', '..');

function cliProcess(...argv: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'server/src/cli/index.ts'), ...argv], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const cli = cliIn(scratch);

test('two results import processes at once into one PGlite folder: both runs land, the database opens, one opener at a time', { timeout: 120_000 }, async () => {
  for (const id of ['run-a', 'run-b']) {
    writeRunFolder(join(scratch, 'runs', id), { run_id: id }, [0, 1, 2].map((trial) => moveEpisode(id, { trial, passed: trial !== 1 })));
  }
  const [a, b] = await Promise.all([
    cliProcess('results', 'import', join(scratch, 'runs/run-a'), '--db', join(scratch, 'shared.pglite')),
    cliProcess('results', 'import', join(scratch, 'runs/run-b'), '--db', join(scratch, 'shared.pglite')),
  ]);
  assert.equal(a.code, 0, a.stderr);
  assert.equal(b.code, 0, b.stderr);
  // Open (one writer: a second opener that will not wait is told who holds it), and everything is there.
  const folder = join(scratch, 'shared.pglite');
  const opened = await openResultsDb(folder, scratch, { purpose: 'results import', waitMs: 0 });
  try {
    await assert.rejects(openResultsDb(folder, scratch, { waitMs: 0 }), (error: unknown) => {
      assert.ok(error instanceof ResultsDbError);
      assert.equal(error.kind, 'locked');
      assert.match(error.message, new RegExp(`in use by results import \\(pid ${process.pid} on `));
      return true;
    });
    const runs = await opened.db.selectFrom('runs').select('run_id').orderBy('run_id').execute();
    assert.deepEqual(runs.map((r) => r.run_id), ['run-a', 'run-b']);
    const episodes = await opened.db.selectFrom('episodes').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    assert.equal(Number(episodes.n), 6);
  } finally {
    await opened.close();
  }
  // Closed, the folder is free again.
  await (await lockFolder(folder, { purpose: 'after', waitMs: 0 })).release();
});

test('the lock of a killed process is taken over at once; a live holder is not', { timeout: 30_000 }, async () => {
  const folder = join(scratch, 'killed-holder');
  const holderScript = `import { lockFolder } from ${JSON.stringify(join(root, 'server/src/folder-lock.ts'))};
await lockFolder(${JSON.stringify(folder)}, { purpose: 'holder' });
process.stdout.write('locked\\n');
setInterval(() => undefined, 1000);`;
  const file = join(scratch, 'holder.mts');
  writeFileSync(file, holderScript);
  const child = spawn(process.execPath, ['--import', 'tsx', file], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => child.stdout.on('data', (d: Buffer) => d.toString().includes('locked') && resolve()));
  await assert.rejects(lockFolder(folder, { purpose: 'second', waitMs: 500 }), (error: unknown) => error instanceof FolderLockError && error.holder?.purpose === 'holder' && error.holder.pid === child.pid);
  child.kill('SIGKILL');
  await new Promise((resolve) => child.on('exit', resolve));
  const started = Date.now();
  // Its holder is gone from this machine: taken over at once, not after the 30 s stale time.
  const lock = await lockFolder(folder, { purpose: 'taker', waitMs: 10_000 });
  assert.ok(Date.now() - started < 10_000);
  await lock.release();
});

test('--db names a folder or a postgres URL: a file or mysql:// is a clean error', async () => {
  writeFileSync(join(scratch, 'a-file.db'), 'not a folder');
  for (const db of ['a-file.db', 'mysql://u@localhost/db']) {
    const result = await cli('results', 'list', '--db', db);
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, db.startsWith('mysql') ? /not a database this tool opens/ : /a file, not a PGlite folder/);
    assert.doesNotMatch(result.stderr, /internal error|\n\s+at /);
  }
});
