/**
 * Sandbox backends: how an MCP server (or a command agent) is confined with least privilege. A confinement
 * (what the process may reach) is data; each backend turns it into a command line.
 *
 * - `bwrap` (bubblewrap, the default on Linux where it works): every namespace unshared (user, PID, IPC, UTS,
 *   cgroup, network: loopback only), an unprivileged user inside (uid/gid 65534) with every capability
 *   dropped, an empty root holding only the system's binary and library folders, a short list of /etc files,
 *   Node and what the confinement names, each read-only; a private size-limited /tmp, a fresh /proc, a
 *   minimal /dev; limits on processes, file size and memory (prlimit inside the sandbox); a new session, and
 *   killed with its parent. When the runner is root, the sandbox also runs as host user 65534 (setpriv): a
 *   process limit does not bind host root, and an escape lands as nobody.
 * - `docker` / `podman`: the same as container flags: `--network none --read-only --cap-drop ALL
 *   --security-opt no-new-privileges`, an unprivileged user, pids/memory/file-size/data limits, a
 *   size-limited /tmp, and only the confinement's folders mounted (the system's are the image's own). Needs
 *   an image with Node 20 (and git, for the git namespace) present on the machine (default
 *   `mcpbench-sandbox`, built from deploy/sandbox.Dockerfile, or `MCPBENCH_SANDBOX_IMAGE`; nothing is pulled). The spawned process is a supervisor (container.ts) that
 *   removes the container when it is signalled or its runner is gone.
 * - `process`: a plain child process. Nothing is isolated but the environment: the process can reach the
 *   network and write anywhere the user can. Only the last resort, and it says so.
 *
 * The environment is never inherited: the caller gives the complete, allow-listed environment.
 */
import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, lstatSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { packageRoot } from '../paths.ts';
import { containerEnvironment, containerName, defaultUlimitFlags, probeEngine, removeOrphans, SANDBOX_LABEL, supervised, type ContainerEngine } from './container.ts';
import { McpbenchError } from '../errors.ts';

export const SANDBOX_BACKENDS = ['bwrap', 'docker', 'podman', 'process'] as const;
export type SandboxBackend = (typeof SANDBOX_BACKENDS)[number];

export interface LaunchSpec {
  command: string;
  args: string[];
  /** The complete environment of the process (nothing else is inherited). */
  env?: Record<string, string>;
  /** The container it runs in (container backends): gone when the process ends, `removeContainers` to be sure. */
  container?: { engine: ContainerEngine; name: string };
}

export const PROCESS_BACKEND_WARNING =
  'sandbox backend `process`: the server runs as a plain child process; it is NOT isolated from the network and can write outside its sandbox';

/** The sandbox image (deploy/sandbox.Dockerfile: Node 20 and git), built on the machine; nothing is pulled. */
export const DEFAULT_CONTAINER_IMAGE = 'mcpbench-sandbox';

/** The unprivileged user (and group) a sandboxed process runs as: `nobody` on Debian. */
export const SANDBOX_UID = 65534;
export const SANDBOX_GID = 65534;

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

export interface SandboxLimits {
  /** Processes (threads included) the sandbox may have at once (RLIMIT_NPROC; `--pids-limit`). */
  processes: number;
  /** Largest file it may write (RLIMIT_FSIZE): a bigger write fails with EFBIG. */
  fileSizeBytes: number;
  /** Data memory of each process (RLIMIT_DATA; `--memory` for containers). */
  memoryBytes: number;
  /** Size of its private /tmp. */
  tmpBytes: number;
  /** Size of its /dev/shm (the rest of /dev is read-only): memory-backed, so bounded like /tmp. */
  shmBytes: number;
}

/** A server: PGlite's worker threads and git's children fit easily; a fork bomb or a runaway file does not. */
export const SERVER_LIMITS: SandboxLimits = { processes: 256, fileSizeBytes: 1 * GiB, memoryBytes: 4 * GiB, tmpBytes: 64 * MiB, shmBytes: 16 * MiB };
/** A command agent: an interpreter and its children; its scratch folder has a size of its own. */
export const AGENT_LIMITS: SandboxLimits = { processes: 512, fileSizeBytes: 1 * GiB, memoryBytes: 8 * GiB, tmpBytes: 256 * MiB, shmBytes: 64 * MiB };

/** The host's system folders (binaries and libraries), read-only in every sandbox. */
export const SYSTEM_FOLDERS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'] as const;

/** What of /etc a server sees: the dynamic linker's cache, users and groups, name-service and time settings. */
export const SERVER_ETC = ['ld.so.cache', 'ld.so.conf', 'ld.so.conf.d', 'passwd', 'group', 'nsswitch.conf', 'hosts', 'host.conf', 'localtime', 'alternatives'] as const;
/** What of /etc an agent sees: the server's list plus TLS certificates and what interpreters read at start. */
export const AGENT_ETC = [...SERVER_ETC, 'ssl', 'ca-certificates', 'ca-certificates.conf', 'resolv.conf', 'gai.conf', 'protocols', 'services', 'mime.types', 'os-release', 'debian_version', 'python3'] as const;

/** What a sandboxed process may reach; everything else of the host is absent. */
export interface Confinement {
  /** Working directory (one of the folders below). */
  cwd: string;
  /** Folders bound read-write at their own path (a server's sandbox folder). */
  writable: string[];
  /** Files and folders bound read-only at their own path, beyond the system folders and Node. */
  readOnly: string[];
  /** Host folders bound read-only at another path inside (the agent's socket folder at /run/mcpbench). */
  mounts?: { source: string; target: string }[];
  /** Files inside a bound folder replaced by an empty file (task files under an agent's folder). */
  hidden?: string[];
  /** Folders inside a bound folder replaced by an empty read-only one (the run folder, `.git` under an agent's folder). */
  hiddenFolders?: string[];
  /** A private, size-limited, writable folder (the agent's scratch), gone when the process ends. */
  scratch?: { path: string; bytes: number };
  /** `none`: loopback only. `host`: the host's network (a postgres server on the user's own Postgres). */
  network: 'none' | 'host';
  /** The /etc entries it sees (SERVER_ETC or AGENT_ETC). */
  etc: readonly string[];
  limits: SandboxLimits;
}

/** The package files a server needs to run: Node's own folder (when not a system one) and the runtime parts of the package. */
export function runtimePaths(): string[] {
  const root = packageRoot();
  return [...nodeFolders(), ...['dist', 'node_modules', 'schemas', 'package.json'].map((p) => join(root, p)).filter((p) => existsSync(p))];
}

/** The installation folder of the running Node, unless it lies in a system folder already bound: [] or [folder]. */
export function nodeFolders(): string[] {
  const prefix = nodePrefix();
  return prefix ? [prefix] : [];
}

/** The installation folder of the running Node, unless it lies in a system folder already bound. */
function nodePrefix(): string | undefined {
  const bin = dirname(process.execPath);
  if (SYSTEM_FOLDERS.some((f) => bin === f || bin.startsWith(`${f}/`))) return undefined;
  // `<prefix>/bin/node`: the prefix holds its lib/ (npm, headers); a lone binary is bound alone.
  return bin.endsWith('/bin') ? dirname(bin) : bin;
}

/** A server's confinement: its sandbox folder read-write, the runtime read-only, no network. */
export function serverConfinement(sandbox: string, network: 'none' | 'host' = 'none'): Confinement {
  return { cwd: sandbox, writable: [sandbox], readOnly: runtimePaths(), network, etc: SERVER_ETC, limits: SERVER_LIMITS };
}

/**
 * Variables of the runner's environment a server may see: the locale and time zone, and the documented
 * settings servers read. Nothing else is passed on (no keys, no tokens, no proxy settings, no NODE_OPTIONS).
 */
export const SERVER_ENV_PASSED = ['LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'MCPBENCH_PG_STATEMENT_TIMEOUT_MS'] as const;

/** A server's whole environment: a fixed PATH, HOME in its sandbox, the passed variables, and its own settings. */
export function serverEnvironment(sandbox: string, own: Record<string, string> = {}, from: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: sandbox };
  for (const name of SERVER_ENV_PASSED) {
    const value = from[name];
    if (value !== undefined) env[name] = value;
  }
  return { ...env, ...own };
}

/** The paths (deduplicated, none inside another) that lie under /tmp. */
export function underTmp(paths: string[]): string[] {
  const inTmp = [...new Set(paths.map((p) => resolve(p)))].filter((p) => p.startsWith('/tmp/'));
  return inTmp.filter((p) => !inTmp.some((q) => q !== p && p.startsWith(`${q}/`)));
}

// ------------------------------------------------------------------------------------------- identity

/**
 * The host user a sandbox runs as. The caller's own, except for root: then host user 65534, so that the
 * process limit binds (the kernel never applies RLIMIT_NPROC to host root) and an escape is nobody. That
 * needs every bound path reachable by others; when one is not (a Node under /root), the sandbox keeps the
 * caller's identity and says so in `identityNote`.
 */
export function sandboxIdentity(confinement?: Pick<Confinement, 'readOnly' | 'writable' | 'mounts'>): { dropToNobody: boolean; note: string } {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return { dropToNobody: false, note: 'runs as the calling user' };
  // Read-only paths must be readable; writable ones (chowned to nobody) and mounted socket folders only reachable.
  const read = confinement ? confinement.readOnly : runtimePaths();
  const reach = confinement ? [...confinement.writable, ...(confinement.mounts ?? []).map((m) => m.source)] : [];
  const blocked = read.find((p) => !othersCanReach(p, true)) ?? reach.find((p) => !othersCanReach(p, false));
  if (blocked) return { dropToNobody: false, note: `runs as host root inside a user namespace (${blocked} is out of other users' reach, so it cannot run as nobody; processes are not limited)` };
  return { dropToNobody: true, note: `runs as host user ${SANDBOX_UID} (nobody)` };
}

/** Whether a user other than the owner can traverse to `path` (and read it, when asked). */
function othersCanReach(path: string, read: boolean): boolean {
  try {
    for (let dir = dirname(resolve(path)); ; dir = dirname(dir)) {
      if ((statSync(dir).mode & 0o001) === 0) return false;
      if (dirname(dir) === dir) break;
    }
    return !read || (statSync(path).mode & 0o004) !== 0;
  } catch {
    return false;
  }
}

/**
 * Gets a writable folder ready for a sandbox that runs as nobody: the folder and what is in it owned by
 * nobody (the runner, root, still reads and removes it), its parent traversable. Nothing to do otherwise.
 */
export function prepareWritable(confinement: Confinement, backend: SandboxBackend): void {
  if (backend === 'process' || !sandboxIdentity(confinement).dropToNobody) return;
  for (const folder of confinement.writable) {
    chownTree(folder, SANDBOX_UID, SANDBOX_GID);
  }
}

function chownTree(path: string, uid: number, gid: number): void {
  const stat = lstatSync(path);
  if (stat.uid !== uid || stat.gid !== gid) chownSync(path, uid, gid);
  if (stat.isDirectory()) for (const entry of readdirSync(path)) chownTree(join(path, entry), uid, gid);
}

// --------------------------------------------------------------------------------------------- backends

/** The command that runs `spec` under `confinement` with the given backend. */
export function sandboxed(backend: SandboxBackend, spec: LaunchSpec, confinement: Confinement, image = containerImage()): LaunchSpec {
  const env = spec.env ?? {};
  switch (backend) {
    case 'bwrap':
      return bwrapCommand(spec, env, confinement);
    case 'docker':
    case 'podman':
      return containerCommand(backend, spec, confinement, image);
    case 'process':
      return { command: spec.command, args: spec.args, env };
  }
}

export function containerImage(): string {
  return process.env.MCPBENCH_SANDBOX_IMAGE?.trim() || DEFAULT_CONTAINER_IMAGE;
}

/** `--ro-bind` for a host folder that may be a symlink (merged /usr: /bin -> usr/bin) or absent. */
function systemBind(path: string): string[] {
  let stat;
  try {
    stat = lstatSync(path);
  } catch {
    return [];
  }
  if (stat.isSymbolicLink()) return ['--symlink', readlinkSync(path), path];
  return ['--ro-bind', path, path];
}

/** Environment variables the MCP SDK adds to every stdio server it spawns; unset inside. */
const SPAWN_DEFAULTS = ['LOGNAME', 'SHELL', 'TERM', 'USER'];

function bwrapCommand(spec: LaunchSpec, env: Record<string, string>, c: Confinement): LaunchSpec {
  const identity = sandboxIdentity(c);
  const args = [
    '--unshare-all',
    ...(c.network === 'host' ? ['--share-net'] : []),
    '--unshare-user', '--uid', String(SANDBOX_UID), '--gid', String(SANDBOX_GID),
    '--cap-drop', 'ALL',
    '--die-with-parent', '--new-session',
    '--hostname', 'mcpbench-sandbox',
    ...SYSTEM_FOLDERS.flatMap(systemBind),
    ...c.etc.flatMap((name) => ['--ro-bind-try', `/etc/${name}`, `/etc/${name}`]),
    '--proc', '/proc',
    // A minimal /dev, read-only but for a sized /dev/shm: nothing memory-backed in it is unbounded.
    '--dev', '/dev',
    '--size', String(c.limits.shmBytes), '--perms', '1777', '--tmpfs', '/dev/shm',
    '--remount-ro', '/dev',
    '--size', String(c.limits.tmpBytes), '--tmpfs', '/tmp',
    // After the private /tmp, so what lies under the real /tmp (a checkout, the sandbox) is the real one.
    ...c.readOnly.flatMap((path) => ['--ro-bind', path, path]),
    ...(c.mounts ?? []).flatMap((m) => ['--ro-bind', m.source, m.target]),
    ...c.writable.flatMap((path) => ['--bind', path, path]),
    ...(c.hidden ?? []).flatMap((path) => ['--ro-bind', '/dev/null', path]),
    ...(c.hiddenFolders ?? []).flatMap((path) => ['--size', '4096', '--perms', '0500', '--tmpfs', path, '--remount-ro', path]),
    ...(c.scratch ? ['--size', String(c.scratch.bytes), '--tmpfs', c.scratch.path, '--chmod', '0700', c.scratch.path] : []),
    // The root itself (a tmpfs holding the mount points) becomes read-only: nothing unbounded to fill.
    '--remount-ro', '/',
    '--chdir', c.cwd,
    ...SPAWN_DEFAULTS.filter((name) => !(name in env)).flatMap((name) => ['--unsetenv', name]),
    '--setenv', 'HOME', env.HOME ?? c.cwd,
    // Limits are set inside, after bubblewrap made the user namespace: a namespace keeps the limit it was
    // made with as the ceiling for the host user's other processes, which must not be bound by ours.
    'prlimit', `--nproc=${c.limits.processes}`, `--fsize=${c.limits.fileSizeBytes}`, `--data=${c.limits.memoryBytes}`, '--core=0', '--',
    spec.command, ...spec.args,
  ];
  if (identity.dropToNobody) {
    return { command: 'setpriv', args: ['--reuid', String(SANDBOX_UID), '--regid', String(SANDBOX_GID), '--clear-groups', '--', 'bwrap', ...args], env };
  }
  return { command: 'bwrap', args, env };
}

/** What a container is, beyond the confinement: its image, its name, and whose network it joins (the image agent's sidecar). */
export interface ContainerSettings {
  image: string;
  name?: string;
  /** `container:<name>`: share that container's network (its loopback) instead of `--network none`. */
  joinNetworkOf?: string;
  /** Run the image's own entrypoint and command (the command's words, if any, are its arguments). */
  imageEntrypoint?: boolean;
}

/**
 * The `run`/`create` arguments (after the verb) that confine a container as `c` says, and the engine client's
 * environment: the container's variables by name (values in the client's environment, never on the command
 * line), the engine's own from the runner's. `--init` makes a signal reach the process; nothing is pulled.
 */
export function containerArguments(engine: ContainerEngine, spec: LaunchSpec, c: Confinement, settings: ContainerSettings): { args: string[]; env: Record<string, string>; name: string } {
  const identity = sandboxIdentity(c);
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const user = identity.dropToNobody || typeof process.getuid !== 'function' ? `${SANDBOX_UID}:${SANDBOX_GID}` : `${process.getuid()}:${process.getgid!()}`;
  // The command's own node is the container's; the command's first word is replaced by `node`.
  const command = spec.command === process.execPath ? 'node' : spec.command;
  // Node's folder is the image's own; the rest of the runtime is mounted at its host path.
  const readOnly = c.readOnly.filter((p) => p !== nodePrefix());
  const name = settings.name ?? containerName('sandbox');
  const { flags: envFlags, env } = containerEnvironment(spec.env ?? {});
  // The engine's defaults are the engine's, read once from a container of the sandbox image.
  const defaults = probeEngine(engine, containerImage()).defaults;
  const args = [
    '--rm', '-i', '--init', '--pull', 'never', '--log-driver', 'none',
    '--name', name, '--label', `${SANDBOX_LABEL}=${process.pid}`,
    '--network', settings.joinNetworkOf ? `container:${settings.joinNetworkOf}` : c.network === 'host' ? 'host' : 'none',
    ...(settings.joinNetworkOf ? [] : ['--hostname', 'mcpbench-sandbox']),
    '--read-only',
    '--cap-drop', 'ALL',
    '--security-opt', 'no-new-privileges',
    '--user', user,
    // Rootless podman maps the caller's own uid onto itself, so its folders stay writable inside.
    ...(engine === 'podman' && !root ? ['--userns', 'keep-id'] : []),
    '--pids-limit', String(c.limits.processes),
    '--memory', String(c.limits.memoryBytes),
    ...defaultUlimitFlags(defaults),
    '--ulimit', `fsize=${c.limits.fileSizeBytes}:${c.limits.fileSizeBytes}`,
    '--ulimit', `data=${c.limits.memoryBytes}:${c.limits.memoryBytes}`,
    '--ulimit', 'core=0:0',
    '--tmpfs', `/tmp:rw,size=${c.limits.tmpBytes},mode=1777`,
    '--shm-size', String(c.limits.shmBytes),
    ...(c.scratch ? ['--tmpfs', `${c.scratch.path}:rw,exec,size=${c.scratch.bytes},mode=1777`] : []),
    ...readOnly.flatMap((path) => ['--volume', `${path}:${path}:ro`]),
    ...(c.mounts ?? []).flatMap((m) => ['--volume', `${m.source}:${m.target}:ro`]),
    ...c.writable.flatMap((path) => ['--volume', `${path}:${path}:rw`]),
    ...(c.hidden ?? []).flatMap((path) => ['--volume', `/dev/null:${path}:ro`]),
    ...(c.hiddenFolders ?? []).flatMap((path) => ['--tmpfs', `${path}:ro,size=4k,mode=0500`]),
    // An image's own entrypoint runs where the image says.
    ...(settings.imageEntrypoint ? [] : ['--workdir', c.cwd]),
    ...envFlags,
    settings.image,
    ...(settings.imageEntrypoint ? spec.args : [command, ...spec.args]),
  ];
  return { args, env, name };
}

function containerCommand(engine: ContainerEngine, spec: LaunchSpec, c: Confinement, image: string): LaunchSpec {
  const { args, env, name } = containerArguments(engine, spec, c, { image });
  return { ...supervised(engine, name, ['run', ...args], env), container: { engine, name } };
}

// ------------------------------------------------------------------------------------------ the probes

export interface BackendStatus {
  backend: SandboxBackend;
  works: boolean;
  detail: string;
}

/** Whether one backend works on this machine: it runs a trivial confined command. */
export function probeBackend(backend: SandboxBackend): BackendStatus {
  const probe = (command: string, args: string[]) => spawnSync(command, args, { encoding: 'utf8', timeout: 15_000 });
  switch (backend) {
    case 'bwrap': {
      const bwrap = probe('bwrap', ['--unshare-all', '--unshare-user', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', 'true']);
      return {
        backend,
        works: bwrap.status === 0,
        detail: bwrap.error ? 'not installed (apt-get install bubblewrap)' : bwrap.status === 0 ? 'namespaces and an unprivileged user available' : `fails: ${bwrap.stderr.trim()}`,
      };
    }
    case 'docker':
    case 'podman': {
      const { works, detail } = probeEngine(backend, containerImage());
      return { backend, works, detail };
    }
    case 'process':
      return { backend, works: true, detail: 'always available; no isolation' };
  }
}

/** Which backends work on this machine. */
export function probeBackends(): BackendStatus[] {
  return SANDBOX_BACKENDS.map(probeBackend);
}

/** A backend that was asked for by name and does not work here; the message says how to fix it. */
export class SandboxUnavailableError extends McpbenchError {
  static override readonly code: string = 'sandbox-unavailable';
  constructor(readonly status: BackendStatus) {
    super(
      `sandbox backend \`${status.backend}\` does not work here: ${status.detail}. Install it, or choose another backend ` +
        '(--sandbox, MCPBENCH_SANDBOX, or the mcpbench.sandbox setting in the editor; auto uses bubblewrap where it works, ' +
        'else a plain process); `mcpbench doctor` lists the backends that work here',
    );
  }
}

/**
 * The backend a run uses: the one asked for (`--sandbox`, else MCPBENCH_SANDBOX), checked first so a missing
 * one is a clear refusal before anything starts rather than a spawn error in every episode; else the default.
 */
export function chooseBackend(requested?: SandboxBackend): SandboxBackend {
  const fromEnv = process.env.MCPBENCH_SANDBOX as SandboxBackend | undefined;
  const named = requested ?? (fromEnv && SANDBOX_BACKENDS.includes(fromEnv) ? fromEnv : undefined);
  if (!named) return defaultBackend();
  const status = probeBackend(named);
  if (!status.works) throw new SandboxUnavailableError(status);
  // Containers a killed runner left behind on this machine go now, while this run gets going.
  if (named === 'docker' || named === 'podman') void removeOrphans(named).catch(() => undefined);
  return named;
}

let chosen: SandboxBackend | undefined;

/** The embedded default: bwrap where it works, else a plain process (with a warning where it is used). */
export function defaultBackend(): SandboxBackend {
  if (chosen) return chosen;
  const fromEnv = process.env.MCPBENCH_SANDBOX as SandboxBackend | undefined;
  if (fromEnv && SANDBOX_BACKENDS.includes(fromEnv)) return (chosen = fromEnv);
  const bwrap = spawnSync('bwrap', ['--unshare-all', '--unshare-user', '--ro-bind', '/', '/', '--dev', '/dev', 'true'], { timeout: 15_000 });
  return (chosen = bwrap.status === 0 ? 'bwrap' : 'process');
}
