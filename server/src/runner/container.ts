/**
 * What the container backends (`docker`, `podman`) need of their engine, apart from the confinement itself
 * (sandbox.ts turns a confinement into `run` flags): whether the engine answers and runs the sandbox image,
 * the limits it gives a container by default, the split between the engine's own environment and the
 * container's, and a supervisor that makes a container's life end with the process the runner spawned.
 *
 * Why a supervisor: the runner stops a sandbox by signalling the process it spawned (the MCP client's
 * SIGTERM, a command agent's process group), and a signalled `podman run` client dies without stopping its
 * container (podman 4.3 does not proxy the signal; a SIGKILL never can), which would keep an agent or a
 * server running after its episode. The supervisor runs the engine client, and removes the container
 * (`rm --force`, in a process of its own that outlives a group kill, bounded to a minute) when it is
 * signalled, when the client dies of a signal, or when the runner that spawned it is gone.
 */
import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { processAlive } from '../folder-lock.ts';

export const CONTAINER_ENGINES = ['docker', 'podman'] as const;
export type ContainerEngine = (typeof CONTAINER_ENGINES)[number];

/** The label every sandbox container carries (`podman ps --filter label=mcpbench.sandbox`). */
export const SANDBOX_LABEL = 'mcpbench.sandbox';

/** A fresh container name: the runner's pid and a random part. */
export function containerName(kind: string): string {
  return `mcpbench-${kind}-${process.pid}-${randomBytes(4).toString('hex')}`;
}

// ------------------------------------------------------------------------------------------ environment

/**
 * Variables of the runner's environment the engine client itself needs (where its daemon, socket, storage
 * and configuration are). They reach the engine, never the container: a container gets only the variables
 * of its own environment, by name.
 */
export const ENGINE_ENV_PASSED = [
  'PATH', 'HOME', 'USER', 'LOGNAME', 'TMPDIR', 'XDG_RUNTIME_DIR', 'XDG_CONFIG_HOME', 'XDG_DATA_HOME',
  'DOCKER_HOST', 'DOCKER_CONTEXT', 'DOCKER_CONFIG', 'DOCKER_CERT_PATH', 'DOCKER_TLS_VERIFY',
  'CONTAINER_HOST', 'CONTAINER_CONNECTION', 'CONTAINER_SSHKEY', 'CONTAINERS_CONF', 'CONTAINERS_STORAGE_CONF', 'CONTAINERS_REGISTRIES_CONF', 'REGISTRY_AUTH_FILE',
] as const;

/** The engine client's own environment, from the runner's. */
export function engineEnvironment(from: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ENGINE_ENV_PASSED) {
    const value = from[name];
    if (value !== undefined) env[name] = value;
  }
  env.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  return env;
}

/**
 * How a container's environment is given to the engine: `--env NAME` for most (the value travels in the
 * engine client's environment, never on a command line that `ps` shows), `--env NAME=value` for the few
 * whose name the engine client or the supervisor's Node reads itself (HOME, PATH, NODE_*). Returns the
 * flags and the environment to run the engine client with.
 */
export function containerEnvironment(container: Record<string, string>, engine: Record<string, string> = engineEnvironment()): { flags: string[]; env: Record<string, string> } {
  const flags: string[] = [];
  const env = { ...engine };
  for (const [name, value] of Object.entries(container)) {
    const ownName = (ENGINE_ENV_PASSED as readonly string[]).includes(name) || name.startsWith('NODE_');
    if (ownName) flags.push('--env', `${name}=${value}`);
    else {
      flags.push('--env', name);
      env[name] = value;
    }
  }
  return { flags, env };
}

// --------------------------------------------------------------------------------------------- probing

/** `<engine> info --format json`: podman's shape (`version.Version`), or Docker's (`ServerVersion`). */
const podmanInfo = z.object({
  version: z.object({ Version: z.string().min(1) }),
  host: z.object({
    ociRuntime: z.object({ name: z.string() }).partial().optional(),
    security: z.object({ rootless: z.boolean() }).partial().optional(),
    cgroupVersion: z.string().optional(),
  }).partial().optional(),
});
const dockerInfo = z.object({ ServerVersion: z.string().min(1), DefaultRuntime: z.string().optional(), CgroupVersion: z.string().optional() });

/** The engine's answer in words ("podman 4.3.1, runc, rootful, cgroups v1"), or undefined when it is neither shape. */
export function describeEngineInfo(engine: ContainerEngine, json: string): string | undefined {
  let data: unknown;
  try {
    data = JSON.parse(json);
  } catch {
    return undefined;
  }
  const podman = podmanInfo.safeParse(data);
  if (podman.success) {
    const host = podman.data.host;
    const rootless = host?.security?.rootless;
    const parts = [host?.ociRuntime?.name, rootless === undefined ? undefined : rootless ? 'rootless' : 'rootful', host?.cgroupVersion ? `cgroups ${host.cgroupVersion}` : undefined];
    // `docker` can be podman's Docker-compatible client or socket: say what answered.
    return `podman ${podman.data.version.Version}${engine === 'docker' ? ' (answering as docker)' : ''}${describeParts(parts)}`;
  }
  const docker = dockerInfo.safeParse(data);
  if (docker.success) {
    const parts = [docker.data.DefaultRuntime, docker.data.CgroupVersion ? `cgroups v${docker.data.CgroupVersion}` : undefined];
    return `${engine === 'docker' ? 'engine' : 'docker-compatible engine'} ${docker.data.ServerVersion}${describeParts(parts)}`;
  }
  return undefined;
}

function describeParts(parts: (string | undefined)[]): string {
  const some = parts.filter((p): p is string => Boolean(p));
  return some.length ? `, ${some.join(', ')}` : '';
}

/** What a container of this engine and image gets by default, read from inside one. */
export interface ContainerDefaults {
  /** The image's Node version (`v20.20.2`). */
  node: string;
  /** The engine's default process and open-file limits (soft, hard), kept when the sandbox sets its own. */
  nproc: [string, string];
  nofile: [string, string];
}

const LIMITS_PROBE = `const l=require('fs').readFileSync('/proc/self/limits','utf8');const g=(n)=>{const m=new RegExp(n+'\\\\s+(\\\\S+)\\\\s+(\\\\S+)').exec(l);return m?[m[1],m[2]]:['unlimited','unlimited']};console.log(JSON.stringify({node:process.version,nproc:g('Max processes'),nofile:g('Max open files')}))`;
const limitPair = z.tuple([z.string(), z.string()]);
const defaultsSchema = z.object({ node: z.string(), nproc: limitPair, nofile: limitPair });

export interface EngineStatus {
  works: boolean;
  detail: string;
  defaults?: ContainerDefaults;
}

const probed = new Map<string, EngineStatus>();

/**
 * Whether `engine` answers and runs `image` here: `info` (what each engine really answers, both shapes),
 * then one container of the image with no network and no pull, which reads the limits the engine gives by
 * default. Cached per engine and image for the life of the process.
 */
export function probeEngine(engine: ContainerEngine, image: string): EngineStatus {
  const key = `${engine} ${image}`;
  const known = probed.get(key);
  if (known) return known;
  const status = probeUncached(engine, image);
  probed.set(key, status);
  return status;
}

function probeUncached(engine: ContainerEngine, image: string): EngineStatus {
  const env = engineEnvironment();
  const run = (args: string[]) => spawnSync(engine, args, { encoding: 'utf8', timeout: 30_000, env });
  const firstLine = (r: { stdout: string; stderr: string }) => (r.stderr || r.stdout).trim().split('\n').find((l) => l.trim()) ?? '';
  const info = run(['info', '--format', 'json']);
  if (info.error) return { works: false, detail: (info.error as NodeJS.ErrnoException).code === 'ENOENT' ? 'not installed' : `does not answer: ${info.error.message}` };
  const described = info.status === 0 ? describeEngineInfo(engine, info.stdout) : undefined;
  if (!described) return { works: false, detail: `no engine: ${firstLine(info) || `${engine} info exited with ${info.status}`}` };
  const probe = run(['run', '--rm', '--pull', 'never', '--network', 'none', '--log-driver', 'none', '--label', `${SANDBOX_LABEL}=probe`, image, 'node', '-e', LIMITS_PROBE]);
  const parsed = probe.status === 0 ? defaultsSchema.safeParse(safeJson(probe.stdout.trim().split('\n').pop() ?? '')) : undefined;
  if (!parsed?.success) {
    return {
      works: false,
      detail: `${described}; the sandbox image ${image} does not run Node here (${firstLine(probe) || `exit ${probe.status}`}): pull or build it, or name another with MCPBENCH_SANDBOX_IMAGE`,
    };
  }
  return { works: true, detail: `${described}; image ${image} with Node ${parsed.data.node}`, defaults: parsed.data };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** `--ulimit` flags for the engine's default process and open-file limits (podman drops its defaults once any `--ulimit` is given). */
export function defaultUlimitFlags(defaults: ContainerDefaults | undefined): string[] {
  if (!defaults) return [];
  const value = (v: string) => (v === 'unlimited' ? '-1' : v);
  const flag = (name: string, [soft, hard]: [string, string]) => ['--ulimit', `${name}=${value(soft)}:${value(hard)}`];
  return [...flag('nproc', defaults.nproc), ...flag('nofile', defaults.nofile)];
}

/** Whether an image is present on this machine (nothing is ever pulled at run time); its id when it is. */
export function imageId(engine: ContainerEngine, image: string): string | undefined {
  const result = spawnSync(engine, ['image', 'inspect', '--format', '{{.Id}}', image], { encoding: 'utf8', timeout: 30_000, env: engineEnvironment() });
  const id = result.status === 0 ? result.stdout.trim().split('\n')[0] : undefined;
  return id ? id : undefined;
}

// ------------------------------------------------------------------------------------------ supervision

/**
 * The supervisor (plain Node, no dependencies). argv: engine, container name, then the engine client's
 * arguments. Its stdio is the client's; its exit status is the client's.
 */
const SUPERVISOR = `
const { spawn } = require('node:child_process');
const { constants } = require('node:os');
const [engine, name, ...args] = process.argv.slice(1);
const parent = process.ppid;
let removing = false;
const remove = () => {
  if (removing) return;
  removing = true;
  // A session of its own, so the group kill that ends this process does not end the removal; bounded.
  const rm = [engine, 'rm', '--force', ...(engine === 'podman' ? ['--time', '0'] : []), name];
  spawn(process.execPath, ['-e', "const c = require('node:child_process').spawn(process.argv[1], process.argv.slice(2), { stdio: 'ignore' }); const t = setTimeout(() => c.kill('SIGKILL'), 60000); c.on('exit', () => clearTimeout(t)); c.on('error', () => clearTimeout(t));", ...rm], { detached: true, stdio: 'ignore' }).unref();
};
const client = spawn(engine, args, { stdio: 'inherit' });
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, () => { remove(); client.kill(signal); });
setInterval(() => { if (process.ppid !== parent) { remove(); client.kill('SIGTERM'); } }, 1000).unref();
client.on('error', (e) => { process.stderr.write('cannot run ' + engine + ': ' + e.message + '\\n'); process.exit(127); });
client.on('exit', (code, signal) => {
  if (signal || removing) remove();
  process.exit(code ?? 128 + (constants.signals[signal] || 9));
});
`;

/** The process the runner spawns for a container: the supervisor running `<engine> <clientArgs>`. */
export function supervised(engine: ContainerEngine, name: string, clientArgs: string[], env: Record<string, string>): { command: string; args: string[]; env: Record<string, string> } {
  return { command: process.execPath, args: ['-e', SUPERVISOR, engine, name, ...clientArgs], env };
}

/** Removes containers by name (gone already is fine); resolves when the engine is done, or after `timeoutMs`. */
export function removeContainers(engine: ContainerEngine, names: string[], timeoutMs = 60_000): Promise<void> {
  if (!names.length) return Promise.resolve();
  // podman stops at the first name it does not know unless told to ignore it (docker goes on by itself).
  const args = ['rm', '--force', ...(engine === 'podman' ? ['--ignore', '--time', '0'] : []), ...names];
  return new Promise((resolve) => {
    const child = execFile(engine, args, { timeout: timeoutMs, killSignal: 'SIGKILL', env: engineEnvironment() }, () => resolve());
    child.stdin?.end();
  });
}

/** Names of this machine's containers that carry a label (running or not). */
export function labelledContainers(engine: ContainerEngine, label: string): string[] {
  const result = spawnSync(engine, ['ps', '--all', '--filter', `label=${label}`, '--format', '{{.Names}}'], { encoding: 'utf8', timeout: 30_000, env: engineEnvironment() });
  return result.status === 0 ? result.stdout.split('\n').map((l) => l.trim()).filter(Boolean) : [];
}

/** The runner pid a sandbox container's name carries (`mcpbench-<kind>-<pid>-<random>`). */
export function runnerPidOf(name: string): number | undefined {
  const match = /^mcpbench-[a-z]+-(\d+)-[0-9a-f]+$/.exec(name);
  return match ? Number(match[1]) : undefined;
}

const alive = processAlive;

/**
 * Removes the sandbox containers whose runner is gone from this machine: what a runner killed together with its
 * supervisors (a SIGKILL to its whole process group) left running. Returns their names.
 */
export async function removeOrphans(engine: ContainerEngine): Promise<string[]> {
  const orphans = labelledContainers(engine, SANDBOX_LABEL).filter((name) => {
    const pid = runnerPidOf(name);
    return pid !== undefined && pid !== process.pid && !alive(pid);
  });
  await removeContainers(engine, orphans);
  return orphans;
}
