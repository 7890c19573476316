/**
 * Starting a namespace's MCP server in its sandbox and talking to it as a client. Every start and every call
 * has a timeout; a server that crashes or hangs is reported with the tail of its stderr and is killed, so
 * the caller never hangs.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ErrorCode, McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { NamespaceInfo } from '../mcp/registry.ts';
import { packageRoot } from '../paths.ts';
import { defaultBackend, prepareWritable, sandboxed, serverConfinement, serverEnvironment, type LaunchSpec, type SandboxBackend } from './sandbox.ts';
import type { EpisodeError, InfraErrorCode } from '../record/schema.ts';
import { removeContainers } from './container.ts';

export interface LaunchOptions {
  backend?: SandboxBackend;
  /**
   * The start path before the fast one (issue 18), for bench/run's comparison only: dist/serve.js without
   * its code cache, official servers from their packages' own entries instead of their dist/npm bundles.
   */
  plain?: boolean;
  startTimeoutMs?: number;
  callTimeoutMs?: number;
}

/**
 * A server that failed: typed fields (what failed, whether the process had exited, the JSON-RPC code the
 * client saw) for the episode record; `message` adds the stderr tail for people reading it as text.
 */
export class ServerError extends Error {
  readonly kind = 'infra';
  constructor(
    /** One sentence: what failed. */
    readonly reason: string,
    readonly namespace: string,
    readonly stderrTail: string,
    readonly code: InfraErrorCode = 'server-failed',
    /** Whether the server process had exited. */
    readonly exited = false,
    /** The JSON-RPC error code of the failed request, when the server (or the SDK client) answered with one. */
    readonly rpcCode?: number,
    /** The JSON-RPC error message without the SDK's `MCP error <code>:` prefix. */
    readonly rpcMessage?: string,
  ) {
    super(stderrTail ? `${reason}\n--- last lines of its stderr ---\n${stderrTail}` : reason);
  }

  /** The episode record's error. */
  toRecord(): EpisodeError {
    return {
      kind: 'infra',
      code: this.code,
      message: this.reason,
      namespace: this.namespace,
      exited: this.exited,
      ...(this.stderrTail ? { stderr_tail: this.stderrTail } : {}),
    };
  }
}

const STDERR_TAIL_BYTES = 4000;

/**
 * The Node flags of dist/serve.js's process. esbuild.mjs makes the code cache under the same flags (V8
 * rejects it under others). --liftoff-only: a server lives for one episode, too short for V8's optimising
 * tier of WebAssembly to pay off; without it PGlite's start-up costs ~1.3 CPU-seconds instead of ~0.8.
 */
export const SERVE_NODE_FLAGS = ['--liftoff-only'];

/**
 * The unsandboxed command that serves a namespace on `sandbox` over stdio, with its whole environment, and
 * whether it needs the host's network (a postgres sandbox seeded on the user's own Postgres server).
 */
export function serverCommand(info: NamespaceInfo, sandbox: string, options: Pick<LaunchOptions, 'plain'> = {}): LaunchSpec & { network: 'none' | 'host' } {
  const runtime = info.plugin?.runtime;
  const reach = runtime?.network?.(sandbox);
  const network = reach ? 'host' : 'none';
  if (info.plugin?.tools || runtime?.createServer) {
    // dist/serve-boot.js runs dist/serve.js from its code cache, when the build made one.
    const entry = !options.plain && existsSync(join(packageRoot(), 'dist', 'serve-boot.js')) ? 'serve-boot.js' : 'serve.js';
    const args = [...SERVE_NODE_FLAGS, join(packageRoot(), 'dist', entry), info.namespace, '--dir', sandbox];
    return { command: process.execPath, args, env: serverEnvironment(sandbox, reach?.env), network };
  }
  if (runtime?.launch) {
    const spec = runtime.launch(sandbox, { bundled: !options.plain });
    return { ...spec, env: serverEnvironment(sandbox, { ...spec.env, ...reach?.env }), network };
  }
  throw new ServerError(`namespace ${info.namespace} has no server`, info.namespace, '', 'server-start');
}

/** The JSON-RPC code and message of an SDK McpError (by shape: a bundle may hold two copies of the class). */
function rpcError(error: unknown): { code: number; message: string } | undefined {
  if (!(error instanceof Error)) return undefined;
  const code: unknown = (error as { code?: unknown }).code;
  if (!(error instanceof McpError) && error.name !== 'McpError') return undefined;
  return typeof code === 'number' ? { code, message: error.message.replace(/^MCP error -?\d+: /, '') } : undefined;
}

export interface RunningServer {
  namespace: string;
  sandbox: string;
  backend: SandboxBackend;
  client: Client;
  listTools(): Promise<Tool[]>;
  callTool(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
  stderrTail(): string;
  close(): Promise<void>;
}

/** Starts a namespace's server confined to `sandbox` (already seeded) and connects to it. */
export function startServer(info: NamespaceInfo, sandbox: string, options: LaunchOptions = {}): Promise<RunningServer> {
  const backend = options.backend ?? defaultBackend();
  const { network, ...command } = serverCommand(info, sandbox, options);
  const confinement = serverConfinement(sandbox, network);
  prepareWritable(confinement, backend);
  return connectServer(info.namespace, sandboxed(backend, command, confinement), sandbox, backend, options);
}

/** Spawns `spec` (already wrapped by its sandbox backend) and connects an MCP client to it over stdio. */
export async function connectServer(
  namespace: string,
  spec: LaunchSpec,
  sandbox: string,
  backend: SandboxBackend,
  options: LaunchOptions = {},
): Promise<RunningServer> {
  const startTimeoutMs = options.startTimeoutMs ?? 30_000;
  const callTimeoutMs = options.callTimeoutMs ?? 30_000;
  const info = { namespace };
  const transport = new StdioClientTransport({
    command: spec.command,
    args: spec.args,
    // The spec's environment is the whole of it (the SDK adds HOME, PATH, USER ... which the sandbox unsets).
    env: spec.env ?? {},
    cwd: sandbox,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_TAIL_BYTES);
  });
  const tail = () => stderr.trimEnd().split('\n').slice(-20).join('\n');
  const client = new Client({ name: 'mcpbench-runner', version: '0.1.0' });
  let exited = false;
  transport.onclose = () => (exited = true);

  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      client.connect(transport, { timeout: startTimeoutMs }),
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`did not start within ${startTimeoutMs} ms`)), startTimeoutMs))),
    ]);
  } catch (error) {
    await transport.close().catch(() => undefined);
    throw new ServerError(`${info.namespace} server failed to start: ${(error as Error).message}`, info.namespace, tail(), 'server-start', exited);
  } finally {
    clearTimeout(timer);
  }

  const wrap = async <T>(what: string, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (error) {
      const crashed = exited ? ' (the server exited)' : '';
      const rpc = rpcError(error);
      const code: InfraErrorCode = exited ? 'server-exited' : rpc?.code === ErrorCode.RequestTimeout ? 'server-timeout' : 'server-failed';
      throw new ServerError(`${info.namespace} ${what} failed${crashed}: ${(error as Error).message}`, info.namespace, tail(), code, exited, rpc?.code, rpc?.message);
    }
  };

  return {
    namespace: info.namespace,
    sandbox,
    backend,
    client,
    listTools: () => wrap('tools/list', async () => (await client.listTools(undefined, { timeout: callTimeoutMs })).tools),
    callTool: (name, args) =>
      wrap(`call ${name}`, async () => (await client.callTool({ name, arguments: args }, undefined, { timeout: callTimeoutMs })) as CallToolResult),
    stderrTail: tail,
    close: async () => {
      // Closing stdin lets servers flush (PGlite, git); the SDK escalates to SIGTERM/SIGKILL if they linger.
      await client.close().catch(() => undefined);
      // A container is gone when the server is closed, however slow its engine is to tear it down.
      if (spec.container) await removeContainers(spec.container.engine, [spec.container.name]);
    },
  };
}
