/**
 * bench/run: episodes per minute for the reference agent over the task set at concurrency 1 and 2, and the
 * share of wall time spent outside the servers' own work (tool calls, measured at the gateway) — start-up,
 * seeding, snapshots, evaluation. Needs `npm run build` first.
 *
 *   npx tsx bench/run/run.ts [task folders...]      (default: tasks/; SANDBOX=bwrap|process)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { createReferenceAgent } from '../../server/src/runner/agents/reference.ts';
import { FAULT_PROFILES } from '../../server/src/runner/faults.ts';
import { executeRun, loadTasks, planRun } from '../../server/src/runner/run.ts';
import { defaultBackend, type SandboxBackend } from '../../server/src/runner/sandbox.ts';
import { createRun } from '../../server/src/runner/store.ts';
import { collectTaskFiles } from '../../server/src/tasks/files.ts';

async function main() {
  const registry = await loadRegistry();
  const paths = process.argv.slice(2);
  const tasks = loadTasks(collectTaskFiles(paths.length ? paths : [join(__dirname, '..', '..', 'tasks')]), registry);
  const backend = (process.env.SANDBOX as SandboxBackend | undefined) ?? defaultBackend();
  const specs = planRun(tasks, {
    agent: createReferenceAgent(),
    variants: () => ['reference:0'],
    trials: 1,
    profile: { ...FAULT_PROFILES.none, name: 'none' },
    perturbation: 'none',
  });
  console.log(`bench/run: ${specs.length} episodes (reference agent, no faults, sandbox ${backend})`);
  for (const concurrency of [1, 2]) {
    const work = mkdtempSync(join(tmpdir(), 'mcpbench-bench-run-'));
    try {
      const store = createRun(join(work, 'run'), {
        kind: 'run', run_id: `bench-${concurrency}`, created_at: new Date().toISOString(), task_files: tasks.map((t) => t.file), tasks: tasks.map((t) => t.task.id),
        agent: 'reference', fault_profile: 'none', perturbations: ['none'], trials: 1, seed: 1, concurrency, sandbox: backend,
      });
      const started = performance.now();
      await executeRun(specs, { store, concurrency, runId: `bench-${concurrency}`, registry, seed: 1, backend });
      const wallMs = performance.now() - started;
      const results = store.episodes;
      const episodeMs = results.reduce((n, r) => n + r.duration_ms, 0);
      const callMs = results.reduce((n, r) => n + r.calls.reduce((m, c) => m + c.latency_ms, 0), 0);
      const failed = results.filter((r) => r.status !== 'passed').length;
      console.log(
        `  concurrency ${concurrency}: ${((results.length / wallMs) * 60_000).toFixed(1)} episodes/min (${(wallMs / 1000).toFixed(1)} s wall, ${failed} not passed); ` +
          `time in tool calls ${((callMs / episodeMs) * 100).toFixed(1)}% of episode time, outside the servers' own work ${(100 - (callMs / episodeMs) * 100).toFixed(1)}%`,
      );
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
