/**
 * `mcpbench serve <ns> --dir SANDBOX [--state FILE]`: one namespace as an MCP server over stdio. Every episode
 * starts one of these per namespace, so it has an entry point of its own (serve-index.ts, bundled as
 * dist/serve.js) that loads only the namespace code and the MCP SDK, not the rest of the CLI: start-up is paid
 * thousands of times in a `check` of the dev set.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { loadRegistry } from '../mcp/registry.ts';
import { assertValidState, seedSimulation, serveSimulation, STATE_FILE, StateError } from '../mcp/simulation.ts';
import { serverEnvironment } from '../runner/sandbox.ts';
import { McpbenchError } from '../errors.ts';

/** A usage problem: unknown namespace, unreadable or invalid state file. */
export class ServeError extends McpbenchError {
  static override readonly code: string = 'serve';
}

function readInitialState(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ServeError(`${file}: ${(error as Error).message}`);
  }
}

const stdinClosed = () => new Promise<void>((resolve) => process.stdin.on('close', resolve));

/** Serves until stdin closes; resolves to the exit code. */
export async function serveNamespace(namespace: string, options: { dir: string; state?: string }, version: string): Promise<number> {
  const info = (await loadRegistry({ only: namespace })).get(namespace);
  if (!info) throw new ServeError(`unknown namespace ${namespace}: known are ${(await loadRegistry()).names().join(', ')}`);
  const plugin = info.plugin;
  const initial = options.state === undefined ? undefined : { value: readInitialState(options.state) };
  mkdirSync(options.dir, { recursive: true });
  try {
    if (plugin?.tools) {
      if (initial !== undefined || !existsSync(join(options.dir, STATE_FILE))) seedSimulation(info, initial?.value, options.dir);
      await serveSimulation(info, options.dir, version, new StdioServerTransport());
      // The transport keeps the process alive until stdin closes.
      await stdinClosed();
      return 0;
    }
    if (plugin?.runtime?.createServer) {
      // Without --state the sandbox is served as it is (seeded before, or left by an earlier run).
      if (initial !== undefined) {
        assertValidState(info, initial.value);
        await plugin.runtime.seed(plugin.normalizeState(initial.value), options.dir);
      }
      const server = await plugin.runtime.createServer(options.dir, version);
      await server.connect(new StdioServerTransport());
      await stdinClosed();
      // Closing lets the backend shut down cleanly (PGlite checkpoints, so the next open needs no recovery).
      await server.close();
      return 0;
    }
    if (plugin?.runtime?.launch) {
      // An official server from npm: seed out of band, then hand it our stdio.
      if (initial !== undefined) {
        assertValidState(info, initial.value);
        await plugin.runtime.seed(plugin.normalizeState(initial.value), options.dir);
      }
      const { command, args, env } = plugin.runtime.launch(options.dir);
      // The same allow-listed environment an episode gives it: nothing of ours (keys, tokens) reaches it.
      const child = spawn(command, args, { stdio: 'inherit', env: serverEnvironment(options.dir, env) });
      return await new Promise<number>((resolve) => child.on('exit', (exitCode) => resolve(exitCode ?? 2)));
    }
    const implementation = info.server.implementation;
    throw new ServeError(`${namespace} cannot be served by mcpbench (${implementation.kind}${implementation.package ? `: ${implementation.package}` : ''})`);
  } catch (error) {
    if (error instanceof StateError) throw new ServeError(`${options.state}: ${error.message}`);
    throw error;
  }
}
