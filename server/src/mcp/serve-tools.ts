/**
 * Tool serving for every namespace runtime, in one place, as the MCP SDK's `McpServer` does it: tools/list is
 * the namespace file's declarations; a call is validated against the declared input schema, run one at a
 * time (each call sees the state the previous one left), and answered with a `CallToolResult`. Everything the
 * agent did wrong is an `isError` result it can read and recover from, worded as the official servers word
 * it: an unknown tool (`MCP error -32602: Tool x not found`), arguments that fail the schema, a refusal the
 * handler throws. Only a bug of ours (an error the namespace does not turn into text) becomes a JSON-RPC
 * error, which the gateway records as an infrastructure failure.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { ToolError } from './namespace.ts';
import type { NamespaceInfo } from './registry.ts';

/** One tool's implementation: arguments (already validated against its input schema) in, a JSON-serialisable result (or text) out. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type ServedTool = (args: any) => unknown;

interface ToolService {
  /** Implementations by bare tool name. A name the namespace file does not declare is never called. */
  handlers: Record<string, ServedTool>;
  /**
   * The text the agent sees for an error a handler threw; undefined rethrows it (a bug, not a refusal).
   * Default: a ToolError's message.
   */
  errorText?: (error: unknown) => string | undefined;
}

/** The tools as MCP lists them: the declarations of the namespace file, field for field. */
function declaredTools(info: NamespaceInfo): Tool[] {
  return info.server.tools.map((declaration) => declaration as unknown as Tool);
}

/** A result as the agent sees it: text (a string as is, anything else as pretty JSON), and an object also as structuredContent. */
function toolResult(result: unknown, isError = false): CallToolResult {
  const content: CallToolResult['content'] = [{ type: 'text', text: typeof result === 'string' ? result : JSON.stringify(result, null, 2) }];
  if (isError) return { content, isError: true };
  return typeof result === 'object' && result !== null && !Array.isArray(result) ? { content, structuredContent: result as Record<string, unknown> } : { content };
}

const toolErrorText = (error: unknown): string | undefined => (error instanceof ToolError ? error.message : undefined);

/**
 * Answers one call: the checks and the error mapping, without a server (the MCP handler below calls it, and
 * so can anything that must behave exactly as the served tools do).
 */
async function callServedTool(info: NamespaceInfo, service: ToolService, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  const tool = info.tools.get(name);
  const handler = Object.hasOwn(service.handlers, name) ? service.handlers[name] : undefined;
  if (!tool || !handler) return toolResult(new McpError(ErrorCode.InvalidParams, `Tool ${name} not found`).message, true);
  if (!tool.validateInput(args)) {
    const problems = (tool.validateInput.errors ?? []).map((e) => `${e.instancePath || 'arguments'} ${e.message}`).join('; ');
    return toolResult(new McpError(ErrorCode.InvalidParams, `Input validation error: Invalid arguments for tool ${name}: ${problems}`).message, true);
  }
  try {
    return toolResult(await handler(args));
  } catch (error) {
    const text = (service.errorText ?? toolErrorText)(error);
    if (text === undefined) throw error;
    return toolResult(text, true);
  }
}

interface ServedTools {
  /** Runs `work` after every call queued so far, in the same queue (a server's shutdown: flush, close). */
  afterCalls(work: () => Promise<void>): Promise<void>;
}

/** Installs tools/list and tools/call on `server` for the namespace's declared tools. */
export function serveTools(server: Server, info: NamespaceInfo, service: ToolService): ServedTools {
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: declaredTools(info) }));
  let queue: Promise<unknown> = Promise.resolve();
  const enqueue = <T>(work: () => Promise<T>): Promise<T> => {
    const result = queue.then(work, work);
    queue = result.catch(() => undefined);
    return result;
  };
  server.setRequestHandler(CallToolRequestSchema, (request) => enqueue(() => callServedTool(info, service, request.params.name, request.params.arguments ?? {})));
  return { afterCalls: (work) => enqueue(work) };
}
