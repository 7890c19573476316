/**
 * Sandbox backends: how an MCP server process is confined to its throw-away directory with no network.
 *
 * - `bwrap` (bubblewrap, the default on Linux where it works): new network and PID namespaces, the whole
 *   filesystem read-only, the sandbox the only writable place, a private /tmp, HOME inside the sandbox.
 * - `docker` / `podman`: `run --rm -i --network none --read-only`, the package mounted read-only and the
 *   sandbox read-write at the same paths, as the caller's uid. Needs an image with Node 20
 *   (default `node:20-bookworm-slim`, or `MCPBENCH_SANDBOX_IMAGE`).
 * - `process`: a plain child process in the sandbox directory. Nothing is isolated: the server can reach the
 *   network and write anywhere the user can. Only the last resort, and it says so.
 */
import { spawnSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { packageRoot } from '../paths.ts';

export const SANDBOX_BACKENDS = ['bwrap', 'docker', 'podman', 'process'] as const;
export type SandboxBackend = (typeof SANDBOX_BACKENDS)[number];

export interface LaunchSpec {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

export const PROCESS_BACKEND_WARNING =
  'sandbox backend `process`: the server runs as a plain child process; it is NOT isolated from the network and can write outside its sandbox';

export const DEFAULT_CONTAINER_IMAGE = 'node:20-bookworm-slim';

/** The paths (deduplicated, none inside another) that lie under /tmp. */
export function underTmp(paths: string[]): string[] {
  const inTmp = [...new Set(paths.map((p) => resolve(p)))].filter((p) => p.startsWith('/tmp/'));
  return inTmp.filter((p) => !inTmp.some((q) => q !== p && p.startsWith(`${q}/`)));
}

/** The command that runs `spec` confined to `sandbox` with the given backend. */
export function sandboxed(backend: SandboxBackend, spec: LaunchSpec, sandbox: string, image = process.env.MCPBENCH_SANDBOX_IMAGE ?? DEFAULT_CONTAINER_IMAGE): LaunchSpec {
  const env = { ...spec.env, HOME: sandbox };
  switch (backend) {
    case 'bwrap':
      return {
        command: 'bwrap',
        args: [
          '--unshare-net', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--die-with-parent', '--new-session',
          '--ro-bind', '/', '/',
          '--dev', '/dev',
          '--proc', '/proc',
          '--tmpfs', '/tmp',
          // The private /tmp hides whatever the server's code needs from under the real one (a checkout or
          // a Node under /tmp): those come back read-only.
          ...underTmp([packageRoot(), dirname(process.execPath)]).flatMap((path) => ['--ro-bind', path, path]),
          // After the private /tmp, so a sandbox under /tmp is the real one.
          '--bind', sandbox, sandbox,
          '--chdir', sandbox,
          '--setenv', 'HOME', sandbox,
          spec.command, ...spec.args,
        ],
        env,
      };
    case 'docker':
    case 'podman': {
      const root = packageRoot();
      const user = typeof process.getuid === 'function' ? ['--user', `${process.getuid()}:${process.getgid!()}`] : [];
      const envArgs = Object.entries(env).flatMap(([k, v]) => ['--env', `${k}=${v}`]);
      // The server's own node binary is the container's; the command's first word is replaced by `node`.
      const command = spec.command === process.execPath ? 'node' : spec.command;
      return {
        command: backend,
        args: [
          'run', '--rm', '-i', '--network', 'none', '--read-only', '--tmpfs', '/tmp',
          ...user,
          '--volume', `${root}:${root}:ro`,
          '--volume', `${sandbox}:${sandbox}:rw`,
          '--workdir', sandbox,
          ...envArgs,
          image,
          command, ...spec.args,
        ],
        env: {},
      };
    }
    case 'process':
      return { command: spec.command, args: spec.args, env };
  }
}

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
      const bwrap = probe('bwrap', ['--unshare-net', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', 'true']);
      return {
        backend,
        works: bwrap.status === 0,
        detail: bwrap.error ? 'not installed (apt-get install bubblewrap)' : bwrap.status === 0 ? 'network unshared, filesystem read-only but the sandbox' : `fails: ${bwrap.stderr.trim()}`,
      };
    }
    case 'docker':
    case 'podman': {
      const info = probe(backend, ['info', '--format', '{{.ServerVersion}}']);
      return {
        backend,
        works: info.status === 0,
        detail: info.error ? 'not installed' : info.status === 0 ? `engine ${info.stdout.trim()}` : `no engine: ${(info.stderr || info.stdout).trim().split('\n')[0]}`,
      };
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
export class SandboxUnavailableError extends Error {
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
  return named;
}

let chosen: SandboxBackend | undefined;

/** The embedded default: bwrap where it works, else a plain process (with a warning where it is used). */
export function defaultBackend(): SandboxBackend {
  if (chosen) return chosen;
  const fromEnv = process.env.MCPBENCH_SANDBOX as SandboxBackend | undefined;
  if (fromEnv && SANDBOX_BACKENDS.includes(fromEnv)) return (chosen = fromEnv);
  const bwrap = spawnSync('bwrap', ['--unshare-net', '--ro-bind', '/', '/', '--dev', '/dev', 'true'], { timeout: 15_000 });
  return (chosen = bwrap.status === 0 ? 'bwrap' : 'process');
}
