/**
 * One writer per run folder (issue 28, case 5): while a session (a coordinator) holds a run folder, a second
 * `run --resume` of it is refused with who holds it and writes nothing; once released, the resume runs.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lockFolder } from '../../server/src/folder-lock.ts';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { runToEnd, SessionError } from '../../server/src/engine/session.ts';
import { moveEpisode, writeRunFolder } from '../results/fixtures.ts';

const scratch = mkdtempSync(join(tmpdir(), 'mcpbench-run-lock-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

test('a run folder held by a session: a second resume is refused with the holder, and runs once it is free', { timeout: 60_000 }, async () => {
  const directory = writeRunFolder(join(scratch, 'runs', 'held'), { run_id: 'held', extra: { kind: 'run', perturbations: ['none'], agent_options: {} } }, [moveEpisode('held', { trial: 0, passed: true })]);
  const journal = readFileSync(join(directory, 'episodes.jsonl'), 'utf8');
  const options = { mode: 'resume' as const, directory, registry: await loadRegistry(), cwd: scratch, backend: 'process' as const, concurrency: 1, report: false, executor: async () => ({ interrupted: false }) };
  const first = await lockFolder(directory, { purpose: 'mcpbench run' });
  try {
    await assert.rejects(runToEnd(options), (error: unknown) => {
      assert.ok(error instanceof SessionError, String(error));
      assert.match(error.message, new RegExp(`${directory} is in use by mcpbench run \\(pid ${process.pid} on `));
      return true;
    });
    assert.equal(readFileSync(join(directory, 'episodes.jsonl'), 'utf8'), journal);
  } finally {
    await first.release();
  }
  const finished = await runToEnd(options);
  assert.equal(finished.kind, 'run');
  // The session let go of the folder when it ended.
  await (await lockFolder(directory, { purpose: 'after' })).release();
});
