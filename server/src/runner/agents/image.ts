/**
 * The `image` agent: a user's agent shipped as a container image (the spec's "Docker image: we run it in an
 * ephemeral container"), one fresh container per episode, with the `command` agent's contract (command.ts):
 * the same MCPBENCH_* variables, the request on stdin, the answer line on stdout (stderr with the gateway on
 * stdio), its exit status. What differs is where the program comes from (the image's entrypoint and
 * command; `args` are appended) and its confinement, that of a container:
 *
 * - no network at all but its loopback; the gateway (and, when hosts are allowed, the egress proxy) is on
 *   that loopback at the documented ports, served by a sidecar container of the sandbox image that shares
 *   the agent's network namespace and forwards each connection to the Unix socket the runner serves (the
 *   image needs nothing of ours, not even Node); with `gateway: stdio` there is no sidecar and no network;
 * - a read-only root (the image's), a private 1 GiB scratch at /scratch (HOME) and 256 MiB /tmp, every
 *   capability dropped, no new privileges, uid/gid 65534 when the runner is root (the caller's own
 *   otherwise), the agent's process, memory, file-size limits; nothing of the host mounted;
 * - only the contract's variables and the ones named in `passEnv` (by name: values never on a command line).
 *
 * The image must be on the machine (nothing is pulled at run time); a new run records its id, so every
 * episode, a resumed run and a queue's workers run the same bits (a worker without it refuses, naming it).
 * Failing to make the containers is ours (an infrastructure error, `agent-sandbox`); once the agent's
 * container is made, its exit is its own. Both containers are removed when the episode ends, whatever ends it.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { containerName, imageId, probeEngine, removeContainers, supervised, type ContainerEngine } from '../container.ts';
import { AGENT_LIMITS, containerArguments, containerImage, type Confinement } from '../sandbox.ts';
import { AgentOptionsError, AgentSetupError, type Agent, type AgentContext, type AgentOutcome } from './agent.ts';
import { FORWARDER, runProcess, SANDBOX_READY, SCRATCH_BYTES, SCRATCH_INSIDE, serveWaysOut, SOCKETS_INSIDE, workParent } from './command.ts';
import { type EgressProxy, parseAllowHost } from './egress.ts';
import { agentDeadlineMs, buildAgentRequest, describe } from './endpoint.ts';
import type { AgentCreateContext, AgentPrepareContext } from './registry.ts';

/** The image agent's options as run.json records them. */
export type ImageAgentChoices = {
  /** The image reference as given (`registry.example/agent:1.2`, `my-agent`). */
  image: string;
  /** Its id when the run was made: what every episode runs. */
  imageId?: string;
  /** The engine (default: the run's backend when it is one, else podman, else docker, whichever works). */
  engine?: ContainerEngine;
  /** Arguments appended to the image's entrypoint and command. */
  args?: string[];
  /** Names of the runner's variables it gets. */
  passEnv?: string[];
  /** `host:port` entries its egress proxy reaches. */
  allowHosts?: string[];
  gateway?: 'http' | 'stdio';
};

export interface ImageAgentOptions {
  engine: ContainerEngine;
  /** What the container is made from: the recorded id, else the reference. */
  image: string;
  /** For messages: the reference as given. */
  label: string;
  args?: string[];
  env?: Record<string, string>;
  allowHosts?: ReturnType<typeof parseAllowHost>[];
  gateway?: 'http' | 'stdio';
  /** Default 300 s, lowered to the task's `timeout_s`. */
  timeoutMs?: number;
  killGraceMs?: number;
  /** How long making the sidecar and the agent's container may take before it is ours to fail. */
  setupTimeoutMs?: number;
}

/** The sidecar: the forwarder and nothing else; it ends when its stdin does (the runner's end of it). */
const SIDECAR_LIMITS = { processes: 16, fileSizeBytes: 1024 * 1024, memoryBytes: 1024 * 1024 * 1024, tmpBytes: 1024 * 1024, shmBytes: 1024 * 1024 };
const STAY_UNTIL_STDIN_ENDS = "process.stdin.resume(); process.stdin.on('end', () => process.exit(0)); process.stdin.on('error', () => process.exit(0));";

/** The engine an image agent uses: the one named, else the run's container backend, else the first that works here. */
function chooseEngine(named: ContainerEngine | undefined, context: AgentCreateContext): ContainerEngine {
  const backend = context.backend === 'docker' || context.backend === 'podman' ? context.backend : undefined;
  const wanted = named ?? backend;
  const candidates: ContainerEngine[] = wanted ? [wanted] : ['podman', 'docker'];
  for (const engine of candidates) if (probeEngine(engine, containerImage()).works) return engine;
  const why = candidates.map((e) => `${e}: ${probeEngine(e, containerImage()).detail}`).join('; ');
  throw new AgentOptionsError('image', 'engine', `the image agent needs a container engine that runs the sandbox image here (${why})`);
}

/** A new run's options: the engine's id of the image recorded beside its reference. */
export function prepareImageAgent(input: Record<string, unknown>, context: AgentPrepareContext): Record<string, unknown> {
  if (typeof input.image !== 'string' || !input.image.trim()) return input;
  const named = input.engine === 'docker' || input.engine === 'podman' ? input.engine : undefined;
  const engine = chooseEngine(named, context);
  const id = imageId(engine, input.image.trim());
  if (!id) throw new AgentOptionsError('image', 'image', `the image agent option image: ${input.image} is not on this machine (${engine} pull or build it first; nothing is pulled at run time)`);
  return { ...input, image: input.image.trim(), imageId: id };
}

/** An image agent as a run sets it up: its engine, its image present here, the named variables passed. */
export function imageAgentFor(options: ImageAgentChoices, context: AgentCreateContext): Agent {
  const env: Record<string, string> = {};
  for (const name of options.passEnv ?? []) {
    const value = context.env[name];
    if (value === undefined) throw new AgentOptionsError('image', 'passEnv', `the image agent option passEnv: ${name} is not set in this environment`);
    env[name] = value;
  }
  const engine = chooseEngine(options.engine, context);
  const image = options.imageId ?? options.image;
  if (!imageId(engine, image)) {
    const which = options.imageId ? `${options.image} (${options.imageId}, as this run recorded it)` : options.image;
    throw new AgentOptionsError('image', 'image', `the image agent option image: ${which} is not on this machine (${engine} pull or load it first)`);
  }
  return createImageAgent({ engine, image, label: options.image, args: options.args, env, allowHosts: (options.allowHosts ?? []).map(parseAllowHost), gateway: options.gateway });
}

export function createImageAgent(options: ImageAgentOptions): Agent {
  const overStdio = options.gateway === 'stdio';
  const setupTimeoutMs = options.setupTimeoutMs ?? 60_000;
  return {
    name: 'image',
    async run(context: AgentContext): Promise<AgentOutcome> {
      context.signal.throwIfAborted();
      const deadlineMs = agentDeadlineMs(context, options.timeoutMs);
      const request = buildAgentRequest(context, deadlineMs);
      const work = mkdtempSync(join(workParent(context), 'agent-'));
      const agentName = containerName('agent');
      let sidecar: Sidecar | undefined;
      let proxy: EgressProxy | undefined;
      try {
        const env: Record<string, string> = {
          ...options.env,
          HOME: SCRATCH_INSIDE,
          MCPBENCH_SCRATCH: SCRATCH_INSIDE,
          MCPBENCH_TASK_ID: request.task_id,
          MCPBENCH_GOAL: request.goal,
          MCPBENCH_MAX_STEPS: String(request.max_steps),
          MCPBENCH_TOOLS: JSON.stringify(request.available_tools),
          MCPBENCH_DEADLINE_MS: String(deadlineMs),
        };
        // Anything that fails before the agent's container exists is ours: an infrastructure error.
        try {
          if (overStdio) env.MCPBENCH_GATEWAY = 'stdio';
          const ways = await serveWaysOut(context, work, { overStdio, allowHosts: options.allowHosts }, env, request);
          proxy = ways.proxy;
          if (!overStdio) sidecar = await startSidecar(options.engine, work, ways.forwards, Math.min(setupTimeoutMs, deadlineMs), context.signal);
          const confinement: Confinement = {
            cwd: '/',
            writable: [],
            readOnly: [],
            scratch: { path: SCRATCH_INSIDE, bytes: SCRATCH_BYTES },
            network: 'none',
            etc: [],
            limits: AGENT_LIMITS,
          };
          const made = containerArguments(options.engine, { command: '', args: options.args ?? [], env }, confinement, {
            image: options.image,
            name: agentName,
            imageEntrypoint: true,
            ...(sidecar ? { joinNetworkOf: sidecar.name } : {}),
          });
          await engineCommand(options.engine, ['create', ...made.args], made.env, setupTimeoutMs);
          const spec = supervised(options.engine, agentName, ['start', '--attach', '--interactive', agentName], made.env);
          return await runProcess(spec, undefined, context, request, { deadlineMs, killGraceMs: options.killGraceMs ?? 2000, overStdio, program: options.label });
        } catch (error) {
          if (error instanceof SetupFailure) throw new AgentSetupError(`could not set up the image agent's ${options.engine} containers: ${error.message}`);
          throw error;
        }
      } finally {
        sidecar?.stop();
        await removeContainers(options.engine, [agentName, ...(sidecar ? [sidecar.name] : [])]);
        await proxy?.close();
        rmSync(work, { recursive: true, force: true });
      }
    },
  };
}

class SetupFailure extends Error {}

/** Runs one engine command to its end; a failure (or one past `timeoutMs`) is a SetupFailure with the engine's words. */
function engineCommand(engine: ContainerEngine, args: string[], env: Record<string, string>, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = execFile(engine, args, { env, timeout: timeoutMs, killSignal: 'SIGKILL', encoding: 'utf8' }, (error, _stdout, stderr) => {
      if (!error) return resolve();
      const words = stderr.trim().split('\n').pop() || describe(error);
      reject(new SetupFailure(`${engine} ${args[0]} failed: ${words}`));
    });
    child.stdin?.end();
  });
}

interface Sidecar {
  name: string;
  stop(): void;
}

/** Starts the sidecar that serves the runner's sockets on the shared loopback; resolves once it listens. */
function startSidecar(engine: ContainerEngine, work: string, forwards: string[], timeoutMs: number, signal: AbortSignal): Promise<Sidecar> {
  const confinement: Confinement = {
    cwd: '/',
    writable: [],
    readOnly: [],
    mounts: [{ source: work, target: SOCKETS_INSIDE }],
    network: 'none',
    etc: [],
    limits: SIDECAR_LIMITS,
  };
  const name = containerName('sidecar');
  const made = containerArguments(engine, { command: process.execPath, args: ['-e', FORWARDER, '-', String(forwards.length), ...forwards, 'node', '-e', STAY_UNTIL_STDIN_ENDS], env: {} }, confinement, { image: containerImage(), name });
  const spec = supervised(engine, name, ['run', ...made.args], made.env);
  const child = spawn(spec.command, spec.args, { env: spec.env, stdio: ['pipe', 'ignore', 'pipe'] });
  child.stdin.on('error', () => undefined);
  const stop = () => {
    child.stdin.end();
    child.kill('SIGTERM');
  };
  return new Promise((resolve, reject) => {
    let stderr = '';
    const fail = (why: string) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      stop();
      reject(new SetupFailure(`the gateway's sidecar ${why}${stderr.trim() ? `: ${stderr.trim().split('\n').slice(-3).join(' | ')}` : ''}`));
    };
    const onAbort = () => fail('had not come up when the episode ended');
    const timer = setTimeout(() => fail(`did not come up within ${timeoutMs} ms`), timeoutMs);
    signal.addEventListener('abort', onAbort, { once: true });
    child.on('error', (error) => fail(`could not be started (${error.message})`));
    child.on('exit', (code) => fail(`ended before it was up (exit code ${code})`));
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-4000);
      if (!stderr.includes(`${SANDBOX_READY}\n`)) return;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      child.removeAllListeners('exit');
      child.stderr.removeAllListeners('data');
      child.stderr.resume();
      resolve({ name, stop });
    });
  });
}
