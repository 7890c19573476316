/**
 * The share of failed episodes that get a specific failure mode rather than `unknown`, on a faulted run of
 * agents that must fail: the noop agent and the reference agent replaying every counterexample of the dev set,
 * under a fault profile (default medium). Writes the run folder (with report.json / report.html, failure modes
 * included) and prints the counts per mode.
 *
 *   npx tsx bench/results/failure-modes.ts [--tasks tasks] [--faults medium] [--concurrency 2] [--out /tmp/...]
 */
import { execSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { FAILURE_MODES } from '../../server/src/scoring/failure-modes.ts';
import { createReferenceAgent, noopAgent } from '../../server/src/runner/agents/reference.ts';
import { CHECK_FAULT_OPTIONS } from '../../server/src/runner/check.ts';
import { createRun } from '../../server/src/record/run-folder.ts';
import { executeRun, planRun } from '../../server/src/runner/run.ts';
import { defaultBackend } from '../../server/src/runner/sandbox.ts';
import { reportRun } from '../../server/src/scoring/report.ts';
import { collectTaskFiles } from '../../server/src/tasks/files.ts';
import { loadFaultProfile } from '../../server/src/record/faults.ts';
import { loadRunTasks, loadTasks } from '../../server/src/tasks/load.ts';

async function main() {
  const { values } = parseArgs({ options: { tasks: { type: 'string', default: 'tasks' }, faults: { type: 'string', default: 'medium' }, concurrency: { type: 'string', default: '2' }, seed: { type: 'string', default: '1' }, out: { type: 'string' } } });
  const registry = await loadRegistry();
  const tasks = loadTasks(collectTaskFiles([values.tasks!]), registry);
  const profile = loadFaultProfile(values.faults!, process.cwd());
  const seed = Number(values.seed);
  const runId = `noop-counterexamples-${values.faults}-${seed}`;
  const directory = join(values.out ?? mkdtempSync(join(tmpdir(), 'mcpbench-failure-modes-')), runId);
  const specs = [
    ...planRun(tasks, { agent: noopAgent, variants: () => ['noop'], trials: 1, profile, perturbation: 'none' }),
    ...planRun(tasks, { agent: createReferenceAgent(), variants: (task) => (task.counterexamples ?? []).map((_, i) => `counterexample:${i}`), trials: 1, profile, perturbation: 'none' }),
  ];
  const store = createRun(directory, { kind: 'run', run_id: runId, created_at: new Date().toISOString(), task_files: tasks.map((t) => t.file), tasks: tasks.map((t) => t.task.id), agent: 'noop+counterexamples', fault_profile: profile.name, perturbations: ['none'], trials: 1, seed, concurrency: Number(values.concurrency), sandbox: defaultBackend() });
  const config = store.config;
  const load = () => execSync('uptime').toString().trim();
  console.log(`${specs.length} episodes (${tasks.length} noop, ${specs.length - tasks.length} counterexamples) under ${profile.name} faults; load before: ${load()}`);
  const started = Date.now();
  await executeRun(specs, { store, concurrency: Number(values.concurrency), runId, registry, seed, backend: defaultBackend(), faultOptions: CHECK_FAULT_OPTIONS });
  console.log(`ran in ${((Date.now() - started) / 1000).toFixed(0)} s; load after: ${load()}`);
  const { report } = reportRun(directory, { registry, tasks: loadRunTasks(config) });
  const f = report.failures!;
  const passedWrongly = report.scores.episodes.passed;
  console.log(`run folder: ${directory}`);
  console.log(`failed episodes: ${f.failed} (passed: ${passedWrongly}, infra errors: ${report.scores.episodes.infra_errors})`);
  for (const mode of FAILURE_MODES) if (f.counts[mode]) console.log(`  ${mode.padEnd(22)} ${f.counts[mode]}`);
  const noop = f.episodes.filter((e) => e.variant === 'noop');
  const counter = f.episodes.filter((e) => e.variant !== 'noop');
  const share = (list: typeof f.episodes) => (list.length ? `${((100 * list.filter((e) => e.mode !== 'unknown').length) / list.length).toFixed(1)}% of ${list.length}` : 'n/a');
  console.log(`specific mode (not unknown): ${share(f.episodes)} overall; noop ${share(noop)}; counterexamples ${share(counter)}`);
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
