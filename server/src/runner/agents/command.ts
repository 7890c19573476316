/**
 * The `command` agent: a user's agent as a local process, one process per episode, confined by a sandbox
 * backend unless the user opts out.
 *
 * Contract (what a user's agent can rely on):
 * - Environment: nothing of the runner's own but PATH, the locale and time zone, plus the variables the user
 *   names (`--agent-env NAME`) and these:
 *     MCPBENCH_GATEWAY_URL   the gateway's MCP endpoint (streamable HTTP), e.g. http://127.0.0.1:41001/mcp
 *                            (`stdio` in MCPBENCH_GATEWAY instead when the gateway is on the agent's stdio)
 *     MCPBENCH_TASK_ID       the task id
 *     MCPBENCH_GOAL          the goal, as shown to the agent
 *     MCPBENCH_MAX_STEPS     the tool-call budget (decimal integer)
 *     MCPBENCH_TOOLS         JSON array of the exposed tools: [{ name, description?, inputSchema }]
 *     MCPBENCH_DEADLINE_MS   milliseconds the process has before it is killed
 *     MCPBENCH_SCRATCH       its private writable folder (also HOME)
 *     HTTPS_PROXY, HTTP_PROXY (and lower case), NO_PROXY   the egress proxy, when hosts are allowed
 * - stdin: the same JSON document the `endpoint` agent POSTs (schemas/endpoint-request.schema.json),
 *   followed by a newline and end of input. Reading it is optional.
 * - Final answer: the last stdout line of the form `MCPBENCH_ANSWER: <text>` (text up to the end of that
 *   line); without one, the episode has no answer. Other stdout is ignored, so the agent may log freely.
 * - With the gateway on stdio (`--agent-gateway stdio`), stdin and stdout carry MCP (newline-delimited
 *   JSON-RPC; the agent is the client), nothing is written to stdin first, and the answer line goes to stderr.
 * - Exit status 0 ends the episode normally; a non-zero status (or death by a signal) fails it, with the
 *   tail of stderr in the message.
 * - The process runs in its own process group. On timeout or abort (Ctrl-C, episode timeout) the whole
 *   group gets SIGTERM, then SIGKILL after a grace period (a confined agent's whole sandbox dies at once);
 *   when the process exits, any children it left behind are killed too, so nothing keeps calling the
 *   gateway after the episode.
 *
 * Confined (the default of `mcpbench run`): the agent sees the system folders and its own folder read-only,
 * a private scratch folder, and no network but two ways out the runner enforces, both Unix sockets bound
 * into the sandbox and forwarded to its loopback by a small forwarder: the gateway, and an egress proxy
 * that reaches only the allowed hosts (every attempt recorded in the trace).
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { AGENT_ETC, AGENT_LIMITS, defaultBackend, nodeFolders, prepareWritable, sandboxed, sandboxIdentity, type Confinement, type SandboxBackend } from '../sandbox.ts';
import { AgentError, AgentOptionsError, AgentSetupError, type Agent, type AgentContext, type AgentOutcome } from './agent.ts';
import type { AgentCreateContext } from './registry.ts';
import { EgressProxy, parseAllowHost } from './egress.ts';
import { agentFolderView, runPathsOf } from './agent-folder.ts';
import { SET_KEY_ENV } from '../../tasks/seal.ts';
import { scrubEnvironment } from './scrub-env.ts';
import { memoryCgroup, type MemoryCgroup } from '../memory-cgroup.ts';
import { agentDeadlineMs, buildAgentRequest, describe, tail } from './endpoint.ts';

export interface AgentSandboxOptions {
  backend: Exclude<SandboxBackend, 'process'>;
  /** The agent's folder: read-only inside, and its working directory. */
  dir: string;
  /** `host:port` entries the egress proxy forwards to (the model endpoint); none: no way out at all. */
  allowHosts?: readonly string[];
  /** Files under `dir` the agent must not read (the run's task files): replaced by empty ones. */
  hidden?: readonly string[];
  /** Folders under `dir` the agent must not read (the run folder, `.git`): replaced by empty ones. */
  hiddenFolders?: readonly string[];
  /** Memory of the whole sandbox (bubblewrap, where a cgroup can be made); default AGENT_SANDBOX_MEMORY_BYTES. */
  memoryBytes?: number;
}

/** The memory of a bubblewrap-confined agent's whole sandbox, all its processes together, where a cgroup can be made. */
export const AGENT_SANDBOX_MEMORY_BYTES = 4 * 1024 ** 3;

export interface CommandAgentOptions {
  /** argv (no shell), or one string run by `/bin/sh -c`. */
  command: string[] | string;
  /** Working directory of an unconfined agent (a confined one runs in `sandbox.dir`). */
  cwd?: string;
  /** Variables given to the agent on top of its allow-listed environment (the `--agent-env` ones). */
  env?: Record<string, string>;
  /** Wall-clock limit for the process; default 300 s, lowered to the task's `timeout_s` when set. */
  timeoutMs?: number;
  /** Time between SIGTERM and SIGKILL on abort or timeout. */
  killGraceMs?: number;
  /** Confine the agent with a sandbox backend; without it the agent is a plain process (environment still allow-listed). */
  sandbox?: AgentSandboxOptions;
  /** How the agent reaches the gateway: streamable HTTP (default) or MCP over its own stdin/stdout. */
  gateway?: 'http' | 'stdio';
}

const ANSWER_PREFIX = 'MCPBENCH_ANSWER:';
const STDERR_TAIL_CHARS = 4000;
/** A stdout line longer than this is not an answer line; bounding it bounds memory. */
const MAX_LINE_CHARS = 1_000_000;

/** Variables of the runner's environment every command agent gets; nothing else is passed unless named. */
export const AGENT_ENV_PASSED = ['PATH', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TERM'] as const;

/** Inside a confined agent's sandbox: where its sockets are, the loopback ports they are forwarded to, its scratch. */
export const SOCKETS_INSIDE = '/run/mcpbench';
const GATEWAY_PORT = 41001;
const PROXY_PORT = 41002;
export const SCRATCH_INSIDE = '/scratch';
export const SCRATCH_BYTES = 1024 * 1024 * 1024;

/**
 * What the forwarder sends once the sandbox is up, before the agent starts: on its own connection to the
 * runner's readiness socket (`ready.sock` in the sockets folder), never in the agent's stderr (an agent could
 * push it out of any window kept of stderr, or write it itself). A forwarder given `-` instead of a socket (the
 * image agent's sidecar, whose stderr is its own) writes it to stderr.
 */
export const SANDBOX_READY = 'MCPBENCH_SANDBOX_READY';
/** The readiness socket's name in the sockets folder. */
export const READY_SOCKET = 'ready.sock';
/** Longest Unix socket path used (the kernel's limit is 108 bytes on Linux, 104 on macOS). */
const MAX_SOCKET_PATH = 100;
/** How long a confined agent's end waits for a readiness signal already sent but not yet read. */
const READY_GRACE_MS = 250;

/**
 * The forwarder that runs first inside the sandbox: it listens on the sandbox's loopback, pipes each
 * connection to its Unix socket, says the sandbox is up, then runs the agent and exits as it does. Plain
 * Node, no dependencies.
 */
export const FORWARDER = `
const net = require('node:net');
const { spawn } = require('node:child_process');
const { constants } = require('node:os');
// argv: the readiness socket (or -), the number of forwards, each as PORT=SOCKET, then the agent's own argv.
const ready = process.argv[1];
const count = Number(process.argv[2]);
const forwards = process.argv.slice(3, 3 + count).map((a) => [Number(a.slice(0, a.indexOf('='))), a.slice(a.indexOf('=') + 1)]);
const argv = process.argv.slice(3 + count);
const up = (then) => {
  if (ready === '-') { process.stderr.write('${SANDBOX_READY}\\n'); return then(); }
  const s = net.connect(ready, () => s.end('${SANDBOX_READY}\\n', then));
  s.on('error', (e) => { process.stderr.write('cannot say the sandbox is up: ' + e.message + '\\n'); process.exit(125); });
};
const run = () => up(() => {
  // The sandbox is up: from here on, what happens is the agent's.
  const child = spawn(argv[0], argv.slice(1), { stdio: 'inherit' });
  child.on('error', (e) => { process.stderr.write('cannot start ' + argv[0] + ': ' + e.message + '\\n'); process.exit(127); });
  child.on('exit', (code, signal) => process.exit(code ?? 128 + (constants.signals[signal] || 9)));
});
let waiting = forwards.length;
if (!waiting) run();
for (const [port, path] of forwards) {
  net.createServer((socket) => {
    const up = net.connect(path);
    const end = () => { socket.destroy(); up.destroy(); };
    socket.on('error', end); up.on('error', end); socket.on('close', end); up.on('close', end);
    socket.pipe(up); up.pipe(socket);
  }).listen(port, '127.0.0.1', () => { if (--waiting === 0) run(); });
}
`;

/** The runner's readiness socket for a sandbox: `up` resolves when the forwarder says the sandbox is up. */
export async function listenReady(work: string): Promise<{ path: string; up: Promise<void>; close(): void }> {
  const path = join(work, READY_SOCKET);
  let resolveUp!: () => void;
  const up = new Promise<void>((resolve) => (resolveUp = resolve));
  const server = createNetServer((socket) => {
    let got = '';
    socket.setEncoding('utf8');
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk: string) => {
      got += chunk;
      if (got === `${SANDBOX_READY}\n`) resolveUp();
      if (got.length >= SANDBOX_READY.length + 1) socket.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolve());
  });
  chmodSync(path, 0o666);
  return { path, up, close: () => server.close() };
}

/** The allow-listed environment of a command agent. */
export function agentEnvironment(scratch: string, named: Record<string, string> = {}, from: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of AGENT_ENV_PASSED) {
    const value = from[name];
    if (value !== undefined) env[name] = value;
  }
  env.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  return { ...env, HOME: scratch, MCPBENCH_SCRATCH: scratch, ...named };
}

export const AGENT_SANDBOX_NONE_WARNING =
  'the command agent is not confined (sandbox none): it runs as a plain process, reads every file this user can (the checkout, the task files) and reaches the network; only its environment is allow-listed';

/** Where a command agent can run: a sandbox backend, or `none` (a plain process, with a warning). */
export const AGENT_SANDBOXES = ['bwrap', 'docker', 'podman', 'process', 'none'] as const;

/** The command agent's options as its descriptor (agents/registry.ts) reads them and run.json records them. */
export type CommandAgentChoices = {
  /** The program and its arguments, run by `/bin/sh -c`. */
  command: string;
  /** The backend it runs in (default: the run's); `none` or `process`: a plain process. */
  sandbox?: (typeof AGENT_SANDBOXES)[number];
  /** Names of the runner's variables it gets (never their values: those are read when it is created). */
  passEnv?: string[];
  /** Its folder (made absolute when a new run prepares its options; default: the current directory). */
  dir?: string;
  /** `host:port` entries its egress proxy reaches. */
  allowHosts?: string[];
  gateway?: 'http' | 'stdio';
};

/**
 * A command agent as a run sets it up: confined by the run's backend unless its options say `none`, the named
 * variables passed from the context's environment (an unset one is an AgentOptionsError), the run's task files
 * in its folder hidden. Warns (run.json records it) when it is not confined, or (as root) cannot run as nobody.
 */
export function commandAgentFor(options: CommandAgentChoices, context: AgentCreateContext): Agent {
  const env: Record<string, string> = {};
  for (const name of options.passEnv ?? []) {
    const value = context.env[name];
    if (value === undefined) throw new AgentOptionsError('command', 'passEnv', `the command agent option passEnv: ${name} is not set in this environment`);
    env[name] = value;
  }
  const dir = resolve(context.cwd ?? process.cwd(), options.dir ?? '.');
  if (!isFolder(dir)) throw new AgentOptionsError('command', 'dir', `the command agent option dir: ${dir} is not a folder`);
  const sandbox = options.sandbox ?? context.backend ?? defaultBackend();
  const allowHosts = (options.allowHosts ?? []).map(parseAllowHost);
  const base = { command: options.command, cwd: dir, env, gateway: options.gateway ?? 'http' };
  if (sandbox === 'none' || sandbox === 'process') {
    if (sealedRun(context)) {
      // A sealed set never reaches an agent that nothing confines, unless the user says so in as many words.
      if (options.sandbox !== 'none') throw new AgentOptionsError('command', 'sandbox', SEALED_UNCONFINED_REFUSAL);
      // Then the key leaves the runner's environment (process.env and /proc/<pid>/environ) before any agent starts.
      const scrub = scrubEnvironment(SET_KEY_ENV);
      delete context.env[SET_KEY_ENV];
      context.warn(`the set key was removed from this runner's environment before the unconfined agent started${scrub.scrubbed ? '' : `, but ${scrub.detail}`}`);
    }
    if (allowHosts.length) throw new AgentOptionsError('command', 'allowHosts', 'the command agent option allowHosts: allowed hosts need a confined agent; a plain process (sandbox none, or the process backend) reaches the network anyway');
    context.warn(AGENT_SANDBOX_NONE_WARNING);
    return createCommandAgent(base);
  }
  // Everything of the run, version control, sealed sets and the set key are hidden in its folder (by realpath).
  const view = agentFolderView(dir, runPathsOf(context.runDirectory, [...(context.taskSources ?? []), ...(context.taskFiles ?? [])]), context.env[SET_KEY_ENV]);
  // As root, the sandbox runs as nobody only if nobody can reach the agent's folder; else say what is lost.
  const identity = sandboxIdentity({ readOnly: [...nodeFolders(), view.dir], writable: [] });
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  if (root && !identity.dropToNobody) context.warn(`the command agent ${identity.note}: make ${dir} readable by other users (chmod o+rx) to limit it`);
  return createCommandAgent({ ...base, sandbox: { backend: sandbox, dir: view.dir, allowHosts, hidden: view.hidden.files, hiddenFolders: view.hidden.folders } });
}

export const SEALED_UNCONFINED_REFUSAL =
  "the command agent option sandbox: a sealed set's tasks never reach an unconfined agent, and no sandbox backend confines it here (the run's backend is the plain process); install bubblewrap (apt-get install bubblewrap) or use docker or podman (--sandbox), or run it unconfined anyway with --agent-sandbox none (the set key is then removed from the runner's environment first)";

/** Whether the run's tasks come from a sealed set. */
function sealedRun(context: AgentCreateContext): boolean {
  return [...(context.taskFiles ?? []), ...(context.taskSources ?? [])].some((file) => file.split('#')[0]!.endsWith('.sealed.json'));
}

export function createCommandAgent(options: CommandAgentOptions): Agent {
  const argv = typeof options.command === 'string' ? ['/bin/sh', '-c', options.command] : options.command;
  if (argv.length === 0 || !argv[0]) throw new Error('command agent: the command is empty');
  const killGraceMs = options.killGraceMs ?? 2000;
  const overStdio = options.gateway === 'stdio';
  return {
    name: 'command',
    async run(context: AgentContext): Promise<AgentOutcome> {
      context.signal.throwIfAborted();
      const deadlineMs = agentDeadlineMs(context, options.timeoutMs);
      const request = buildAgentRequest(context, deadlineMs);
      // The runner's side of the agent: its sockets (confined) or its scratch folder (unconfined).
      const work = mkdtempSync(join(workParent(context), 'agent-'));
      let proxy: EgressProxy | undefined;
      let ready: Awaited<ReturnType<typeof listenReady>> | undefined;
      let cgroup: MemoryCgroup | undefined;
      try {
        const confined = options.sandbox;
        const scratch = confined ? SCRATCH_INSIDE : work;
        const env = agentEnvironment(scratch, options.env);
        Object.assign(env, {
          MCPBENCH_TASK_ID: request.task_id,
          MCPBENCH_GOAL: request.goal,
          MCPBENCH_MAX_STEPS: String(request.max_steps),
          MCPBENCH_TOOLS: JSON.stringify(request.available_tools),
          MCPBENCH_DEADLINE_MS: String(deadlineMs),
        });
        let spec = { command: argv[0]!, args: argv.slice(1), env };
        let cwd = options.cwd;
        if (overStdio) env.MCPBENCH_GATEWAY = 'stdio';
        else if (!confined) env.MCPBENCH_GATEWAY_URL = request.gateway.url;
        if (confined) {
          // Anything that fails here is ours: an infrastructure error, never the agent's.
          try {
            if (!context.gateway.listenSocket) throw new Error('this gateway cannot be served into a sandbox');
            const ways = await serveWaysOut(context, work, { overStdio, allowHosts: confined.allowHosts }, env, request);
            proxy = ways.proxy;
            const forwards = ways.forwards;
            ready = await listenReady(work);
            const dir = resolve(confined.dir);
            const confinement: Confinement = {
              cwd: dir,
              writable: [],
              // Node (for the forwarder) when it is not in a system folder, and the agent's own folder.
              readOnly: [...nodeFolders(), dir],
              mounts: [{ source: work, target: SOCKETS_INSIDE }],
              hidden: [...(confined.hidden ?? [])],
              hiddenFolders: [...(confined.hiddenFolders ?? [])],
              scratch: { path: SCRATCH_INSIDE, bytes: SCRATCH_BYTES },
              network: 'none',
              etc: AGENT_ETC,
              limits: AGENT_LIMITS,
            };
            prepareWritable(confinement, confined.backend);
            spec = sandboxed(confined.backend, { command: process.execPath, args: ['-e', FORWARDER, `${SOCKETS_INSIDE}/${READY_SOCKET}`, String(forwards.length), ...forwards, ...argv], env }, confinement) as typeof spec;
            // The whole sandbox's memory, where a cgroup can be made (containers have their own --memory).
            if (confined.backend === 'bwrap') cgroup = memoryCgroup(confined.memoryBytes ?? AGENT_SANDBOX_MEMORY_BYTES);
            if (cgroup) spec = { ...spec, ...cgroup.wrap(spec.command, spec.args) };
            cwd = dir;
          } catch (error) {
            throw new AgentSetupError(`could not set up the command agent's ${confined.backend} sandbox: ${describe(error)}`);
          }
        }
        return await runProcess(spec, cwd, context, request, { deadlineMs, killGraceMs, overStdio, program: argv[0]!, ...(confined && ready ? { sandbox: confined.backend, ready: ready.up } : {}) });
      } finally {
        cgroup?.remove();
        ready?.close();
        await proxy?.close();
        rmSync(work, { recursive: true, force: true });
      }
    },
  };
}

/**
 * Serves a confined agent's ways out as Unix sockets in `work`, the folder mounted at SOCKETS_INSIDE (made
 * traversable by the sandbox's unprivileged user): the gateway unless it is on the agent's stdio, the egress
 * proxy when hosts are allowed. Sets the variables that name them on the sandbox's loopback (and the
 * request's gateway URL); returns the forwarder's `PORT=SOCKET` arguments and the proxy, to be closed.
 */
export async function serveWaysOut(
  context: AgentContext,
  work: string,
  { overStdio, allowHosts }: { overStdio: boolean; allowHosts?: readonly ReturnType<typeof parseAllowHost>[] },
  env: Record<string, string>,
  request: ReturnType<typeof buildAgentRequest>,
): Promise<{ forwards: string[]; proxy?: EgressProxy }> {
  chmodSync(work, 0o711);
  const forwards: string[] = [];
  if (!overStdio) {
    if (!context.gateway.listenSocket) throw new Error('this gateway cannot be served into a sandbox');
    await context.gateway.listenSocket(join(work, 'gateway.sock'));
    chmodSync(join(work, 'gateway.sock'), 0o666);
    forwards.push(`${GATEWAY_PORT}=${SOCKETS_INSIDE}/gateway.sock`);
    env.MCPBENCH_GATEWAY_URL = `http://127.0.0.1:${GATEWAY_PORT}/mcp`;
    request.gateway.url = env.MCPBENCH_GATEWAY_URL;
  }
  if (!allowHosts?.length) return { forwards };
  const proxy = await EgressProxy.listen(join(work, 'proxy.sock'), allowHosts, context.onEgress);
  chmodSync(join(work, 'proxy.sock'), 0o666);
  forwards.push(`${PROXY_PORT}=${SOCKETS_INSIDE}/proxy.sock`);
  const url = `http://127.0.0.1:${PROXY_PORT}`;
  Object.assign(env, { HTTPS_PROXY: url, HTTP_PROXY: url, https_proxy: url, http_proxy: url, NO_PROXY: '127.0.0.1,localhost,::1', no_proxy: '127.0.0.1,localhost,::1' });
  return { forwards, proxy };
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Where the runner's side of an agent goes: the episode's workspace, unless its socket paths would be too long. */
export function workParent(context: AgentContext): string {
  const workspace = context.workspace;
  return workspace && Buffer.byteLength(join(workspace, 'agent-XXXXXX', 'gateway.sock')) <= MAX_SOCKET_PATH ? workspace : tmpdir();
}

interface ProcessSettings {
  deadlineMs: number;
  killGraceMs: number;
  overStdio: boolean;
  /** The agent's program (for messages). */
  program: string;
  /** The backend a confined agent runs in: until its forwarder says the sandbox is up, a failure is ours. */
  sandbox?: string;
  /** Resolves when the forwarder says the sandbox is up (on its readiness socket); needed with `sandbox`. */
  ready?: Promise<void>;
}

export function runProcess(
  spec: { command: string; args: string[]; env: Record<string, string> },
  cwd: string | undefined,
  context: AgentContext,
  request: ReturnType<typeof buildAgentRequest>,
  { deadlineMs, killGraceMs, overStdio, program, sandbox, ready }: ProcessSettings,
): Promise<AgentOutcome> {
  return new Promise<AgentOutcome>((resolvePromise, reject) => {
    const child = spawn(spec.command, spec.args, {
      cwd,
      env: spec.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      // Its own process group, so that a kill reaches whatever the agent spawned.
      detached: true,
    });
    let answer: string | undefined;
    let pending = '';
    let stderr = '';
    let stopping: 'abort' | 'timeout' | undefined;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let spawnError: Error | undefined;
    let sandboxUp = sandbox === undefined;
    let graceTimer: NodeJS.Timeout | undefined;

    const takeLine = (line: string) => {
      const clean = line.endsWith('\r') ? line.slice(0, -1) : line;
      if (clean.startsWith(ANSWER_PREFIX)) answer = clean.slice(ANSWER_PREFIX.length).trim();
    };
    // The answer comes on stdout, or on stderr when stdout carries MCP.
    const answers = overStdio ? child.stderr : child.stdout;
    answers.setEncoding('utf8');
    answers.on('data', (chunk: string) => {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) takeLine(line);
      if (pending.length > MAX_LINE_CHARS) pending = '';
    });
    void ready?.then(() => (sandboxUp = true));
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-STDERR_TAIL_CHARS);
    });
    // The agent need not read its stdin; a closed pipe is not an error.
    child.stdin.on('error', () => {});
    if (overStdio) {
      context.gateway.serveStdio?.({ stdin: child.stdout, stdout: child.stdin }).catch(() => undefined);
    } else {
      child.stdout.resume();
      child.stdin.end(`${JSON.stringify(request)}\n`);
    }

    const killGroup = (signal: NodeJS.Signals) => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, signal);
      } catch {
        // ESRCH: the group is already gone. Elsewhere (no process groups) fall back to the child alone.
        if (exit === undefined) child.kill(signal);
      }
    };
    const stop = (why: 'abort' | 'timeout') => {
      if (stopping || exit) return;
      stopping = why;
      killGroup('SIGTERM');
      graceTimer = setTimeout(() => killGroup('SIGKILL'), killGraceMs);
    };
    const onAbort = () => stop('abort');
    context.signal.addEventListener('abort', onAbort, { once: true });
    const deadline = setTimeout(() => stop('timeout'), deadlineMs);

    child.on('error', (error) => {
      spawnError = error;
    });
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      // Children the agent left behind (same group) must not outlive the episode.
      killGroup('SIGKILL');
    });
    child.on('close', (code, signal) => {
      // A readiness signal sent before the agent ran may still be unread: wait a moment for it, never for long.
      if (!sandboxUp && ready) void Promise.race([ready, new Promise((r) => setTimeout(r, READY_GRACE_MS))]).then(() => ended(code, signal));
      else ended(code, signal);
    });
    const ended = (code: number | null, signal: NodeJS.Signals | null) => {
      clearTimeout(deadline);
      if (graceTimer) clearTimeout(graceTimer);
      context.signal.removeEventListener('abort', onAbort);
      if (pending) takeLine(pending);
      const status = exit ?? { code, signal };
      const ended = { exited: true, exit_code: status.code, signal: status.signal, ...(stderr.trim() ? { stderr_tail: tail(stderr) } : {}) };
      if (!sandboxUp) {
        // The agent never started, whoever stopped it (its deadline, or the episode's timeout first): ours.
        const how = spawnError
          ? `could not be started (${spec.command}: ${spawnError.message})`
          : stopping === 'timeout'
            ? `did not come up within ${deadlineMs} ms`
            : stopping === 'abort'
              ? 'had not come up when the episode ended'
              : `ended before the agent started (${status.code === null ? `killed by ${status.signal ?? 'a signal'}` : `exit code ${status.code}`})`;
        const reason = `the command agent's ${sandbox} sandbox ${how}`;
        return reject(new AgentSetupError(reason, ended, reason + stderrNote(stderr)));
      }
      if (stopping === 'abort') {
        // Ended by the episode (timeout, a runaway): its reason, with what became of the process.
        const reason: unknown = context.signal.reason;
        return reject(reason instanceof AgentError ? new AgentError(reason.code, reason.reason, { ...ended, ...reason.fields }) : reason);
      }
      if (stopping === 'timeout') {
        const reason = `command agent: timed out after ${deadlineMs} ms and was killed`;
        return reject(new AgentError('agent-timeout', reason, ended, reason + stderrNote(stderr)));
      }
      if (spawnError) {
        const reason = `command agent: could not start ${program}: ${spawnError.message}`;
        return reject(new AgentError('agent-spawn', reason, { exited: true }));
      }
      if (status.code !== 0) {
        const how = status.code === null ? `was killed by ${status.signal ?? 'a signal'}` : `exited with code ${status.code}`;
        return reject(new AgentError('agent-exit', `command agent ${how}`, ended, `command agent ${how}${stderrNote(stderr)}`));
      }
      resolvePromise(answer !== undefined ? { answer } : {});
    };
  });
}

function stderrNote(stderr: string): string {
  return stderr.trim() ? `; stderr:\n${tail(stderr)}` : ' (no stderr)';
}
