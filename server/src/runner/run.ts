/**
 * A run: a plan of episodes executed with bounded concurrency, each finished episode journaled before the
 * next starts on that worker, infrastructure failures retried, and a resumed run skipping what is recorded.
 */
import type { Registry } from '../mcp/registry.ts';
import { lintTask } from '../tasks/lint.ts';
import { canonicalHash } from '../tasks/hash.ts';
import type { Task } from '../tasks/model.ts';
import type { Diagnostic } from '../tasks/diagnostics.ts';
import { readText } from '../tasks/files.ts';
import type { Agent } from './agents/agent.ts';
import { EpisodeInterrupted, runEpisode, type EpisodeEnvironment, type EpisodeSpec } from './episode.ts';
import { episodeId, type Journal } from './journal.ts';
import type { EpisodeResult, FaultProfile } from './types.ts';

export interface LoadedTask {
  file: string;
  task: Task;
  hash: string;
}

export class TaskLoadError extends Error {
  constructor(
    message: string,
    readonly diagnostics: Diagnostic[],
  ) {
    super(message);
  }
}

/** Reads and lints task files; any lint error refuses the whole set before anything starts. */
export function loadTasks(files: string[], registry: Registry): LoadedTask[] {
  const loaded: LoadedTask[] = [];
  const errors: Diagnostic[] = [];
  for (const file of files) {
    const text = readText(file);
    const { diagnostics } = lintTask(file, text, registry);
    const fatal = diagnostics.filter((d) => d.severity === 'error');
    if (fatal.length) {
      errors.push(...fatal);
      continue;
    }
    const task = JSON.parse(text) as Task;
    loaded.push({ file, task, hash: canonicalHash(task) });
  }
  if (errors.length) throw new TaskLoadError(`${new Set(errors.map((e) => e.uri)).size} task file(s) have lint errors`, errors);
  const ids = new Map<string, string>();
  for (const { file, task } of loaded) {
    const other = ids.get(task.id);
    if (other) throw new TaskLoadError(`task id ${task.id} is used by both ${other} and ${file}`, []);
    ids.set(task.id, file);
  }
  return loaded;
}

export interface PlanOptions {
  agent: Agent;
  /** The sequences/variants per task (`reference:0` for the reference agent, the agent name otherwise). */
  variants: (task: Task) => string[];
  trials: number;
  profile: FaultProfile;
  perturbation: string;
  /** The goal shown for a task at this perturbation level. */
  goal?: (task: Task, trial: number) => string;
}

export function planRun(tasks: LoadedTask[], options: PlanOptions): EpisodeSpec[] {
  const specs: EpisodeSpec[] = [];
  for (const { task, hash } of tasks) {
    for (const variant of options.variants(task)) {
      for (let trial = 0; trial < options.trials; trial++) {
        specs.push({
          task,
          taskHash: hash,
          agent: options.agent,
          profile: options.profile,
          goal: options.goal?.(task, trial) ?? task.goal,
          key: { task_id: task.id, trial, variant, fault_profile: options.profile.name, perturbation: options.perturbation },
        });
      }
    }
  }
  return specs;
}

export interface ExecuteOptions extends EpisodeEnvironment {
  journal: Journal;
  concurrency: number;
  /** Further attempts of an episode that ended in an infrastructure error. */
  maxInfraRetries?: number;
}

/**
 * Runs the specs not yet in the journal (an infra_error record does not count as done), `concurrency` at a
 * time. Returns when all are done or the run was interrupted (then in-flight episodes are dropped, never
 * half-recorded).
 */
export async function executeRun(specs: EpisodeSpec[], options: ExecuteOptions): Promise<{ interrupted: boolean }> {
  const done = new Set(options.journal.results().filter((r) => r.status !== 'infra_error').map(episodeId));
  const queue = specs.filter((spec) => !done.has(episodeId(spec.key)));
  const maxInfraRetries = options.maxInfraRetries ?? 2;
  let interrupted = false;
  const worker = async () => {
    for (;;) {
      if (options.signal?.aborted) return;
      const spec = queue.shift();
      if (!spec) return;
      for (let attempt = 1; ; attempt++) {
        let result: EpisodeResult;
        try {
          result = await runEpisode(spec, options);
        } catch (error) {
          if (error instanceof EpisodeInterrupted || options.signal?.aborted) {
            interrupted = true;
            return;
          }
          throw error;
        }
        result.attempt = attempt;
        options.journal.append(result);
        options.onEvent?.({ type: 'episode-finished', run_id: options.runId, result });
        if (result.status !== 'infra_error' || attempt > maxInfraRetries) break;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, worker));
  return { interrupted: interrupted || Boolean(options.signal?.aborted) };
}
