/**
 * The harness every simulated namespace runs in: an MCP server (low-level SDK `Server`) whose tools/list is
 * exactly the tools of `schemas/servers/<ns>.json`, byte for byte, and whose calls go to the namespace's pure
 * tool handlers. The state lives in `<sandbox>/state.json`: written before the server starts (seed), after
 * every call that changes it (atomically, so a crash never leaves half a file), and read after the server
 * stops (snapshot). Seeding and snapshotting never go through the agent's tools.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { ToolError, type NamespacePlugin } from './namespace.ts';
import type { NamespaceInfo } from './registry.ts';

export const STATE_FILE = 'state.json';

export class StateError extends Error {}

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

/** The tools as MCP lists them: the declarations of the namespace file, field for field. */
export function declaredTools(info: NamespaceInfo): Tool[] {
  return info.server.tools.map((declaration) => declaration as unknown as Tool);
}

function textResult(result: unknown, isError = false): CallToolResult {
  const content: CallToolResult['content'] = [{ type: 'text', text: typeof result === 'string' ? result : JSON.stringify(result, null, 2) }];
  const structured = !isError && typeof result === 'object' && result !== null && !Array.isArray(result);
  return structured ? { content, structuredContent: result as Record<string, unknown> } : isError ? { content, isError } : { content };
}

/** Builds the MCP server of a simulated namespace over the state in `sandbox`. */
export function createSimulationServer(info: NamespaceInfo, sandbox: string, version: string): Server {
  const plugin = pluginOf(info);
  const stateFile = join(sandbox, STATE_FILE);
  let state = plugin.normalizeState(JSON.parse(readFileSync(stateFile, 'utf8')));
  const server = new Server({ name: `mcpbench-${info.namespace}`, version }, { capabilities: { tools: {} } });

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: declaredTools(info) }));

  // Calls run one at a time: each sees the state the previous one left.
  let queue: Promise<unknown> = Promise.resolve();
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    const run = async (): Promise<CallToolResult> => {
      const { name, arguments: args = {} } = request.params;
      const tool = info.tools.get(name);
      const handler = plugin.tools[name];
      if (!tool || !handler) throw new McpError(ErrorCode.InvalidParams, `unknown tool: ${name}`);
      if (!tool.validateInput(args)) {
        const problems = (tool.validateInput.errors ?? []).map((e) => `${e.instancePath || 'arguments'} ${e.message}`).join('; ');
        return textResult(`invalid arguments for ${name}: ${problems}`, true);
      }
      try {
        const outcome = handler(args, state);
        if (outcome.state !== undefined) {
          writeAtomically(stateFile, JSON.stringify(outcome.state, null, 2) + '\n');
          state = outcome.state;
        }
        return textResult(outcome.result);
      } catch (error) {
        if (error instanceof ToolError) return textResult(error.message, true);
        throw error;
      }
    };
    const result = queue.then(run, run);
    queue = result.catch(() => undefined);
    return result;
  });
  return server;
}

export async function serveSimulation(info: NamespaceInfo, sandbox: string, version: string, transport: Transport): Promise<Server> {
  const server = createSimulationServer(info, sandbox, version);
  await server.connect(transport);
  return server;
}
