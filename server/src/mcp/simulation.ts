/**
 * The harness every simulated namespace runs in: an MCP server (low-level SDK `Server`, tools served by
 * serve-tools.ts like every namespace's) whose calls go to the namespace's pure tool handlers. The state lives in `<sandbox>/state.json`: written before the server starts (seed), after
 * every call that changes it (atomically, so a crash never leaves half a file), and read after the server
 * stops (snapshot). Seeding and snapshotting never go through the agent's tools.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { NamespacePlugin } from './namespace.ts';
import type { NamespaceInfo } from './registry.ts';
import { serveTools } from './serve-tools.ts';
import { McpbenchError } from '../errors.ts';

export const STATE_FILE = 'state.json';

export class StateError extends McpbenchError {
  static override readonly code: string = 'invalid-state';
}

/** Checks an initial state against the namespace's state schema; the message names the bad value's path. */
export function assertValidState(info: NamespaceInfo, state: unknown): void {
  if (info.validateState(state)) return;
  const problems = (info.validateState.errors ?? []).map((e) => `initial_state.${info.namespace}${e.instancePath.replace(/\//g, '.')} ${e.message}`);
  throw new StateError(`invalid ${info.namespace} state: ${problems.join('; ')}`);
}

function pluginOf(info: NamespaceInfo): NamespacePlugin & Required<Pick<NamespacePlugin, 'tools'>> {
  const plugin = info.plugin;
  if (!plugin?.tools) throw new StateError(`namespace ${info.namespace} is not a simulation with tool handlers`);
  return plugin as NamespacePlugin & Required<Pick<NamespacePlugin, 'tools'>>;
}

function writeAtomically(file: string, text: string): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, file);
}

/** Seeds a sandbox directory with a namespace's initial state (validated, normalised). */
export function seedSimulation(info: NamespaceInfo, initialState: unknown, sandbox: string): void {
  if (initialState !== undefined) assertValidState(info, initialState);
  const state = pluginOf(info).normalizeState(initialState);
  writeAtomically(join(sandbox, STATE_FILE), JSON.stringify(state, null, 2) + '\n');
}

/** Reads the end state out of a sandbox (same shape as the initial state). */
export function snapshotSimulation(info: NamespaceInfo, sandbox: string): unknown {
  const text = readFileSync(join(sandbox, STATE_FILE), 'utf8');
  return pluginOf(info).normalizeState(JSON.parse(text));
}

/** Builds the MCP server of a simulated namespace over the state in `sandbox`. */
export function createSimulationServer(info: NamespaceInfo, sandbox: string, version: string): Server {
  const plugin = pluginOf(info);
  const stateFile = join(sandbox, STATE_FILE);
  let state = plugin.normalizeState(JSON.parse(readFileSync(stateFile, 'utf8')));
  const server = new Server({ name: `mcpbench-${info.namespace}`, version }, { capabilities: { tools: {} } });
  // Each handler is a pure function of (arguments, state); a call that changes the state persists it first.
  const handlers = Object.fromEntries(
    Object.entries(plugin.tools).map(([name, handler]) => [
      name,
      (args: Record<string, unknown>) => {
        const outcome = handler(args, state);
        if (outcome.state !== undefined) {
          writeAtomically(stateFile, JSON.stringify(outcome.state, null, 2) + '\n');
          state = outcome.state;
        }
        return outcome.result;
      },
    ]),
  );
  serveTools(server, info, { handlers });
  return server;
}

export async function serveSimulation(info: NamespaceInfo, sandbox: string, version: string, transport: Transport): Promise<Server> {
  const server = createSimulationServer(info, sandbox, version);
  await server.connect(transport);
  return server;
}
