/**
 * One episode: fresh sandboxes for the task's namespaces, state seeded out of band, the servers started,
 * the gateway in front of them, the agent run through the gateway, the servers stopped, the state
 * snapshotted out of band, the predicate evaluated on the snapshot (every node's value and evidence kept).
 *
 * A failure of our infrastructure (a server that will not start, crashes on its own, a snapshot that cannot
 * be read) makes the episode `infra_error`: the caller retries it, and it never counts against the agent.
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NamespaceInfo, Registry } from '../mcp/registry.ts';
import { namespacesOf } from '../mcp/names.ts';
import { evaluate, stateLeafEvaluator, type NamespaceStates } from '../predicates/evaluate.ts';
import { leaves, parsePredicate } from '../predicates/tree.ts';
import { canonicalHash } from '../canonical-json.ts';
import { type SolutionStep, type Task } from '../tasks/model.ts';
import { AgentError, AgentSetupError, type Agent, type AgentOutcome } from './agents/agent.ts';
import { describe } from './agents/endpoint.ts';
import { ModelMeter } from './agents/usage.ts';
import { createReferenceAgent } from './agents/reference.ts';
import { Gateway, type ServerHandle } from './gateway.ts';
import { ServerError, startServer, type RunningServer } from './launch.ts';
import type { SandboxBackend } from './sandbox.ts';
import { SANDBOX_CHECK_MS, sandboxMaxBytes, scratchRoot, scratchRoots, watchTreeSize } from './scratch.ts';
import { seedNamespace, snapshotNamespace } from './state.ts';
import type { EpisodeEvent, EpisodeKey } from './events.ts';
import type { FaultProfile, FaultOptions } from '../record/faults.ts';
import type { EgressRecord, EpisodeError, EpisodeRecord, GoalPerturbation } from '../record/schema.ts';
import { workUnitKey } from '../record/work-units.ts';
import { taskNamespaces } from '../tasks/vocabulary.ts';

export const DEFAULT_EPISODE_TIMEOUT_S = 300;

export interface EpisodeSpec {
  task: Task;
  taskHash: string;
  key: EpisodeKey;
  agent: Agent;
  profile: FaultProfile;
  /** The goal shown to the agent (the task's own, or a perturbed one). */
  goal: string;
  /** How `goal` was made, when it is perturbed: recorded with the result so a reviewer sees what the agent saw. */
  perturbed?: GoalPerturbation;
  /** For the reference agent: the sequence to replay when it is not one of the task's own (a mutant). */
  steps?: SolutionStep[];
}

export interface EpisodeEnvironment {
  runId: string;
  registry: Registry;
  seed: number;
  backend?: SandboxBackend;
  faultOptions?: Partial<FaultOptions>;
  startTimeoutMs?: number;
  callTimeoutMs?: number;
  /** Aborted when the run is interrupted: the episode stops and is not recorded. */
  signal?: AbortSignal;
  /** The start path before issue 18 (see LaunchOptions.plain), no pool, sandboxes in the temporary folder: for bench/run's comparison only. */
  plain?: boolean;
  onEvent?: (event: EpisodeEvent) => void;
  /** Keeps the end states an episode was judged on, under their hash (the run folder's `states/`), for re-judging. */
  keepEndState?: (hash: string, states: NamespaceStates) => void;
}

export class EpisodeInterrupted extends Error {}

/** The work-unit key of a planned episode under a run seed. */
export function specWorkUnit(spec: Pick<EpisodeSpec, 'taskHash' | 'key'>, seed: number): string {
  return workUnitKey({ ...spec.key, task_hash: spec.taskHash, seed });
}

/** Episode sandboxes live in `<scratch>/mcpbench-<run id>-XXXXXX/` (scratch.ts), so a resumed run can find what a killed one left. */
function sandboxRootPrefix(runId: string): string {
  return `mcpbench-${runId.replace(/[^A-Za-z0-9_.-]/g, '_')}-`;
}

/** Removes the sandbox folders a killed run left (scratch.ts: wherever sandboxes are made); returns how many. */
export function removeLeftoverSandboxes(runId: string, folders = scratchRoots()): number {
  const prefix = sandboxRootPrefix(runId);
  let removed = 0;
  for (const folder of folders) {
    let names: string[];
    try {
      names = readdirSync(folder);
    } catch {
      continue;
    }
    for (const name of names) {
      if (!name.startsWith(prefix) || !/^[A-Za-z0-9]{6}$/.test(name.slice(prefix.length))) continue;
      rmSync(join(folder, name), { recursive: true, force: true });
      removed++;
    }
  }
  return removed;
}

/** The record of whatever an agent's run threw: its AgentError (or AgentSetupError: ours) fields, or its message. */
function agentErrorRecord(error: unknown): EpisodeError {
  if (error instanceof AgentError || error instanceof AgentSetupError) return error.toRecord();
  return { kind: 'agent', code: 'agent-exception', message: describe(error) };
}

/** The model fields of an episode record, when a model agent used the meter. */
function modelFields(meter: ModelMeter): Pick<EpisodeRecord, 'model' | 'malformed_calls'> {
  const model = meter.record();
  return model ? { model, malformed_calls: meter.malformed() } : {};
}

/** The namespaces an episode needs servers for: its `server` plus those of every available tool (distractors). */
export function episodeNamespaces(task: Task, registry: Registry): NamespaceInfo[] {
  const names = new Set([...taskNamespaces(task), ...namespacesOf(task.available_tools)]);
  return [...names]
    .map((name) => registry.get(name))
    .filter((info): info is NamespaceInfo => info !== undefined && info.server.implementation.kind !== 'virtual');
}

const NO_FAULTS: FaultProfile = { name: 'none', failure_rate: 0, fault_weights: {} };

/** Per run (its environment object) and task hash: the end states the task's first reference solution leaves. */
const referenceRuns = new WeakMap<EpisodeEnvironment, Map<string, Promise<NamespaceStates>>>();

/** Whether the task's predicate compares with the first reference solution's end state (`<ns>.matchesReference`). */
export function needsReferenceStates(task: Task, registry: Registry): boolean {
  return leaves(parsePredicate(task.success_predicate, ['success_predicate'])).some((leaf) => registry.predicate(leaf.name)?.needsReference);
}

/**
 * The end states the task's first reference solution leaves: replayed once per run and task, at no faults, on
 * fresh sandboxes, by the reference agent. Throws when that replay hits an infrastructure failure.
 */
export function referenceStates(spec: EpisodeSpec, env: EpisodeEnvironment): Promise<NamespaceStates> {
  let byTask = referenceRuns.get(env);
  if (!byTask) referenceRuns.set(env, (byTask = new Map()));
  let states = byTask.get(spec.taskHash);
  if (!states) {
    const replay: EpisodeSpec = {
      task: spec.task,
      taskHash: spec.taskHash,
      agent: createReferenceAgent(),
      profile: NO_FAULTS,
      goal: spec.task.goal,
      key: { task_id: spec.task.id, trial: 0, variant: 'reference:0', fault_profile: NO_FAULTS.name, perturbation: 'none' },
    };
    const { onEvent: _quiet, ...environment } = env;
    states = playEpisode(replay, environment, false).then(({ result, states: end }) => {
      if (!end) throw new Error(`the first reference solution could not be replayed for its end state: ${result.error?.message ?? 'no state'}`);
      return end;
    });
    // A failed replay is not kept: the retry of the episode that needed it replays again.
    states.catch(() => byTask.delete(spec.taskHash));
    byTask.set(spec.taskHash, states);
  }
  return states;
}

/**
 * An episode's sandbox root and servers: its own namespaces seeded and (unless its agent calls no tools)
 * started, side by side (a cross-server task waits for the slowest, not the sum). Made either when the
 * episode is taken or ahead of time by the run's pool (`EpisodePool`); either way every server is fresh, in
 * its own new sandbox, and serves this one episode only.
 */
export interface PreparedEpisode {
  readonly root: string;
  /** The servers that started (those that did are here even when another one failed, so they get stopped). */
  readonly servers: Map<string, RunningServer>;
  /** The namespaces whose sandbox was made (and so has a state to read), in the order they were. */
  readonly launched: NamespaceInfo[];
  /** Resolves when every own namespace is seeded and started: to the first failure, or undefined. */
  readonly ready: Promise<unknown>;
  /** Seeds a namespace's sandbox (a distractor's, when the agent first calls one of its tools). */
  seed(info: NamespaceInfo): Promise<string>;
  start(info: NamespaceInfo, sandbox: string): Promise<RunningServer>;
  /** Stops its servers and removes its sandboxes: for an episode that will not run on it. */
  discard(): Promise<void>;
}

export function prepareEpisode(spec: EpisodeSpec, env: EpisodeEnvironment): PreparedEpisode {
  const { task } = spec;
  // The plain path (bench/run's old one) keeps its sandboxes in the temporary folder, where they were.
  const root = mkdtempSync(join(env.plain ? tmpdir() : scratchRoot(), sandboxRootPrefix(env.runId)));
  // Traversable (not listable) by the unprivileged user the sandboxes run as; each sandbox is its own.
  chmodSync(root, 0o711);
  const servers = new Map<string, RunningServer>();
  const launched: NamespaceInfo[] = [];
  const seed = async (info: NamespaceInfo): Promise<string> => {
    const sandbox = join(root, info.namespace);
    mkdirSync(sandbox);
    launched.push(info);
    try {
      await seedNamespace(info, task.initial_state[info.namespace], sandbox);
    } catch (error) {
      throw error instanceof ServerError ? error : new ServerError(`could not seed the ${info.namespace} state: ${describe(error)}`, info.namespace, '', 'state-seed');
    }
    return sandbox;
  };
  const start = async (info: NamespaceInfo, sandbox: string): Promise<RunningServer> => {
    const server = await startServer(info, sandbox, { backend: env.backend, startTimeoutMs: env.startTimeoutMs, callTimeoutMs: env.callTimeoutMs, plain: env.plain });
    servers.set(info.namespace, server);
    return server;
  };
  const own = new Set(taskNamespaces(task));
  // allSettled, not all: every server that did start is in `servers` when this resolves, so whoever stops
  // the episode stops it even when another one failed.
  const ready = Promise.allSettled(
    episodeNamespaces(task, env.registry)
      .filter((info) => own.has(info.namespace))
      .map(async (info) => {
        const sandbox = await seed(info);
        if (!spec.agent.callsNoTools) await start(info, sandbox);
      }),
  ).then((settled) => settled.find((s): s is PromiseRejectedResult => s.status === 'rejected')?.reason as unknown);
  return {
    root,
    servers,
    launched,
    ready,
    seed,
    start,
    async discard() {
      await ready;
      await Promise.all([...servers.values()].map((s) => s.close().catch(() => undefined)));
      servers.clear();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** Episodes prepared ahead beyond one per episode running (in process and on queue workers). */
export const POOL_EXTRA = 2;

/**
 * Prepares the episodes a run is about to take, `size` ahead (the run's concurrency, and two more): their servers start
 * while the episodes before them run, so an episode taken from the pool starts its agent at once. Nothing is
 * shared or reused; a prepared episode that never runs (an interruption, a cost budget) is discarded.
 */
export class EpisodePool {
  private readonly prepared = new Map<EpisodeSpec, PreparedEpisode>();

  constructor(
    private readonly env: EpisodeEnvironment,
    private readonly size: number,
  ) {}

  /** Starts preparing the first `size` specs of `upcoming` that are not prepared yet. */
  fill(upcoming: readonly EpisodeSpec[]): void {
    for (const spec of upcoming.slice(0, this.size)) {
      if (this.prepared.size >= this.size) return;
      if (this.env.signal?.aborted) return;
      if (!this.prepared.has(spec)) this.prepared.set(spec, prepareEpisode(spec, this.env));
    }
  }

  /** The prepared episode of `spec`, if the pool made one (it is then the caller's). */
  take(spec: EpisodeSpec): PreparedEpisode | undefined {
    const prepared = this.prepared.get(spec);
    this.prepared.delete(spec);
    return prepared;
  }

  /** Discards every prepared episode not taken. */
  async drain(): Promise<void> {
    const left = [...this.prepared.values()];
    this.prepared.clear();
    await Promise.all(left.map((p) => p.discard()));
  }
}

export async function runEpisode(spec: EpisodeSpec, env: EpisodeEnvironment, prepared?: PreparedEpisode): Promise<EpisodeRecord> {
  return (await playEpisode(spec, env, needsReferenceStates(spec.task, env.registry), prepared)).result;
}

/**
 * One episode, and the end states it read (undefined after an infrastructure failure). `pooled`: its servers,
 * prepared ahead by the run's pool; one that could not start them falls back to starting them now. Three
 * steps: start the servers (and the gateway in front of them), run the agent, judge the end state.
 */
async function playEpisode(spec: EpisodeSpec, env: EpisodeEnvironment, withReference: boolean, pooled?: PreparedEpisode): Promise<{ result: EpisodeRecord; states?: NamespaceStates }> {
  const episode = new EpisodePlay(spec, env, await usablePrepared(spec, env, pooled));
  episode.emit({ type: 'episode-started', run_id: env.runId, work_unit: episode.workUnit, key: spec.key, ...(episode.base.goal !== undefined ? { goal: episode.base.goal } : {}) });
  try {
    const failure = await episode.startServers();
    if (failure) return { result: episode.errorResult(failure) };
    const outcome = await episode.runAgent();
    return await episode.judge(outcome, withReference);
  } finally {
    await episode.close();
  }
}

/** The pool's prepared episode when its servers started; else (a failed pooled start, said in a notice) a new one. */
async function usablePrepared(spec: EpisodeSpec, env: EpisodeEnvironment, pooled: PreparedEpisode | undefined): Promise<PreparedEpisode> {
  const failure = await pooled?.ready;
  if (pooled && failure === undefined) return pooled;
  if (pooled) {
    await pooled.discard();
    env.onEvent?.({ type: 'notice', run_id: env.runId, level: 'warning', message: `${spec.key.task_id}: the server pool could not start its servers ahead (${describe(failure)}); starting them now` });
  }
  return prepareEpisode(spec, env);
}

/** How the agent's part of an episode ended. */
interface AgentEnd {
  answer?: string;
  stopped?: AgentOutcome['stopped'];
  /** The agent broke (its kind may be infra: a sandbox that never came up, a gateway it could not reach). */
  agentError?: EpisodeError;
  /** Why the episode was ended for filling its servers' storage (nothing is judged then). */
  overflow?: string;
}

/** One episode being played: what its three steps share, and the record of an episode that ended on an error. */
class EpisodePlay {
  readonly started = new Date();
  readonly t0 = performance.now();
  readonly workUnit: string;
  readonly base: ReturnType<typeof recordBase>;
  /** What a model agent spends, kept even when the episode ends in an infrastructure error (it was spent). */
  readonly meter = new ModelMeter();
  /** The agent's attempts to reach the network through its egress proxy (a confined command agent). */
  readonly egress: EgressRecord[] = [];
  /** Distractor servers started during the episode: waited for before anything is stopped. */
  readonly lateStarts: Promise<RunningServer>[] = [];
  gateway: Gateway | undefined;
  /** Where the gateway listens (streamable HTTP on loopback). */
  url = '';
  /** The agent's own abort signal: the episode's timeout, the run's interruption, or a runaway agent. */
  readonly controller = new AbortController();

  constructor(
    readonly spec: EpisodeSpec,
    readonly env: EpisodeEnvironment,
    readonly prepared: PreparedEpisode,
  ) {
    this.workUnit = specWorkUnit(spec, env.seed);
    this.base = recordBase(spec, env, this.workUnit, this.started);
  }

  emit(event: EpisodeEvent): void {
    this.env.onEvent?.(event);
  }

  /** The record of an episode that ended on an error before anything was judged: ours (infra) or the agent's. */
  errorResult(error: EpisodeError): EpisodeRecord {
    const { gateway } = this;
    return {
      ...this.base,
      ...modelFields(this.meter),
      status: error.kind === 'infra' ? 'infra_error' : 'agent_error',
      passed: false,
      tool_calls: gateway?.counts().tool_calls ?? 0,
      unlisted_calls: gateway?.counts().unlisted ?? 0,
      errors_seen: gateway?.counts().errors_seen ?? 0,
      budget_exceeded: false,
      calls: gateway?.calls() ?? [],
      ...(this.egress.length ? { egress: this.egress } : {}),
      duration_ms: performance.now() - this.t0,
      error,
    };
  }

  /**
   * Step 1: the task's own servers started (by the pool, or now), the gateway listening in front of them. A
   * namespace that only lends distractor tools starts when the agent first calls one of them, if ever; an
   * agent that calls no tools gets seeded sandboxes and no server at all. Returns why it could not.
   */
  async startServers(): Promise<EpisodeError | undefined> {
    const { spec, env, prepared } = this;
    const { key } = spec;
    const { root, servers, launched, seed, start } = prepared;
    const namespaces = episodeNamespaces(spec.task, env.registry);
    const failure = await prepared.ready;
    if (failure !== undefined) {
      return failure instanceof ServerError ? failure.toRecord() : { kind: 'infra', code: 'server-start', message: `could not start the servers: ${describe(failure)}` };
    }
    const handles = new Map<string, ServerHandle>(servers);
    for (const info of namespaces.filter((i) => !servers.has(i.namespace))) {
      let starting: Promise<RunningServer> | undefined;
      handles.set(info.namespace, () => {
        if (!starting) {
          // An own namespace of an agent that said it calls no tools is seeded already; a distractor is not.
          const seeded = launched.includes(info) ? Promise.resolve(join(root, info.namespace)) : seed(info);
          starting = seeded.then((sandbox) => start(info, sandbox));
          this.lateStarts.push(starting);
        }
        return starting;
      });
    }
    this.gateway = new Gateway({
      task: spec.task,
      registry: env.registry,
      servers: handles,
      faults: { profile: spec.profile, seed: env.seed, trial: key.trial, options: env.faultOptions },
      onCallStarted: (call) => this.emit({ type: 'call-started', run_id: env.runId, work_unit: this.workUnit, key, call }),
      onCall: (call) => {
        this.emit({ type: 'call', run_id: env.runId, work_unit: this.workUnit, key, call });
        if (call.fault) this.emit({ type: 'fault', run_id: env.runId, work_unit: this.workUnit, key, call_index: call.index, fault: call.fault });
      },
      onRunaway: (message) => this.controller.abort(new AgentError('agent-runaway', message)),
    });
    this.url = (await this.gateway.listen()).url;
    return undefined;
  }

  /**
   * Step 2: the agent run through the gateway, bounded by the episode's timeout, the run's interruption, the
   * gateway's runaway guard and the size of what it makes its servers write.
   */
  async runAgent(): Promise<AgentEnd> {
    const { spec, env, controller, prepared } = this;
    const { task, key } = spec;
    const served = this.gateway!;
    const { url } = this;
    // What the agent makes its servers write is bounded: past the limit the episode ends, its servers are
    // stopped at once (one call can write gigabytes), and nothing of that state is judged.
    const limit = sandboxMaxBytes();
    const end: AgentEnd = {};
    const stopWatching = watchTreeSize(prepared.root, limit, SANDBOX_CHECK_MS, (bytes) => {
      const mib = (n: number) => Math.round(n / 1024 ** 2);
      end.overflow = `the episode's sandboxes held ${mib(bytes)} MiB, past the limit of ${mib(limit)} MiB (MCPBENCH_SANDBOX_MAX_BYTES): the agent filled its servers' storage and the episode was ended`;
      controller.abort(new AgentError('sandbox-full', end.overflow));
      for (const server of prepared.servers.values()) void server.close().catch(() => undefined);
    });
    const timeoutMs = (task.timeout_s ?? DEFAULT_EPISODE_TIMEOUT_S) * 1000;
    const timer = setTimeout(() => controller.abort(new AgentError('agent-timeout', `the agent did not finish within ${timeoutMs / 1000} s`)), timeoutMs);
    const onInterrupt = () => controller.abort(new EpisodeInterrupted('the run was interrupted'));
    env.signal?.addEventListener('abort', onInterrupt, { once: true });
    try {
      const outcome = await spec.agent.run({
        task,
        goal: spec.goal,
        gateway: { url, tools: served.tools, listenSocket: (path) => served.listenSocket(path), serveStdio: (streams) => served.serveStdio(streams), ...(env.plain ? {} : { connectInProcess: () => served.connectInProcess() }) },
        variant: key.variant,
        ...(spec.steps ? { steps: spec.steps } : {}),
        signal: controller.signal,
        workspace: prepared.root,
        onEgress: (record) => this.egress.push(record),
        seed: env.seed,
        trial: key.trial,
        meter: this.meter,
      });
      end.answer = outcome.answer;
      end.stopped = outcome.stopped;
    } catch (error) {
      if (env.signal?.aborted) throw new EpisodeInterrupted('the run was interrupted');
      // Ended by the episode (its timeout, or the gateway ending a runaway): the agent's error whatever it threw
      // as it was stopped (a model agent's cut request, a gateway it could no longer reach), typed by why, with
      // what its own error says of its process (exit code, stderr). The one exception: a confined agent whose
      // sandbox never came up was never started, and that is ours (agent-sandbox).
      const ended: unknown = controller.signal.aborted ? controller.signal.reason : undefined;
      end.agentError = ended instanceof AgentError && !(error instanceof AgentSetupError) ? { ...agentErrorRecord(error), ...ended.toRecord() } : agentErrorRecord(error);
    } finally {
      clearTimeout(timer);
      stopWatching();
      env.signal?.removeEventListener('abort', onInterrupt);
    }
    return end;
  }

  /**
   * Step 3: the servers stopped, their end states read out of band (and the reference's, when a predicate
   * compares with it), the predicate evaluated; or the error that leaves nothing to judge.
   */
  async judge(end: AgentEnd, withReference: boolean): Promise<{ result: EpisodeRecord; states?: NamespaceStates }> {
    const { spec, env, prepared } = this;
    const { task } = spec;
    const gateway = this.gateway!;
    if (end.overflow !== undefined) {
      // The servers were stopped mid-write: their state is not the agent's finished work, and not ours to retry.
      await gateway.close();
      await Promise.allSettled(this.lateStarts);
      return { result: this.errorResult(new AgentError('sandbox-full', end.overflow).toRecord()) };
    }
    let { agentError } = end;
    // The gateway ended a runaway agent that returned anyway (it ignored the abort): ended all the same.
    const runaway = gateway.runaway();
    if (runaway !== undefined && agentError === undefined) agentError = new AgentError('agent-runaway', runaway).toRecord();

    await gateway.close();
    const infra = gateway.infraError();
    if (infra) return { result: this.errorResult(infra.toRecord()) };
    // We could not set the agent up (its sandbox), or it could not reach our own gateway: ours to retry, never
    // the agent's failure.
    if (agentError?.kind === 'infra') return { result: this.errorResult(agentError) };

    // Stop the servers before reading their state: they flush on close (PGlite, git) and nothing writes after.
    await Promise.allSettled(this.lateStarts);
    await Promise.all([...prepared.servers.values()].map((s) => s.close()));
    prepared.servers.clear();
    const states: NamespaceStates = {};
    try {
      for (const info of prepared.launched) states[info.namespace] = await snapshotNamespace(info, join(prepared.root, info.namespace));
    } catch (error) {
      return { result: this.errorResult({ kind: 'infra', code: 'state-read', message: `could not read the end state: ${describe(error)}` }) };
    }
    let reference: NamespaceStates | undefined;
    try {
      if (withReference) reference = await referenceStates(spec, env);
    } catch (error) {
      if (error instanceof EpisodeInterrupted || env.signal?.aborted) throw new EpisodeInterrupted('the run was interrupted');
      return { result: this.errorResult({ kind: 'infra', code: 'state-read', message: describe(error) }) };
    }

    const predicate = parsePredicate(task.success_predicate, ['success_predicate']);
    const verdict = evaluate(predicate, stateLeafEvaluator(env.registry, states, end.answer, { initial: task.initial_state, ...(reference ? { reference } : {}) }));
    const counts = gateway.counts();
    const budgetExceeded = gateway.budgetExceeded();
    // An agent that broke is an agent error whatever the state says: its episode did not end as the agent's.
    // One its token budget stopped has not finished its task: it fails, with the reason.
    const passed = verdict.value === true && !budgetExceeded && !agentError && !end.stopped;
    const result: EpisodeRecord = {
      ...this.base,
      ...modelFields(this.meter),
      status: agentError ? 'agent_error' : passed ? 'passed' : 'failed',
      passed,
      verdict,
      tool_calls: counts.tool_calls,
      unlisted_calls: counts.unlisted,
      errors_seen: counts.errors_seen,
      budget_exceeded: budgetExceeded,
      calls: gateway.calls(),
      ...(this.egress.length ? { egress: this.egress } : {}),
      duration_ms: performance.now() - this.t0,
    };
    if (end.answer !== undefined) result.answer = end.answer;
    if (agentError !== undefined) result.error = agentError;
    else if (end.stopped) result.failure = { code: end.stopped.code, message: end.stopped.message };
    result.end_state = canonicalHash(states);
    env.keepEndState?.(result.end_state, states);
    return { result, states };
  }

  /** Whatever happened: the gateway closed, every server stopped, the sandboxes removed. */
  async close(): Promise<void> {
    await this.gateway?.close().catch(() => undefined);
    await Promise.allSettled(this.lateStarts);
    await Promise.all([...this.prepared.servers.values()].map((s) => s.close().catch(() => undefined)));
    // Not rmSync: a postgres sandbox is ~40 MB in ~1,000 files, and the other episodes' gateways run meanwhile.
    await rm(this.prepared.root, { recursive: true, force: true });
  }
}

/** The fields of an episode's record that its plan decides (the outcome's fields come from running it). */
function recordBase(spec: EpisodeSpec, env: Pick<EpisodeEnvironment, 'runId' | 'seed'>, workUnit: string, started: Date) {
  const { task, key } = spec;
  return {
    work_unit: workUnit,
    ...key,
    run_id: env.runId,
    task_hash: spec.taskHash,
    agent: spec.agent.name,
    seed: env.seed,
    category: task.category,
    namespaces: taskNamespaces(task),
    max_steps: task.max_steps,
    started_at: started.toISOString(),
    attempt: 1,
    // What the agent was shown, whenever it is not simply the task's goal.
    ...(key.perturbation !== 'none' || spec.goal !== task.goal ? { goal: spec.goal } : {}),
    ...(spec.perturbed ? { perturbed: spec.perturbed } : {}),
  };
}

/**
 * The record of an episode that never ran because its infrastructure could not take it (a queue worker
 * without the set key, or without a server the task needs): an infrastructure error, retried like any other.
 */
export function unrunEpisode(spec: EpisodeSpec, env: Pick<EpisodeEnvironment, 'runId' | 'seed'>, error: EpisodeError): EpisodeRecord {
  return {
    ...recordBase(spec, env, specWorkUnit(spec, env.seed), new Date()),
    status: 'infra_error',
    passed: false,
    tool_calls: 0,
    unlisted_calls: 0,
    errors_seen: 0,
    budget_exceeded: false,
    calls: [],
    duration_ms: 0,
    error,
  };
}
