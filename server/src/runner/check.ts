/**
 * `check`: the self-test every task passes before review. At no faults, the noop agent fails, every
 * reference solution passes and every counterexample fails; and the reference agent with retry passes when
 * it meets one fault of each recoverable type (a CascadingFailure costs 1 + 2 calls, so a task needs that
 * much room above its reference solution in `max_steps`). It also reports predicate coverage: which `any` branches and leaves passing
 * solutions witnessed.
 */
import type { Registry } from '../mcp/registry.ts';
import { predicateCoverage, type Coverage } from '../predicates/coverage.ts';
import { parsePredicate } from '../predicates/tree.ts';
import { createReferenceAgent, noopAgent } from './agents/reference.ts';
import type { EpisodeSpec } from './episode.ts';
import { decideFault, loadFaultProfile } from './faults.ts';
import { FAULT_PROFILES } from './faults.ts';
import { Journal, type RunConfig } from './journal.ts';
import { executeRun, type LoadedTask } from './run.ts';
import { underivableArguments } from './derivable.ts';
import { judgeMutants, planMutants, type MutationReport } from './mutants.ts';
import { firstAnswerLeaf, passingGuesses } from '../predicates/guesses.ts';
import type { SandboxBackend } from './sandbox.ts';
import { JsonDocument, type JsonPath, type Position } from '../tasks/document.ts';
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

export interface CheckPlanOptions {
  /** Mutation testing (`check --mutants`): also an episode per mutant of every reference solution. */
  mutants?: boolean;
}

export function planCheck(tasks: LoadedTask[], seed: number, registry: Registry, options: CheckPlanOptions = {}): EpisodeSpec[] {
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
    specs.push(spec(noopAgent, 'noop', NONE));
    task.reference_solutions.forEach((_, i) => specs.push(spec(reference, `reference:${i}`, NONE)));
    (task.counterexamples ?? []).forEach((_, i) => specs.push(spec(reference, `counterexample:${i}`, NONE)));
    const calls = (task.reference_solutions[0] ?? []).filter((step) => 'tool' in step).length;
    for (const type of RECOVERABLE_FAULTS) {
      const profile = probeProfile(type);
      specs.push(spec(robust, 'reference:0', profile, probeTrial(profile, seed, task.id, calls, task.max_steps)));
    }
  }
  if (options.mutants) specs.push(...planMutants(tasks, registry));
  return specs;
}

/** A finding of check with its stable code, as the linter's: what, how bad, and where in the task file. */
export interface CheckFinding {
  code: 'surviving-mutant' | 'guessable-answer' | 'underivable-argument';
  severity: 'error' | 'warning';
  message: string;
  /** Where in the task file it points (a JSON path), when it points somewhere. */
  path?: JsonPath;
  /** `surviving-mutant`: the mutant's id (its diff is in the task's mutation report). */
  mutant?: string;
  /** The same place as 0-based line/character positions, when the task's text was at hand. */
  start?: Position;
  end?: Position;
}

/** Places a finding's path in the task's text (the node's range), as the linter places its findings. */
function placed(finding: CheckFinding, document: JsonDocument | undefined): CheckFinding {
  const node = finding.path && document?.nodeAt(finding.path);
  if (!node || !document) return finding;
  return { ...finding, start: document.positionAt(node.offset), end: document.positionAt(node.offset + node.length) };
}

export interface TaskCheck {
  task_id: string;
  file: string;
  ok: boolean;
  problems: string[];
  coverage: Coverage;
  /** Fault type → whether the robust reference agent passed under it (undefined: not run). */
  faults: Partial<Record<FaultType, boolean>>;
  /** Findings with a code and a place; an error among them fails the task (its message is in `problems` too). */
  findings: CheckFinding[];
  /** With `--mutants`: every mutant's outcome and the task's mutation score. */
  mutation?: MutationReport;
}

/** Judges the check episodes of each task (the latest non-infra record per episode). */
export function judgeCheck(tasks: LoadedTask[], results: EpisodeResult[], registry: Registry, options: CheckPlanOptions = {}): TaskCheck[] {
  return tasks.map(({ task, file, text }) => {
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
    const findings: CheckFinding[] = [];
    const root = parsePredicate(task.success_predicate, ['success_predicate']);
    const firstPassing = passing.find((r) => r.verdict);
    if (firstPassing?.verdict) {
      const guesses = passingGuesses(task, registry, firstPassing.verdict);
      if (guesses.length) {
        const shown = guesses.slice(0, 3).map((g) => `${JSON.stringify(g.answer)} (${g.source})`).join(', ');
        findings.push({
          code: 'guessable-answer',
          severity: 'warning',
          message: `the answer can be guessed: ${shown}${guesses.length > 3 ? ` and ${guesses.length - 3} more` : ''} pass${guesses.length === 1 ? 'es' : ''} in place of the reference answer. Check a value only the data gives`,
          ...(firstAnswerLeaf(root, registry) ? { path: firstAnswerLeaf(root, registry)! } : {}),
        });
      }
    }
    for (const u of underivableArguments(task, registry, results)) {
      findings.push({
        code: 'underivable-argument',
        severity: 'warning',
        message: `the agent cannot know \`${u.unknown}\`${u.value !== undefined && u.value !== u.unknown ? ` (in \`${u.value}\`)` : ''}: it is not in the goal and no earlier call of reference solution ${u.solution + 1} returns it (step ${u.step + 1}). Name it in the goal, or add the call that finds it`,
        path: u.path,
      });
    }
    let mutation: MutationReport | undefined;
    if (options.mutants) {
      mutation = judgeMutants(task, results, registry);
      for (const m of mutation.mutants) {
        if (m.outcome === 'not-run') problems.push(`mutant ${m.id}: not run (infrastructure error)`);
        if (m.outcome !== 'survived') continue;
        const message = `surviving mutant ${m.id} (${m.description}): the predicate still passes, on a different end state. Tighten the predicate, or list it in \`equivalent_mutants\` with the reason it may pass`;
        findings.push({ code: 'surviving-mutant', severity: 'error', message, path: m.path, mutant: m.id });
        problems.push(message);
      }
    }
    const document = findings.length && text !== undefined ? new JsonDocument(file, text) : undefined;
    return { task_id: task.id, file, ok: problems.length === 0, problems, coverage, faults, findings: findings.map((f) => placed(f, document)), ...(mutation ? { mutation } : {}) };
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
  /** Mutation testing of the predicates (`check --mutants`). */
  mutants?: boolean;
  /** planCheck(tasks, seed, ...), when the caller has made it already (to size a progress bar). */
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
  const plan: CheckPlanOptions = options.mutants ? { mutants: true } : {};
  const specs = options.specs ?? planCheck(tasks, options.seed, options.registry, plan);
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
  return { checks: judgeCheck(tasks, journal.results(), options.registry, plan), interrupted: outcome.interrupted, journal };
}
