/**
 * Where episode sandboxes are made (runner/scratch.ts): a memory-backed file system with room when the machine
 * has one, the temporary folder otherwise, and `MCPBENCH_SCRATCH` when set; an episode's servers really run
 * on sandboxes there, and a resumed run finds what a killed one left in any of those places.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { createReferenceAgent } from '../../server/src/runner/agents/reference.ts';
import { prepareEpisode, removeLeftoverSandboxes } from '../../server/src/runner/episode.ts';
import { planRun } from '../../server/src/runner/run.ts';
import { doctor } from '../../server/src/engine/doctor.ts';
import { scratch, scratchRoots, SCRATCH_MIN_FREE_BYTES } from '../../server/src/runner/scratch.ts';
import { collectTaskFiles } from '../../server/src/tasks/files.ts';
import { FAULT_PROFILES } from '../../server/src/record/faults.ts';
import { loadTasks } from '../../server/src/tasks/load.ts';

const TMPFS_MAGIC = 0x01021994;

function roomyTmpfs(path: string): boolean {
  try {
    const s = statfsSync(path);
    return Number(s.type) === TMPFS_MAGIC && Number(s.bavail) * Number(s.bsize) >= SCRATCH_MIN_FREE_BYTES;
  } catch {
    return false;
  }
}

test('the default: the temporary folder or /dev/shm when memory-backed with room, else the temporary folder', () => {
  const saved = process.env.MCPBENCH_SCRATCH;
  delete process.env.MCPBENCH_SCRATCH;
  try {
    const choice = scratch();
    const expected = [tmpdir(), '/dev/shm'].find(roomyTmpfs);
    if (expected) assert.deepEqual(choice, { path: expected, reason: 'tmpfs' });
    else assert.deepEqual(choice, { path: tmpdir(), reason: 'temporary folder' });
    assert.ok(scratchRoots().includes(tmpdir()), 'leftovers are looked for in the temporary folder too');
  } finally {
    if (saved !== undefined) process.env.MCPBENCH_SCRATCH = saved;
  }
});

test('MCPBENCH_SCRATCH: episode sandboxes are made there, and leftovers there are removed', { timeout: 60_000 }, async () => {
  const registry = await loadRegistry();
  const tasks = loadTasks(collectTaskFiles([join(__dirname, '..', 'fixtures', 'tasks', 'travel')]), registry);
  const [spec] = planRun(tasks, { agent: createReferenceAgent(), variants: () => ['reference:0'], trials: 1, profile: { ...FAULT_PROFILES.none, name: 'none' }, perturbation: 'none' });
  const folder = mkdtempSync(join(tmpdir(), 'mcpbench-scratch-test-'));
  const saved = process.env.MCPBENCH_SCRATCH;
  process.env.MCPBENCH_SCRATCH = folder;
  try {
    assert.deepEqual(scratch(), { path: folder, reason: 'MCPBENCH_SCRATCH' });
    const runId = `scratchtest${process.pid}`;
    const prepared = prepareEpisode(spec!, { runId, registry, seed: 1, backend: 'process' });
    assert.equal(await prepared.ready, undefined, 'the servers started');
    assert.ok(prepared.root.startsWith(join(folder, `mcpbench-${runId}-`)), prepared.root);
    const server = prepared.servers.get('travel');
    assert.ok(server, 'the travel server runs');
    assert.equal(server.sandbox, join(prepared.root, 'travel'), 'on a sandbox in the named folder');
    assert.ok(readdirSync(server.sandbox).length > 0, 'seeded there');
    await prepared.discard();
    assert.ok(!existsSync(prepared.root), 'and removed from there');
    const left = join(folder, `mcpbench-${runId}-Zz99Yy`);
    mkdirSync(join(left, 'travel'), { recursive: true });
    assert.equal(removeLeftoverSandboxes(runId), 1);
    assert.ok(!existsSync(left));
  } finally {
    if (saved === undefined) delete process.env.MCPBENCH_SCRATCH;
    else process.env.MCPBENCH_SCRATCH = saved;
    rmSync(folder, { recursive: true, force: true });
  }
});

test('doctor says where sandboxes are made, and why, and starts its servers there', { timeout: 60_000 }, async () => {
  const lines: string[] = [];
  const healthy = await doctor(await loadRegistry({ only: 'travel' }), (line) => lines.push(line), 'process');
  assert.ok(healthy, lines.join('\n'));
  const where = scratch();
  const line = lines.find((l) => l.startsWith('Sandboxes in: '));
  assert.ok(line?.startsWith(`Sandboxes in: ${where.path} (`), lines.join('\n'));
  assert.match(line ?? '', where.reason === 'tmpfs' ? /memory-backed, with room/ : where.reason === 'MCPBENCH_SCRATCH' ? /named by MCPBENCH_SCRATCH/ : /the temporary folder/);
  assert.ok(lines.some((l) => /^\s+travel\s/.test(l) && !/FAIL/.test(l)), lines.join('\n'));
});
