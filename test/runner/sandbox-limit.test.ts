/**
 * What an agent makes its servers write is bounded (runner/scratch.ts `sandboxMaxBytes`, `watchTreeSize`):
 * an agent that keeps writing files through the real filesystem server is stopped once the episode's
 * sandboxes hold more than `MCPBENCH_SANDBOX_MAX_BYTES`, the episode is an agent error `sandbox-full` (never
 * retried as ours, never judged), its servers are stopped and its sandbox removed. An ordinary episode under
 * the same limit passes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import type { Agent } from '../../server/src/runner/agents/agent.ts';
import { createReferenceAgent } from '../../server/src/runner/agents/reference.ts';
import { runEpisode } from '../../server/src/runner/episode.ts';
import { planRun } from '../../server/src/runner/run.ts';
import { scratchRoots, treeBytes } from '../../server/src/runner/scratch.ts';
import { collectTaskFiles } from '../../server/src/tasks/files.ts';
import { FAULT_PROFILES } from '../../server/src/record/faults.ts';
import { loadTasks } from '../../server/src/tasks/load.ts';

const MiB = 1024 ** 2;
const task = join(__dirname, '..', 'fixtures', 'tasks', 'filesystem', 'fs-bump-version-001.json');

/** Writes 2 MiB files through the gateway, one every 100 ms, until the episode stops it (the task allows 6 calls: 12 MiB). */
const filler: Agent = {
  name: 'filler',
  async run(context) {
    const client = new Client({ name: 'filler', version: '0' });
    await client.connect(await context.gateway.connectInProcess!());
    try {
      const content = 'x'.repeat(2 * MiB);
      for (let i = 0; i < 200; i++) {
        context.signal.throwIfAborted();
        await client.callTool({ name: 'filesystem_write_file', arguments: { path: `fill-${i}.txt`, content } });
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return { answer: 'wrote 400 MiB' };
    } finally {
      await client.close().catch(() => undefined);
    }
  },
};

async function episode(agent: Agent, runId: string) {
  const registry = await loadRegistry();
  const [spec] = planRun(loadTasks(collectTaskFiles([task]), registry), { agent, variants: () => ['reference:0'], trials: 1, profile: { ...FAULT_PROFILES.none, name: 'none' }, perturbation: 'none' });
  return runEpisode(spec!, { runId, registry, seed: 1, backend: 'process' });
}

test('treeBytes: the bytes allocated under a folder', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcpbench-treebytes-'));
  try {
    const before = await treeBytes(dir);
    writeFileSync(join(dir, 'a'), Buffer.alloc(3 * MiB, 1));
    const after = await treeBytes(dir);
    assert.ok(after - before >= 3 * MiB && after - before < 4 * MiB, `${after - before} bytes for a 3 MiB file`);
    assert.equal(await treeBytes(join(dir, 'missing')), 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an agent filling its sandbox past MCPBENCH_SANDBOX_MAX_BYTES: sandbox-full, servers stopped, nothing judged; an ordinary episode passes', { timeout: 120_000 }, async () => {
  const saved = process.env.MCPBENCH_SANDBOX_MAX_BYTES;
  process.env.MCPBENCH_SANDBOX_MAX_BYTES = String(8 * MiB);
  try {
    const runId = `sandboxlimit${process.pid}`;
    const record = await episode(filler, runId);
    assert.equal(record.status, 'agent_error', JSON.stringify(record.error));
    assert.equal(record.error?.kind, 'agent');
    assert.equal(record.error?.code, 'sandbox-full');
    assert.match(record.error?.message ?? '', /past the limit of 8 MiB \(MCPBENCH_SANDBOX_MAX_BYTES\)/);
    assert.equal(record.verdict, undefined, 'no end state judged');
    const written = record.calls.filter((c) => c.status === 'ok').length;
    assert.ok(written >= 4 && written <= 6, `${written} files of 2 MiB were written before it was stopped`);
    assert.deepEqual(scratchRoots().flatMap((root) => readdirSync(root)).filter((n) => n.startsWith(`mcpbench-${runId}-`)), [], 'its sandbox was removed');

    const ordinary = await episode(createReferenceAgent(), `${runId}ok`);
    assert.equal(ordinary.status, 'passed', JSON.stringify(ordinary.error));
  } finally {
    if (saved === undefined) delete process.env.MCPBENCH_SANDBOX_MAX_BYTES;
    else process.env.MCPBENCH_SANDBOX_MAX_BYTES = saved;
  }
});
