/**
 * One episode: fresh sandboxes for the task's namespaces, state seeded out of band, the servers started,
 * the gateway in front of them, the agent run through the gateway, the servers stopped, the state
 * snapshotted out of band, the predicate evaluated on the snapshot (every node's value and evidence kept).
 *
 * A failure of our infrastructure (a server that will not start, crashes on its own, a snapshot that cannot
 * be read) makes the episode `infra_error`: the caller retries it, and it never counts against the agent.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NamespaceInfo, Registry } from '../mcp/registry.ts';
import { evaluate, stateLeafEvaluator, type NamespaceStates } from '../predicates/evaluate.ts';
import { leaves, parsePredicate } from '../predicates/tree.ts';
import { canonicalHash } from '../tasks/hash.ts';
import type { SolutionStep, Task } from '../tasks/model.ts';
import type { Agent } from './agents/agent.ts';
import { createReferenceAgent } from './agents/reference.ts';
import { Gateway, type ServerHandle } from './gateway.ts';
import type { FaultOptions } from './faults.ts';
import { startServer, type RunningServer } from './launch.ts';
import type { SandboxBackend } from './sandbox.ts';
import { seedNamespace, snapshotNamespace } from './state.ts';
import type { EpisodeKey, EpisodeResult, FaultProfile, GoalPerturbation, RunEvent } from './types.ts';

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
  onEvent?: (event: RunEvent) => void;
}

export class EpisodeInterrupted extends Error {}

/** The namespaces an episode needs servers for: its `server` plus those of every available tool (distractors). */
export function episodeNamespaces(task: Task, registry: Registry): NamespaceInfo[] {
  const names = new Set(typeof task.server === 'string' ? [task.server] : task.server);
  for (const tool of task.available_tools) names.add(tool.slice(0, tool.indexOf('.')));
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
      if (!end) throw new Error(`the first reference solution could not be replayed for its end state: ${result.infra_error ?? 'no state'}`);
      return end;
    });
    // A failed replay is not kept: the retry of the episode that needed it replays again.
    states.catch(() => byTask.delete(spec.taskHash));
    byTask.set(spec.taskHash, states);
  }
  return states;
}

export async function runEpisode(spec: EpisodeSpec, env: EpisodeEnvironment): Promise<EpisodeResult> {
  return (await playEpisode(spec, env, needsReferenceStates(spec.task, env.registry))).result;
}

/** One episode, and the end states it read (undefined after an infrastructure failure). */
async function playEpisode(spec: EpisodeSpec, env: EpisodeEnvironment, withReference: boolean): Promise<{ result: EpisodeResult; states?: NamespaceStates }> {
  const { task, key } = spec;
  const started = new Date();
  const t0 = performance.now();
  const emit = (event: RunEvent) => env.onEvent?.(event);
  const root = mkdtempSync(join(tmpdir(), `mcpbench-${env.runId.slice(0, 24)}-`));
  const servers = new Map<string, RunningServer>();
  /** The namespaces whose sandbox was made (and so has a state to read), in the order they were. */
  const launched: NamespaceInfo[] = [];
  /** Distractor servers started during the episode: waited for before anything is stopped. */
  const lateStarts: Promise<RunningServer>[] = [];
  let gateway: Gateway | undefined;
  const base = {
    ...key,
    run_id: env.runId,
    task_hash: spec.taskHash,
    agent: spec.agent.name,
    seed: env.seed,
    category: task.category,
    namespaces: typeof task.server === 'string' ? [task.server] : [...task.server],
    max_steps: task.max_steps,
    started_at: started.toISOString(),
    attempt: 1,
    // What the agent was shown, whenever it is not simply the task's goal.
    ...(key.perturbation !== 'none' || spec.goal !== task.goal ? { goal: spec.goal } : {}),
    ...(spec.perturbed ? { perturbed: spec.perturbed } : {}),
  };
  const infraResult = (message: string): EpisodeResult => ({
    ...base,
    status: 'infra_error',
    passed: false,
    tool_calls: gateway?.counts().tool_calls ?? 0,
    unlisted_calls: gateway?.counts().unlisted ?? 0,
    errors_seen: gateway?.counts().errors_seen ?? 0,
    budget_exceeded: false,
    calls: gateway?.calls() ?? [],
    duration_ms: performance.now() - t0,
    infra_error: message,
  });

  emit({ type: 'episode-started', run_id: env.runId, key, ...(base.goal !== undefined ? { goal: base.goal } : {}) });
  try {
    const namespaces = episodeNamespaces(task, env.registry);
    const seed = async (info: NamespaceInfo): Promise<string> => {
      const sandbox = join(root, info.namespace);
      mkdirSync(sandbox);
      launched.push(info);
      await seedNamespace(info, task.initial_state[info.namespace], sandbox);
      return sandbox;
    };
    const start = async (info: NamespaceInfo, sandbox: string): Promise<RunningServer> => {
      const server = await startServer(info, sandbox, { backend: env.backend, startTimeoutMs: env.startTimeoutMs, callTimeoutMs: env.callTimeoutMs });
      servers.set(info.namespace, server);
      return server;
    };
    // The task's own namespaces are seeded and started now, side by side (a cross-server task waits for the
    // slowest, not the sum); a namespace that only lends distractor tools starts when the agent first calls
    // one of them, if ever; an agent that calls no tools gets seeded sandboxes and no server at all.
    // allSettled, not all: every server that did start is in `servers` before we return, so the finally
    // below stops it even when another one failed.
    const own = new Set(typeof task.server === 'string' ? [task.server] : task.server);
    const started = await Promise.allSettled(
      namespaces
        .filter((info) => own.has(info.namespace))
        .map(async (info) => {
          const sandbox = await seed(info);
          if (!spec.agent.callsNoTools) await start(info, sandbox);
        }),
    );
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) return { result: infraResult(`could not start the servers: ${(failed.reason as Error).message}`) };
    const handles = new Map<string, ServerHandle>(servers);
    for (const info of namespaces.filter((i) => !servers.has(i.namespace))) {
      let starting: Promise<RunningServer> | undefined;
      handles.set(info.namespace, () => {
        if (!starting) {
          // An own namespace of an agent that said it calls no tools is seeded already; a distractor is not.
          const seeded = launched.includes(info) ? Promise.resolve(join(root, info.namespace)) : seed(info);
          starting = seeded.then((sandbox) => start(info, sandbox));
          lateStarts.push(starting);
        }
        return starting;
      });
    }

    gateway = new Gateway({
      task,
      registry: env.registry,
      servers: handles,
      faults: { profile: spec.profile, seed: env.seed, trial: key.trial, options: env.faultOptions },
      onCall: (call) => {
        emit({ type: 'call', run_id: env.runId, key, call });
        if (call.fault) emit({ type: 'fault', run_id: env.runId, key, call_index: call.index, fault: call.fault });
      },
    });
    const { url } = await gateway.listen();

    // The agent gets its own abort signal: the episode's timeout, or the run's interruption.
    const timeoutMs = (task.timeout_s ?? DEFAULT_EPISODE_TIMEOUT_S) * 1000;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new Error(`the agent did not finish within ${timeoutMs / 1000} s`)), timeoutMs);
    const onInterrupt = () => controller.abort(new EpisodeInterrupted('the run was interrupted'));
    env.signal?.addEventListener('abort', onInterrupt, { once: true });
    let answer: string | undefined;
    let agentError: string | undefined;
    try {
      const outcome = await spec.agent.run({ task, goal: spec.goal, gateway: { url, tools: gateway.tools }, variant: key.variant, ...(spec.steps ? { steps: spec.steps } : {}), signal: controller.signal });
      answer = outcome.answer;
    } catch (error) {
      if (env.signal?.aborted) throw new EpisodeInterrupted('the run was interrupted');
      agentError = controller.signal.aborted ? String((controller.signal.reason as Error)?.message ?? controller.signal.reason) : (error as Error).message;
    } finally {
      clearTimeout(timer);
      env.signal?.removeEventListener('abort', onInterrupt);
    }

    await gateway.close();
    const infra = gateway.infraError();
    if (infra) return { result: infraResult(`a server failed during the episode: ${infra.message}`) };

    // Stop the servers before reading their state: they flush on close (PGlite, git) and nothing writes after.
    await Promise.allSettled(lateStarts);
    await Promise.all([...servers.values()].map((s) => s.close()));
    servers.clear();
    const states: NamespaceStates = {};
    try {
      for (const info of launched) states[info.namespace] = await snapshotNamespace(info, join(root, info.namespace));
    } catch (error) {
      return { result: infraResult(`could not read the end state: ${(error as Error).message}`) };
    }
    let reference: NamespaceStates | undefined;
    try {
      if (withReference) reference = await referenceStates(spec, env);
    } catch (error) {
      if (error instanceof EpisodeInterrupted || env.signal?.aborted) throw new EpisodeInterrupted('the run was interrupted');
      return { result: infraResult((error as Error).message) };
    }

    const predicate = parsePredicate(task.success_predicate, ['success_predicate']);
    const verdict = evaluate(predicate, stateLeafEvaluator(env.registry, states, answer, { initial: task.initial_state, ...(reference ? { reference } : {}) }));
    const counts = gateway.counts();
    const budgetExceeded = gateway.budgetExceeded();
    const result: EpisodeResult = {
      ...base,
      status: verdict.value === true && !budgetExceeded ? 'passed' : 'failed',
      passed: verdict.value === true && !budgetExceeded,
      verdict,
      tool_calls: counts.tool_calls,
      unlisted_calls: counts.unlisted,
      errors_seen: counts.errors_seen,
      budget_exceeded: budgetExceeded,
      calls: gateway.calls(),
      duration_ms: performance.now() - t0,
    };
    if (answer !== undefined) result.answer = answer;
    if (agentError !== undefined) result.agent_error = agentError;
    result.end_state = canonicalHash(states);
    return { result, states };
  } finally {
    await gateway?.close().catch(() => undefined);
    await Promise.allSettled(lateStarts);
    await Promise.all([...servers.values()].map((s) => s.close().catch(() => undefined)));
    rmSync(root, { recursive: true, force: true });
  }
}
