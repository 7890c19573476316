/**
 * The fast episode path (issue 18): episodes whose servers the pool (runner/episode.ts `EpisodePool`) started
 * ahead of time, and whose reference agent reaches the gateway in process rather than over HTTP,
 * get the same verdicts, calls and answers as episodes run the plain way; a pooled start that failed
 * falls back to starting the servers when the episode is taken, and says so; nothing prepared outlives the run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { createReferenceAgent } from '../../server/src/runner/agents/reference.ts';
import { prepareEpisode, runEpisode } from '../../server/src/runner/episode.ts';
import { executeRun, planRun } from '../../server/src/runner/run.ts';
import { createRun } from '../../server/src/record/run-folder.ts';
import type { RunEvent } from '../../server/src/engine/protocol.ts';
import { scratchRoots } from '../../server/src/runner/scratch.ts';
import { collectTaskFiles } from '../../server/src/tasks/files.ts';
import { FAULT_PROFILES } from '../../server/src/record/faults.ts';
import type { EpisodeRecord } from '../../server/src/record/schema.ts';
import { loadTasks } from '../../server/src/tasks/load.ts';

const fixtures = join(__dirname, '..', 'fixtures', 'tasks');

async function plan(folders: string[]) {
  const registry = await loadRegistry();
  const tasks = loadTasks(collectTaskFiles(folders.map((f) => join(fixtures, f))), registry);
  const specs = planRun(tasks, {
    agent: createReferenceAgent(),
    variants: () => ['reference:0'],
    trials: 1,
    profile: { ...FAULT_PROFILES.light, name: 'light' },
    perturbation: 'none',
  });
  return { registry, tasks, specs };
}

/** What an episode's outcome is made of, without times. */
function outcome(r: EpisodeRecord) {
  return {
    status: r.status,
    passed: r.passed,
    answer: r.answer,
    calls: r.calls.map((c) => ({ tool: c.tool, arguments: c.arguments, status: c.status, result: c.result, fault: c.fault })),
  };
}

/** Sandbox folders of a run still on disk. */
const leftovers = (runId: string) => scratchRoots().flatMap((root) => readdirSync(root)).filter((n) => n.startsWith(`mcpbench-${runId}-`));

test('pooled episodes: the same verdicts, calls and answers as plain ones, and no sandbox left behind', { timeout: 300_000 }, async () => {
  const { registry, tasks, specs } = await plan(['travel', 'memory', 'git']);
  const work = mkdtempSync(join(tmpdir(), 'mcpbench-pool-'));
  try {
    const results: Record<string, Map<string, ReturnType<typeof outcome>>> = {};
    for (const [name, plain] of [['plain', true], ['pooled', false]] as const) {
      const runId = `pooltest${name}${process.pid}`;
      const store = createRun(join(work, name), {
        kind: 'run', run_id: runId, created_at: new Date().toISOString(), task_files: tasks.map((t) => t.file), tasks: tasks.map((t) => t.task.id),
        agent: 'reference', fault_profile: 'light', perturbations: ['none'], trials: 1, seed: 7, concurrency: 2, sandbox: 'process',
      });
      await executeRun(specs, { store, concurrency: 2, runId, registry, seed: 7, backend: 'process', plain });
      results[name] = new Map(store.episodes.map((r) => [r.work_unit, outcome(r)]));
      assert.deepEqual(leftovers(runId), [], `${name}: every sandbox was removed`);
    }
    assert.equal(results.pooled!.size, specs.length);
    assert.ok([...results.pooled!.values()].some((o) => o.calls.some((c) => c.fault)), 'the light profile injected faults, so fault decisions are compared too');
    assert.deepEqual(results.pooled, results.plain);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});

test('a pooled start that failed: the episode starts its servers when taken, says so, and passes', { timeout: 120_000 }, async () => {
  const { registry, specs } = await plan(['travel']);
  const spec = specs[0]!;
  const runId = `poolfallback${process.pid}`;
  const env = { concurrency: 1, runId, registry, seed: 1, backend: 'process' as const };
  // A start timeout no server can meet: the prepared episode fails to start.
  const prepared = prepareEpisode(spec, { ...env, startTimeoutMs: 1 });
  assert.notEqual(await prepared.ready, undefined, 'the pooled start failed');
  const events: RunEvent[] = [];
  const record = await runEpisode(spec, { ...env, onEvent: (e) => events.push(e) }, prepared);
  assert.equal(record.status, 'passed');
  assert.equal(record.passed, true, 'the reference solution passes on servers started the plain way');
  const notices = events.flatMap((e) => (e.type === 'notice' ? [e.message] : []));
  assert.equal(notices.length, 1);
  assert.match(notices[0]!, new RegExp(`${spec.key.task_id}: the server pool could not start its servers ahead \\(.*\\); starting them now`));
  assert.ok(!existsSync(prepared.root), 'the failed prepared sandbox was removed');
  assert.deepEqual(leftovers(runId), []);
});
