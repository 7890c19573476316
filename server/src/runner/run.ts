/**
 * A run: a plan of episodes executed with bounded concurrency, each finished episode appended to the run
 * record before the next starts on that worker, infrastructure failures retried, and a resumed run skipping
 * the work units already recorded. The session (session.ts) drives this.
 */
import type { Task } from '../tasks/model.ts';
import type { Agent } from './agents/agent.ts';
import { EpisodeInterrupted, EpisodePool, POOL_EXTRA, runEpisode, specWorkUnit, type EpisodeEnvironment, type EpisodeSpec } from './episode.ts';
import { type WritableRun } from '../record/run-folder.ts';
import type { FaultProfile } from '../record/faults.ts';
import type { EpisodeRecord, GoalPerturbation } from '../record/schema.ts';
import { finishedWorkUnits } from '../record/work-units.ts';
import type { LoadedTask } from '../tasks/load.ts';

/** The goal an episode shows its agent, and how it was made from the task's. */
export interface ShownGoal {
  goal: string;
  perturbed?: GoalPerturbation;
}

export interface PlanOptions {
  agent: Agent;
  /** The sequences/variants per task (`reference:0` for the reference agent, the agent name otherwise). */
  variants: (task: Task) => string[];
  trials: number;
  profile: FaultProfile;
  /**
   * The perturbation level, or several: every (task, variant, trial) is planned once per level, each level
   * in the episode key, so one run fills the perturbation axis of the reliability surface.
   */
  perturbation: string | readonly string[];
  /** The goal shown for a task at a perturbation level in a trial (default: the task's own goal). */
  goal?: (task: Task, trial: number, perturbation: string) => string | ShownGoal;
}

export function planRun(tasks: LoadedTask[], options: PlanOptions): EpisodeSpec[] {
  const levels = typeof options.perturbation === 'string' ? [options.perturbation] : [...options.perturbation];
  const specs: EpisodeSpec[] = [];
  for (const { task, hash } of tasks) {
    for (const perturbation of levels) {
      for (const variant of options.variants(task)) {
        for (let trial = 0; trial < options.trials; trial++) {
          const shown = options.goal?.(task, trial, perturbation) ?? task.goal;
          const { goal, perturbed } = typeof shown === 'string' ? { goal: shown, perturbed: undefined } : shown;
          specs.push({
            task,
            taskHash: hash,
            agent: options.agent,
            profile: options.profile,
            goal,
            ...(perturbed ? { perturbed } : {}),
            key: { task_id: task.id, trial, variant, fault_profile: options.profile.name, perturbation },
          });
        }
      }
    }
  }
  return specs;
}

/** The specs a run still has to do: those whose work unit has no scored record yet (resume). */
export function pendingSpecs(specs: readonly EpisodeSpec[], records: readonly Pick<EpisodeRecord, 'work_unit' | 'status'>[], seed: number): EpisodeSpec[] {
  const done = finishedWorkUnits(records);
  return specs.filter((spec) => !done.has(specWorkUnit(spec, seed)));
}

export interface ExecuteOptions extends EpisodeEnvironment {
  store: WritableRun;
  concurrency: number;
  /** Further attempts of an episode that ended in an infrastructure error. */
  maxInfraRetries?: number;
  /** No new episode starts once the recorded episodes cost this much (episodes under way finish). */
  maxCost?: number;
}

/** Why a run stopped before its plan was done, other than an interruption. */
export interface CostBudgetStop {
  /** What the recorded episodes cost (every attempt), in the price file's currency. */
  spent: number;
  max: number;
  /** Planned episodes never started. */
  not_started: number;
}

/** What the recorded episodes of a run cost: every attempt, infrastructure errors included (it was spent). */
export function runCost(records: readonly Pick<EpisodeRecord, 'model'>[]): number {
  return records.reduce((sum, r) => sum + (r.model?.cost ?? 0), 0);
}

/**
 * What runs a run's episodes: in this process (`executeRun`, the default), or on queue workers (the queue's
 * coordinator, queue/coordinator.ts). Either appends each finished episode to `options.store` and emits its
 * `episode-finished`, skips the work units already recorded, retries infrastructure errors, and returns when
 * every spec is recorded or the run was interrupted.
 */
export type Executor = (specs: EpisodeSpec[], options: ExecuteOptions) => Promise<{ interrupted: boolean; costBudget?: CostBudgetStop }>;

/**
 * Runs the specs not yet recorded (an infra_error record does not count as done), `concurrency` at a time.
 * Returns when all are done or the run was interrupted (then in-flight episodes are dropped, never
 * half-recorded). An interruption that comes when every episode is already recorded cut nothing short: the
 * run is complete, not interrupted.
 */

export const executeRun: Executor = async (specs, options) => {
  const queue = pendingSpecs(specs, options.store.episodes, options.seed);
  const maxInfraRetries = options.maxInfraRetries ?? 2;
  let interrupted = false;
  let spent = runCost(options.store.episodes);
  let overBudget = false;
  // Each episode's servers start while the episodes before it run: `concurrency + 2` episodes ahead. A start
  // (~130 ms) outlasts a simulated episode's own work (~40 ms), so one ahead per worker still leaves each
  // waiting; two more keep a start ready (bench/run at concurrency 1: 81% of episode time outside the servers'
  // work with one ahead, 64% with three), for ~35 MiB per idle server.
  const pool = options.plain ? undefined : new EpisodePool(options, Math.max(1, options.concurrency) + POOL_EXTRA);
  const worker = async () => {
    for (;;) {
      if (options.signal?.aborted) return;
      if (options.maxCost !== undefined && spent >= options.maxCost) {
        overBudget = true;
        return;
      }
      const spec = queue.shift();
      if (!spec) return;
      const prepared = pool?.take(spec);
      pool?.fill(queue);
      for (let attempt = 1; ; attempt++) {
        // A retry of an infrastructure error is work still to do: after an interruption it waits for --resume.
        if (attempt > 1 && options.signal?.aborted) {
          interrupted = true;
          return;
        }
        let result: EpisodeRecord;
        try {
          // A retry starts fresh servers of its own.
          result = await runEpisode(spec, options, attempt === 1 ? prepared : undefined);
        } catch (error) {
          if (error instanceof EpisodeInterrupted || options.signal?.aborted) {
            interrupted = true;
            return;
          }
          throw error;
        }
        result.attempt = attempt;
        options.store.append(result);
        spent += result.model?.cost ?? 0;
        options.onEvent?.({ type: 'episode-finished', run_id: options.runId, result });
        if (result.status !== 'infra_error' || attempt > maxInfraRetries) break;
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, worker));
  } finally {
    await pool?.drain();
  }
  // A stop after the last episode finished is no interruption: the run is complete.
  const stopped = interrupted || (Boolean(options.signal?.aborted) && queue.length > 0);
  const costBudget = overBudget && !stopped && queue.length > 0 && options.maxCost !== undefined ? { spent, max: options.maxCost, not_started: queue.length } : undefined;
  return { interrupted: stopped, ...(costBudget ? { costBudget } : {}) };
};
