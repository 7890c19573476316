/**
 * `check`: the self-test every task passes before review. At no faults, the noop agent fails, every
 * reference solution passes and every counterexample fails; and the reference agent with retry passes when
 * it meets one fault of each recoverable type (a CascadingFailure costs 1 + 2 calls, so a task needs that
 * much room above its reference solution in `max_steps`). It also reports predicate coverage: which `any` branches and leaves passing
 * solutions witnessed.
 */
import { counterexampleVariant, NOOP_VARIANT, referenceVariant } from './check-variants.ts';
import type { Registry } from '../mcp/registry.ts';
import { predicateCoverage, type Coverage } from '../predicates/coverage.ts';
import { parsePredicate } from '../predicates/tree.ts';
import { createReferenceAgent, noopAgent } from './agents/reference.ts';
import type { EpisodeSpec } from './episode.ts';
import { decideFault, loadFaultProfile } from './faults.ts';
import { FAULT_PROFILES } from './faults.ts';
import { Journal, type RunConfig } from './journal.ts';
import { executeRun, type LoadedTask } from './run.ts';
import type { SandboxBackend } from './sandbox.ts';
import { FAULT_TYPES, RECOVERABLE, type EpisodeResult, type FaultProfile, type FaultType, type RunEvent } from './types.ts';

export const RECOVERABLE_FAULTS = FAULT_TYPES.filter((type) => RECOVERABLE[type]);

/** Fault timings for check: the same behaviour as a run, a few times faster. */
export const CHECK_FAULT_OPTIONS = { timeoutMs: 200, latencyMs: 100, retryAfterMs: 150 };

const NONE: FaultProfile = { ...FAULT_PROFILES.none, name: 'none' };

function probeProfile(type: FaultType): FaultProfile {
  return loadFaultProfile(`${type}-only`, process.cwd());
}

/**
 * The trial at which the probe meets exactly one fault in the whole budget, and on one of the reference
 * solution's own calls: the self-test asks "does the task survive one fault of this type", and a trial that
 * stacks several faults would ask something else. Decisions depend on seed, task, trial and call index only,
 * so the search is deterministic.
 */
export function probeTrial(profile: FaultProfile, seed: number, taskId: string, calls: number, maxSteps: number): number {
  for (let trial = 0; trial < 1000; trial++) {
    const faulted: number[] = [];
    for (let callIndex = 0; callIndex < Math.max(maxSteps, calls); callIndex++) {
      if (decideFault(profile, { seed, taskId, trial, callIndex })) faulted.push(callIndex);
    }
    if (faulted.length === 1 && faulted[0]! < Math.max(1, calls)) return trial;
  }
  return 0;
}

export function planCheck(tasks: LoadedTask[], seed: number): EpisodeSpec[] {
  const reference = createReferenceAgent();
  const robust = createReferenceAgent({ retry: true, backoffMs: 50 });
  const specs: EpisodeSpec[] = [];
  for (const { task, hash } of tasks) {
    const spec = (agent: typeof reference, variant: string, profile: FaultProfile, trial = 0): EpisodeSpec => ({
      task,
      taskHash: hash,
      agent,
      profile,
      goal: task.goal,
      key: { task_id: task.id, trial, variant, fault_profile: profile.name, perturbation: 'none' },
    });
    specs.push(spec(noopAgent, NOOP_VARIANT, NONE));
    task.reference_solutions.forEach((_, i) => specs.push(spec(reference, referenceVariant(i), NONE)));
    (task.counterexamples ?? []).forEach((_, i) => specs.push(spec(reference, counterexampleVariant(i), NONE)));
    const calls = (task.reference_solutions[0] ?? []).filter((step) => 'tool' in step).length;
    for (const type of RECOVERABLE_FAULTS) {
      const profile = probeProfile(type);
      specs.push(spec(robust, referenceVariant(0), profile, probeTrial(profile, seed, task.id, calls, task.max_steps)));
    }
  }
  return specs;
}

export interface TaskCheck {
  task_id: string;
  file: string;
  ok: boolean;
  problems: string[];
  coverage: Coverage;
  /** Fault type → whether the robust reference agent passed under it (undefined: not run). */
  faults: Partial<Record<FaultType, boolean>>;
}

/** Judges the check episodes of each task (the latest non-infra record per episode). */
export function judgeCheck(tasks: LoadedTask[], results: EpisodeResult[]): TaskCheck[] {
  return tasks.map(({ task, file }) => {
    const mine = new Map<string, EpisodeResult>();
    for (const r of results) if (r.task_id === task.id && r.status !== 'infra_error') mine.set(`${r.variant}|${r.fault_profile}`, r);
    const problems: string[] = [];
    const get = (variant: string, profile: string) => mine.get(`${variant}|${profile}`);
    const noop = get('noop', 'none');
    if (!noop) problems.push('noop: not run (infrastructure error)');
    else if (noop.passed) problems.push('noop passes: the task is broken (its predicate holds without any action)');
    const passing: EpisodeResult[] = [];
    task.reference_solutions.forEach((_, i) => {
      const r = get(`reference:${i}`, 'none');
      if (!r) problems.push(`reference solution ${i + 1}: not run (infrastructure error)`);
      else if (!r.passed) problems.push(`reference solution ${i + 1} fails${r.budget_exceeded ? ' (over max_steps)' : ''}${r.agent_error ? `: ${r.agent_error}` : ''}`);
      else passing.push(r);
    });
    (task.counterexamples ?? []).forEach((_, i) => {
      const r = get(`counterexample:${i}`, 'none');
      if (!r) problems.push(`counterexample ${i + 1}: not run (infrastructure error)`);
      else if (r.passed) problems.push(`counterexample ${i + 1} passes: the predicate is not specific enough`);
    });
    const faults: Partial<Record<FaultType, boolean>> = {};
    for (const type of RECOVERABLE_FAULTS) {
      const r = get('reference:0', `${type}-only`) ?? [...mine.values()].find((x) => x.variant === 'reference:0' && x.fault_profile.startsWith(type));
      if (!r) continue;
      faults[type] = r.passed;
      if (!r.passed) problems.push(`reference solution 1 with retry fails under ${type}${r.budget_exceeded ? ' (retries went over max_steps)' : ''}`);
    }
    const coverage = predicateCoverage(
      parsePredicate(task.success_predicate, ['success_predicate']),
      passing.flatMap((r) => (r.verdict ? [r.verdict] : [])),
    );
    if (coverage.paths.covered < coverage.paths.total) {
      const missing = coverage.items.filter((i) => i.kind === 'branch' && !i.witnessed).map((i) => i.label);
      problems.push(`${coverage.paths.total - coverage.paths.covered} solution path(s) no reference solution witnesses: ${missing.join(', ')}`);
    }
    return { task_id: task.id, file, ok: problems.length === 0, problems, coverage, faults };
  });
}

export interface CheckRunOptions {
  /** The run folder the journal goes into (created). */
  directory: string;
  runId: string;
  registry: Registry;
  seed: number;
  concurrency: number;
  backend: SandboxBackend;
  version: string;
  signal?: AbortSignal;
  onEvent?: (event: RunEvent) => void;
  /** planCheck(tasks, seed), when the caller has made it already (to size a progress bar). */
  specs?: EpisodeSpec[];
}

/**
 * The whole self-test of a set of tasks, journaled like any run: plans the check episodes, runs them under
 * the check's fault timings, and judges each task. `mcpbench check` and `generate --check` both run this.
 */
export async function runCheck(tasks: LoadedTask[], options: CheckRunOptions): Promise<{ checks: TaskCheck[]; interrupted: boolean; journal: Journal }> {
  const config: RunConfig = {
    run_id: options.runId,
    created_at: new Date().toISOString(),
    task_files: tasks.map((t) => t.file),
    tasks: tasks.map((t) => t.task.id),
    agent: 'check',
    fault_profile: 'check',
    perturbation: 'none',
    trials: 1,
    seed: options.seed,
    concurrency: options.concurrency,
    sandbox: options.backend,
    version: options.version,
  } as RunConfig;
  const journal = Journal.create(options.directory, config);
  const specs = options.specs ?? planCheck(tasks, options.seed);
  options.onEvent?.({ type: 'run-started', run_id: options.runId, tasks: config.tasks, episodes: specs.length, agent: 'check', fault_profile: 'check', seed: options.seed });
  const outcome = await executeRun(specs, {
    journal,
    concurrency: options.concurrency,
    runId: options.runId,
    registry: options.registry,
    seed: options.seed,
    backend: options.backend,
    faultOptions: CHECK_FAULT_OPTIONS,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onEvent ? { onEvent: options.onEvent } : {}),
  });
  return { checks: judgeCheck(tasks, journal.results()), interrupted: outcome.interrupted, journal };
}
