/**
 * A run session: `startRun(options)` starts (or resumes) a run or a check and returns its stream of typed
 * RunEvents, ending with `run-finished`. It owns everything between the user's options and the episodes: the
 * tasks (files, folders, sealed sets), the agent from the agent registry, the fault profile, the plan
 * (tasks x perturbation levels x variants x trials), goal perturbation and paraphrase scheduling, the run
 * record (create, or resume: damaged lines quarantined, leftover sandboxes removed), the episodes under the
 * run's cost budget, and at the end the scores and report (run) or the verdicts and checks.json (check). The CLI maps argv onto options and
 * events onto a reporter; the editor reads the same events as `--reporter jsonl` lines.
 */
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import type { Registry } from '../mcp/registry.ts';
import { isPerturbationLevel, paraphrasedGoal, shownGoal, type ParaphraseEndpoint, type PerturbationLevel, type ShownGoal } from '../runner/perturb.ts';
import { readTaskSources, type SealKey } from '../tasks/seal.ts';
import { writeReport } from '../scoring/report.ts';
import { deriveRun, episodeDiagnoser, type Diagnoser } from '../scoring/derive.ts';
import { agentVariants, createAgent, prepareAgent, type AgentSetting } from '../runner/agents/registry.ts';
import { CHECK_FAULT_OPTIONS, judgeCheck, planCheck } from '../runner/check.ts';
import { removeLeftoverSandboxes, specWorkUnit, type EpisodeSpec } from '../runner/episode.ts';
import { commonSetupFailure, planRecord, runCompleteness } from '../record/work-units.ts';
import { executeRun, pendingSpecs, planRun, type Executor } from '../runner/run.ts';
import type { Agent } from '../runner/agents/agent.ts';
import type { SandboxBackend } from '../runner/sandbox.ts';
import { createRun, EPISODES_FILE, openRun, resumeRun, type WritableRun } from '../record/run-folder.ts';
import { FolderLockError, lockFolder, type FolderLock } from '../folder-lock.ts';
import type { RunEvent, RunFinished } from './protocol.ts';
import { FAULT_PROFILES, loadFaultProfile, type FaultOptions } from '../record/faults.ts';
import type { CheckRecord, EpisodeRecord, NewRunRecord, RunRecord } from '../record/schema.ts';
import { loadTaskSources, type LoadedTask } from '../tasks/load.ts';
import { McpbenchError } from '../errors.ts';

/** Task files, folders and sealed sets (`*.sealed.json`, `x.sealed.json#tasks/a.json`), or tasks already loaded. */
export type TaskInput = readonly string[] | readonly LoadedTask[];

interface SessionCommon {
  registry: Registry;
  /** Where relative task paths and fault-profile files resolve. */
  cwd: string;
  backend: SandboxBackend;
  /** Episodes at a time. */
  concurrency: number;
  /** Aborting stops the run: in-flight episodes are dropped, finished ones are kept; `run-finished` says interrupted. */
  signal?: AbortSignal;
  /** Where agents and the paraphraser read keys and endpoint defaults (default: process.env). */
  env?: Record<string, string | undefined>;
  /** The key of sealed sets (default: MCPBENCH_SET_KEY). */
  setKey?: () => SealKey | string;
  /** The mcpbench version, recorded in run.json. */
  version?: string;
  /** Further attempts of an episode that ended in an infrastructure error (default 2). */
  maxInfraRetries?: number;
  startTimeoutMs?: number;
  callTimeoutMs?: number;
  /** What runs a run's episodes: in this process (default), or a queue's coordinator (queue/coordinator.ts). A check runs in process. */
  executor?: Executor;
}

export interface RunOptions extends SessionCommon {
  mode: 'run';
  tasks: TaskInput;
  /** The run folder (created); default `<out>/<run id>`. */
  directory?: string;
  /** Where run folders go (default `<cwd>/runs`). */
  out?: string;
  runId?: string;
  /**
   * An agent of the registry (agents/registry.ts) and its options as the user gave them (the descriptor
   * prepares what run.json records: a model agent resolves its settings from them, a profile file and the
   * environment).
   */
  agent: string;
  agentOptions?: Record<string, unknown>;
  /** The run's cost budget, in the price file's currency: no new episode once it is reached (a priced agent only). */
  maxCost?: number;
  /** `none` | `light` | `medium` | `heavy` | `<type>-only` | a profile file. */
  faults?: string;
  /** Overrides the profile's failure rate. */
  faultRate?: number;
  /** Each level is run over every (task, variant, trial) (default: none). */
  perturbations?: readonly string[];
  /** Paraphrase heavy-level goals through this OpenAI-compatible endpoint (key from the environment). */
  paraphrase?: { baseUrl: string; model: string };
  trials?: number;
  seed?: number;
  /** Write report.json, junit.xml and report.html when the run finishes uninterrupted (default true). */
  report?: boolean;
  /** The task set measured and its month, recorded in run.json for the results database. */
  set?: { name: string; month?: string };
}

export interface ResumeOptions extends SessionCommon {
  mode: 'resume';
  /** The run folder of an interrupted run or check. */
  directory: string;
  report?: boolean;
  /** A new cost budget (a run stopped by its budget goes on under a higher one); recorded in run.json. */
  maxCost?: number;
}

export interface CheckOptions extends SessionCommon {
  mode: 'check';
  tasks: TaskInput;
  directory?: string;
  out?: string;
  runId?: string;
  /** Seed of the fault probes (default 1). */
  seed?: number;
  /** Mutation testing of the predicates (`check --mutants`): an episode per mutant of every reference solution. */
  mutants?: boolean;
  /** Shortcut agents and shotgun guesses (`check --shortcuts`): answers and writes that must not pass. */
  shortcuts?: boolean;
}

export type SessionOptions = RunOptions | ResumeOptions | CheckOptions;

/** Options that cannot make a run (a paraphrase without the heavy level ...); the CLI reports them as usage errors. */
export class SessionError extends McpbenchError {
  static override readonly code: string = 'session';
}

/** `run-YYYYMMDD-HHMMSS-<6 hex>`: sorts by start time. */
export function newRunId(prefix = 'run'): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '-');
  return `${prefix}-${stamp}-${randomBytes(3).toString('hex')}`;
}

/**
 * Starts the session when iteration begins; events arrive in order and the last is `run-finished`. Errors
 * that prevent a run (tasks with lint errors, a wrong set key, unknown agent or profile, a folder that is not
 * a run) are thrown by the iteration before any event. Leaving the loop early stops the run.
 */
export function startRun(options: SessionOptions): AsyncIterable<RunEvent> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<RunEvent> {
      const queue: RunEvent[] = [];
      let wake: (() => void) | undefined;
      let settled = false;
      let failure: { error: unknown } | undefined;
      const stop = new AbortController();
      const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
      const work = runSession({ ...options, signal }, (event) => {
        queue.push(event);
        wake?.();
      }).then(
        () => undefined,
        (error: unknown) => void (failure = { error }),
      ).finally(() => {
        settled = true;
        wake?.();
      });
      return {
        async next(): Promise<IteratorResult<RunEvent>> {
          for (;;) {
            const event = queue.shift();
            if (event) return { value: event, done: false };
            if (settled) {
              if (failure) {
                const { error } = failure;
                failure = undefined;
                throw error;
              }
              return { value: undefined, done: true };
            }
            await new Promise<void>((resolve) => (wake = resolve));
            wake = undefined;
          }
        },
        async return(): Promise<IteratorResult<RunEvent>> {
          stop.abort(new Error('the session was left'));
          await work;
          return { value: undefined, done: true };
        },
      };
    },
  };
}

/** Runs a session to its end and returns how it finished (events go to `onEvent`). */
export async function runToEnd(options: SessionOptions, onEvent: (event: RunEvent) => void = () => undefined): Promise<RunFinished> {
  let finished: RunFinished | undefined;
  for await (const event of startRun(options)) {
    onEvent(event);
    if (event.type === 'run-finished') finished = event;
  }
  if (!finished) throw new Error('the session ended without run-finished');
  return finished;
}

/** A check of tasks already loaded, into `directory` (what `generate --check` does for a batch). */
export async function runCheck(
  tasks: readonly LoadedTask[],
  options: Omit<CheckOptions, 'mode' | 'tasks'>,
  onEvent?: (event: RunEvent) => void,
): Promise<{ checks: CheckRecord[]; interrupted: boolean; directory: string }> {
  const finished = await runToEnd({ ...options, mode: 'check', tasks }, onEvent);
  if (finished.kind !== 'check') throw new Error('a check session finished as a run');
  return { checks: finished.checks, interrupted: finished.interrupted, directory: finished.directory };
}

// ---------------------------------------------------------------------------------------------------------

type Emit = (event: RunEvent) => void;

/** The loaded tasks by canonical hash: what each episode's failure is classified against. */
const byHash = (tasks: readonly LoadedTask[]) => new Map(tasks.map((t) => [t.hash, t.task]));

/** A finished episode's event carries its failure mode (`failure`: null unless it failed). */
function withFailureModes(emit: Emit, diagnose: Diagnoser): Emit {
  return (event) => emit(event.type === 'episode-finished' ? { ...event, failure: diagnose(event.result) } : event);
}

function loadInput(input: TaskInput, options: SessionCommon): LoadedTask[] {
  if (input.length === 0) return [];
  if (typeof input[0] !== 'string') return [...(input as readonly LoadedTask[])];
  const paths = (input as readonly string[]).map((path) => (path.includes('#') ? path : resolve(options.cwd, path)));
  return loadTaskSources(options.setKey ? readTaskSources(paths, options.setKey) : readTaskSources(paths), options.registry);
}

/** A profile file is recorded by its absolute path, so a resumed run finds it from anywhere. */
function faultSpec(spec: string, cwd: string): string {
  return spec in FAULT_PROFILES || (spec.endsWith('-only') && !spec.includes('/') && !spec.includes('\\')) ? spec : resolve(cwd, spec);
}

function levelsOf(levels: readonly string[]): PerturbationLevel[] {
  const wrong = levels.filter((level) => !isPerturbationLevel(level));
  if (levels.length === 0 || wrong.length) throw new SessionError(`unknown perturbation level(s) ${wrong.join(', ') || '(none given)'}: use none, light, medium, heavy`);
  return [...new Set(levels as PerturbationLevel[])];
}

/** The run folders a session holds (one writer per run folder), released when it ends. */
type HeldLocks = FolderLock[];

/** Takes the lock of a run folder: a second coordinator or resume of the same folder is refused with who holds it. */
async function lockRunFolder(directory: string, held: HeldLocks): Promise<void> {
  try {
    held.push(await lockFolder(directory, { purpose: 'mcpbench run' }));
  } catch (error) {
    if (error instanceof FolderLockError) throw new SessionError(`the run folder ${error.message}`);
    throw error;
  }
}

async function runSession(options: SessionOptions, emit: Emit): Promise<void> {
  const held: HeldLocks = [];
  try {
    await lockedSession(options, emit, held);
  } finally {
    for (const lock of held) await lock.release();
  }
}

async function lockedSession(options: SessionOptions, emit: Emit, held: HeldLocks): Promise<void> {
  if (options.mode === 'check') return checkSession(options, emit, held);
  let store: WritableRun;
  let tasks: LoadedTask[];
  if (options.mode === 'resume') {
    const directory = resolve(options.cwd, options.directory);
    await lockRunFolder(directory, held);
    const resumed = resumeRun(directory);
    store = resumed;
    tasks = loadInput(store.config.task_files, options);
    const moved = resumed.moved.length;
    const runId = store.config.run_id;
    if (moved) emit({ type: 'notice', run_id: runId, level: 'warning', message: `${moved} damaged line(s) of ${join(store.directory, EPISODES_FILE)} moved to the quarantine file; their work units run again` });
    // A queued run's sandboxes are its workers' (on this machine too, they may be running): never removed here.
    const removed = options.executor && store.config.kind === 'run' ? 0 : removeLeftoverSandboxes(runId);
    if (removed) emit({ type: 'notice', run_id: runId, level: 'info', message: `removed ${removed} sandbox folder(s) the interrupted run left behind` });
    if (store.config.kind === 'check') return executeCheck(store, tasks, options, emit);
    if (options.maxCost !== undefined && options.maxCost !== store.config.max_cost) store.updateRecord({ max_cost: options.maxCost });
  } else {
    tasks = loadInput(options.tasks, options);
    const levels = levelsOf(options.perturbations ?? ['none']);
    if (options.paraphrase && !levels.includes('heavy')) throw new SessionError(`a paraphrase rewrites heavy-level goals: add heavy to the perturbation levels (now ${levels.join(',')})`);
    const runId = options.runId ?? newRunId();
    const seed = options.seed ?? 1;
    const setting = agentSetting(options, tasks, runDirectoryOf(options, runId));
    const prepared = prepareAgent(options.agent, options.agentOptions ?? {}, { ...setting, cwd: options.cwd, seed });
    // The agent is created once here to check its options before anything is written.
    const created = createAgent(options.agent, prepared.options, setting);
    if (options.maxCost !== undefined) checkCostBudget(created.agent);
    for (const message of prepared.warnings) emit({ type: 'notice', run_id: runId, level: 'warning', message });
    const warnings = [...new Set([...prepared.warnings, ...created.warnings])];
    const faults = faultSpec(options.faults ?? 'none', options.cwd);
    loadFaultProfile(faults, options.cwd, options.faultRate === undefined ? {} : { rate: options.faultRate });
    store = await createRunFolder(options, runId, tasks, held, {
      kind: 'run',
      agent: options.agent,
      agent_options: created.options,
      ...(options.maxCost !== undefined ? { max_cost: options.maxCost } : {}),
      fault_profile: faults,
      ...(options.faultRate !== undefined ? { fault_rate: options.faultRate } : {}),
      perturbations: levels,
      ...(options.paraphrase ? { paraphrase: { baseUrl: options.paraphrase.baseUrl, model: options.paraphrase.model } } : {}),
      trials: options.trials ?? 1,
      seed,
      ...(warnings.length ? { warnings } : {}),
      ...(options.set ? { set: options.set } : {}),
    });
  }
  await executeAgentRun(store, tasks, options, emit);
}

async function executeAgentRun(store: WritableRun, tasks: LoadedTask[], options: RunOptions | ResumeOptions, emit: Emit): Promise<void> {
  const { agent, descriptor, warnings } = createAgent(store.config.agent, store.config.agent_options, agentSetting(options, tasks, store.directory));
  for (const message of warnings) emit({ type: 'notice', run_id: store.config.run_id, level: 'warning', message });
  // A resumed run set up in another way than it started (another backend, say) records what it was warned of.
  const recorded = store.config.warnings ?? [];
  const added = warnings.filter((message) => !recorded.includes(message));
  if (added.length) store.updateRecord({ warnings: [...recorded, ...added] });
  const config: RunRecord = store.config;
  const env = options.env ?? process.env;
  if (config.max_cost !== undefined) checkCostBudget(agent);
  const profile = loadFaultProfile(config.fault_profile, options.cwd, config.fault_rate === undefined ? {} : { rate: config.fault_rate });
  const levels = levelsOf(config.perturbations);
  // The goal of each (task, level, trial) is fixed by the seed: the same run seed shows the same goals, and the
  // fault decisions (seed, task, trial, call) are the same at every level, so levels differ in the goal only.
  const specs = planRun(tasks, {
    agent,
    variants: (task) => agentVariants(descriptor, agent, task),
    trials: config.trials,
    profile,
    perturbation: levels,
    goal: (task, trial, level) => shownGoal(task, level as PerturbationLevel, config.seed, trial),
  });
  recordPlan(store, specs);
  const pending = pendingSpecs(specs, store.episodes, config.seed);
  if (config.paraphrase) {
    const apiKey = nonEmpty(env.MCPBENCH_PARAPHRASE_API_KEY) ?? nonEmpty(env.OPENAI_API_KEY);
    await paraphraseGoals(pending, { ...config.paraphrase, ...(apiKey ? { apiKey } : {}) }, config, emit);
  }
  emit(runStarted(store, specs, pending, agent.name, profile.name));
  const diagnose = episodeDiagnoser(byHash(tasks), options.registry);
  const { interrupted, costBudget } = await (options.executor ?? executeRun)(pending, {
    ...environment(options, config),
    store,
    keepEndState: (hash, states) => store.keepEndState(hash, states),
    onEvent: withFailureModes(emit, diagnose),
    ...(config.max_cost !== undefined ? { maxCost: config.max_cost } : {}),
  });
  // The run's numbers, derived once from its folder as every reader reads it (the report's and the event's).
  const read = openRun(store.directory);
  const derived = deriveRun(read, { diagnose });
  const standing = runCompleteness(read.config, read.episodes);
  const setupFailure = commonSetupFailure(read.episodes);
  const { scores } = derived;
  const report = (options.report ?? true) && !interrupted ? writeReport(store.directory, derived, { tasks: byHash(tasks) }).files : undefined;
  const stopped = costBudget ? { reason: 'cost-budget' as const, ...costBudget, ...(agent.costCurrency ? { currency: agent.costCurrency } : {}) } : undefined;
  emit({ type: 'run-finished', kind: 'run', run_id: config.run_id, directory: store.directory, interrupted, scores, ...(report ? { report } : {}), ...(stopped ? { stopped } : {}), standing, ...(setupFailure ? { setup_failure: setupFailure } : {}) });
}

/** run.json records the plan (unit count, fingerprint) the run was started or resumed with. */
function recordPlan(store: WritableRun, specs: readonly EpisodeSpec[]): void {
  const plan = planRecord(specs.map((spec) => specWorkUnit(spec, store.config.seed)));
  if (store.config.plan?.fingerprint !== plan.fingerprint || store.config.plan.units !== plan.units) store.updateRecord({ plan });
}

/** A cost budget needs an agent whose spending is priced. */
function checkCostBudget(agent: Agent): void {
  if (agent.costCurrency) return;
  throw new SessionError(
    `a cost budget counts what a model agent spends at its model's price: use a model agent (openai, anthropic) with a price file that has its model (the ${agent.name} agent's spending is not priced)`,
  );
}

/** What creating the run's agent needs besides its options: the environment, the folder, backend and tasks of the run. */
function agentSetting(options: RunOptions | ResumeOptions, tasks: readonly LoadedTask[], runDirectory: string): AgentSetting {
  const sources = options.mode === 'run' && typeof options.tasks[0] === 'string' ? (options.tasks as readonly string[]).map((path) => resolve(options.cwd, path)) : [];
  return { env: options.env ?? process.env, cwd: options.cwd, backend: options.backend, taskFiles: tasks.map((t) => t.file), taskSources: sources, runDirectory };
}

/** Where a new run's folder goes: `directory`, or `<out>/<run id>`. */
function runDirectoryOf(options: RunOptions | CheckOptions, runId: string): string {
  return options.directory ? resolve(options.cwd, options.directory) : join(resolve(options.cwd, options.out ?? 'runs'), runId);
}

/** A new run folder (`directory`, or `<out>/<run id>`) and its run.json: the options' part, then the run's own. */
async function createRunFolder(
  options: RunOptions | CheckOptions,
  runId: string,
  tasks: readonly LoadedTask[],
  held: HeldLocks,
  own: Omit<NewRunRecord, 'run_id' | 'created_at' | 'mcpbench_version' | 'task_files' | 'tasks' | 'concurrency' | 'sandbox'>,
): Promise<WritableRun> {
  const directory = runDirectoryOf(options, runId);
  await lockRunFolder(directory, held);
  return createRun(directory, {
    run_id: runId,
    created_at: new Date().toISOString(),
    ...(options.version ? { mcpbench_version: options.version } : {}),
    task_files: tasks.map((t) => t.file),
    tasks: tasks.map((t) => t.task.id),
    concurrency: options.concurrency,
    sandbox: options.backend,
    ...own,
  });
}

function runStarted(store: WritableRun, specs: readonly EpisodeSpec[], pending: readonly EpisodeSpec[], agent: string, faultProfile: string): RunEvent {
  const { config } = store;
  return {
    type: 'run-started',
    kind: config.kind,
    run_id: config.run_id,
    directory: store.directory,
    tasks: config.tasks,
    episodes: specs.length,
    recorded: specs.length - pending.length,
    agent,
    fault_profile: faultProfile,
    seed: config.seed,
  };
}

function environment(options: SessionCommon, config: RunRecord, faultOptions?: Partial<FaultOptions>) {
  return {
    concurrency: options.concurrency,
    runId: config.run_id,
    registry: options.registry,
    seed: config.seed,
    backend: options.backend,
    ...(faultOptions ? { faultOptions } : {}),
    ...(options.maxInfraRetries !== undefined ? { maxInfraRetries: options.maxInfraRetries } : {}),
    ...(options.startTimeoutMs !== undefined ? { startTimeoutMs: options.startTimeoutMs } : {}),
    ...(options.callTimeoutMs !== undefined ? { callTimeoutMs: options.callTimeoutMs } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  };
}

const nonEmpty = (value: string | undefined) => (value && value.trim() ? value.trim() : undefined);

/**
 * Replaces the goals of the episodes still to run at a paraphrasing level with their paraphrase, asking the
 * endpoint once per (task, level, trial) (the variants of one trial share it). Episodes already recorded
 * keep the goal they were run with.
 */
async function paraphraseGoals(specs: EpisodeSpec[], endpoint: ParaphraseEndpoint, config: RunRecord, emit: Emit): Promise<void> {
  const cache = new Map<string, Promise<ShownGoal>>();
  let asked = 0;
  const refused: string[] = [];
  for (const spec of specs) {
    const level = spec.key.perturbation as PerturbationLevel;
    const id = JSON.stringify([spec.task.id, level, spec.key.trial]);
    let shown = cache.get(id);
    if (!shown) {
      shown = paraphrasedGoal(spec.task, level, config.seed, spec.key.trial, endpoint);
      cache.set(id, shown);
      const result = await shown;
      if (result.perturbed?.paraphrase) {
        asked++;
        if (!result.perturbed.paraphrase.paraphrased) refused.push(`${spec.task.id} trial ${spec.key.trial}: ${result.perturbed.paraphrase.error}`);
      }
    }
    const { goal, perturbed } = await shown;
    spec.goal = goal;
    if (perturbed) spec.perturbed = perturbed;
  }
  if (asked) {
    const kept = refused.length ? `; the deterministic goal was kept for:\n${refused.map((line) => `  ${line}`).join('\n')}` : '';
    emit({ type: 'notice', run_id: config.run_id, level: refused.length ? 'warning' : 'info', message: `paraphrase (${endpoint.model}): ${asked - refused.length} of ${asked} heavy goal(s) paraphrased${kept}` });
  }
}

async function checkSession(options: CheckOptions, emit: Emit, held: HeldLocks): Promise<void> {
  const tasks = loadInput(options.tasks, options);
  const runId = options.runId ?? newRunId('check');
  const seed = options.seed ?? 1;
  const store = await createRunFolder(options, runId, tasks, held, { kind: 'check', agent: 'check', fault_profile: 'check', perturbations: ['none'], trials: 1, seed, ...(options.mutants ? { mutants: true } : {}), ...(options.shortcuts ? { shortcuts: true } : {}) });
  await executeCheck(store, tasks, options, emit);
}

/**
 * The self-test of the tasks, recorded like any run: the check episodes under the check's fault timings,
 * then each task judged and checks.json written (not when interrupted: a resumed check finishes it).
 */
async function executeCheck(store: WritableRun, tasks: LoadedTask[], options: SessionCommon, emit: Emit): Promise<void> {
  const config = store.config;
  // A resumed check plans what it started with: its mutants and shortcuts too when run.json says so.
  const plan = { ...(config.mutants ? { mutants: true } : {}), ...(config.shortcuts ? { shortcuts: true } : {}) };
  const specs = planCheck(tasks, config.seed, options.registry, plan);
  recordPlan(store, specs);
  const pending = pendingSpecs(specs, store.episodes, config.seed);
  emit(runStarted(store, specs, pending, 'check', 'check'));
  const { interrupted } = await executeRun(pending, { ...environment(options, config, CHECK_FAULT_OPTIONS), store, onEvent: withFailureModes(emit, episodeDiagnoser(byHash(tasks), options.registry)) });
  const checks = judgeCheck(tasks, store.episodes, options.registry, plan);
  if (!interrupted) store.writeChecks(checks);
  emit({ type: 'run-finished', kind: 'check', run_id: config.run_id, directory: store.directory, interrupted, checks });
}
