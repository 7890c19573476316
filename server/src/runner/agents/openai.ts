/**
 * The `openai` agent: a built-in tool-calling loop against any OpenAI-compatible chat-completions endpoint
 * (api.openai.com, or a local server such as llama.cpp, vLLM or Ollama that speaks the same protocol).
 *
 * The loop: a system prompt and the goal as the user message; the gateway's tools offered as functions;
 * every assistant message with `tool_calls` has each call executed through the gateway (MCP over streamable
 * HTTP) and answered with a `role: tool` message holding the result text. Errors go back to the model the
 * same way (a failed call, unknown tool, arguments that are not JSON), because recovering from them is part
 * of what the benchmark measures. The first assistant message without tool calls is the final answer; after
 * `maxTurns` model requests the episode ends without one.
 *
 * Configuration (flags override the environment, see `openAIOptionsFromEnv`):
 *   MCPBENCH_OPENAI_BASE_URL  base URL, the part before `/chat/completions` (default https://api.openai.com/v1)
 *   MCPBENCH_OPENAI_MODEL     model name (required)
 *   OPENAI_API_KEY            sent as `Authorization: Bearer <key>` when set (local servers need none)
 *
 * HTTP 429, 5xx, network errors and request timeouts are retried with exponential back-off (honouring
 * `Retry-After`) up to `maxRetries` times; then, or on any other non-2xx status, the episode fails with
 * the status and the start of the response body.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { AgentError, type Agent, type AgentContext, type AgentOutcome } from './agent.ts';
import { describe, tail } from './endpoint.ts';

export interface OpenAIAgentOptions {
  /** e.g. https://api.openai.com/v1 or http://127.0.0.1:8080/v1; `/chat/completions` is appended. */
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** Most model requests per episode (default 50). */
  maxTurns?: number;
  temperature?: number;
  fetch?: typeof fetch;
  /** Replaces the default system prompt. */
  systemPrompt?: string;
  /** Limit for one chat-completions request (default 120 s). */
  requestTimeoutMs?: number;
  /** Limit for one tool call through the gateway (default 60 s). */
  toolTimeoutMs?: number;
  /** Retries of one request after 429/5xx/network errors (default 4). */
  maxRetries?: number;
  /** First back-off delay, doubled on each retry (default 1000 ms). */
  retryBaseMs?: number;
  /** Cap for one back-off delay, including a server's Retry-After (default 30 s). */
  retryMaxMs?: number;
}

export const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';

export const DEFAULT_SYSTEM_PROMPT = [
  'You are an agent that completes tasks by calling the tools you are given.',
  'Use only those tools. If a call fails, read the error and decide whether to retry, try another way, or stop.',
  'When the task is done, reply with a short final answer without calling any tool;',
  'if the task asks for information, that answer must contain it.',
].join(' ');

/**
 * Options from the environment, with `overrides` (command-line flags) taking precedence. Throws when no
 * model is named, since no default would be right for every endpoint.
 */
export function openAIOptionsFromEnv(
  env: Record<string, string | undefined> = process.env,
  overrides: Partial<OpenAIAgentOptions> = {},
): OpenAIAgentOptions {
  const baseUrl = overrides.baseUrl ?? nonEmpty(env.MCPBENCH_OPENAI_BASE_URL) ?? DEFAULT_OPENAI_BASE_URL;
  const model = overrides.model ?? nonEmpty(env.MCPBENCH_OPENAI_MODEL);
  if (!model) throw new Error('openai agent: no model; set MCPBENCH_OPENAI_MODEL or pass a model');
  const apiKey = overrides.apiKey ?? nonEmpty(env.OPENAI_API_KEY);
  return { ...overrides, baseUrl, model, ...(apiKey !== undefined ? { apiKey } : {}) };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value && value.trim() ? value.trim() : undefined;
}

// ---- The slice of the chat-completions protocol the loop uses.
interface ToolCallMessage {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}
type ChatMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ToolCallMessage[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export function createOpenAIAgent(options: OpenAIAgentOptions): Agent {
  const doFetch = options.fetch ?? fetch;
  const endpoint = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  const maxTurns = options.maxTurns ?? 50;
  const requestTimeoutMs = options.requestTimeoutMs ?? 120_000;
  const toolTimeoutMs = options.toolTimeoutMs ?? 60_000;
  const maxRetries = options.maxRetries ?? 4;
  const retryBaseMs = options.retryBaseMs ?? 1000;
  const retryMaxMs = options.retryMaxMs ?? 30_000;

  /** One chat-completions request, retried on transient failures; returns the parsed JSON body. */
  async function complete(body: unknown, signal: AbortSignal): Promise<unknown> {
    let lastFailure = '';
    for (let attempt = 0; attempt <= maxRetries; attempt++) {
      signal.throwIfAborted();
      const timeout = AbortSignal.timeout(requestTimeoutMs);
      let response: Response;
      let text: string;
      try {
        response = await doFetch(endpoint, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json',
            ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
          },
          body: JSON.stringify(body),
          signal: AbortSignal.any([signal, timeout]),
        });
        text = await response.text();
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        lastFailure = timeout.aborted ? `no answer within ${requestTimeoutMs} ms` : describe(error);
        if (attempt < maxRetries) await sleep(backoff(attempt, undefined), signal);
        continue;
      }
      if (response.ok) {
        try {
          return JSON.parse(text);
        } catch {
          throw new AgentError('model-endpoint', `openai agent: ${endpoint} answered HTTP ${response.status} with a body that is not JSON: ${tail(text, 200)}`);
        }
      }
      const detail = `HTTP ${response.status}${text.trim() ? `: ${tail(text, 500)}` : ''}`;
      // Other 4xx (bad key, unknown model, a request the server rejects) will not get better by waiting.
      if (response.status !== 429 && response.status < 500) throw new AgentError('model-endpoint', `openai agent: ${endpoint} answered ${detail}`);
      lastFailure = detail;
      if (attempt < maxRetries) await sleep(backoff(attempt, parseRetryAfter(response.headers.get('retry-after'))), signal);
    }
    throw new AgentError('model-endpoint', `openai agent: ${endpoint} failed after ${maxRetries + 1} attempts; last: ${lastFailure}`);
  }

  function backoff(attempt: number, retryAfterMs: number | undefined): number {
    return Math.min(retryAfterMs ?? retryBaseMs * 2 ** attempt, retryMaxMs);
  }

  return {
    name: 'openai',
    async run(context: AgentContext): Promise<AgentOutcome> {
      const { signal } = context;
      signal.throwIfAborted();
      const client = new Client({ name: 'mcpbench-openai-agent', version: '0.1.0' });
      const transport = new StreamableHTTPClientTransport(new URL(context.gateway.url));
      try {
        try {
          await client.connect(transport, { signal, timeout: toolTimeoutMs });
        } catch (error) {
          if (signal.aborted) throw signal.reason;
          throw new Error(`openai agent: could not connect to the gateway at ${context.gateway.url}: ${describe(error)}`);
        }
        const tools: Tool[] = context.gateway.tools.length > 0
          ? context.gateway.tools
          : (await client.listTools(undefined, { signal, timeout: toolTimeoutMs })).tools;
        const messages: ChatMessage[] = [
          { role: 'system', content: options.systemPrompt ?? DEFAULT_SYSTEM_PROMPT },
          { role: 'user', content: context.goal },
        ];
        const functions = tools.map((tool) => ({
          type: 'function' as const,
          function: {
            name: tool.name,
            ...(tool.description !== undefined ? { description: tool.description } : {}),
            parameters: tool.inputSchema,
          },
        }));

        for (let turn = 0; turn < maxTurns; turn++) {
          const response = await complete(
            {
              model: options.model,
              messages,
              ...(functions.length > 0 ? { tools: functions, tool_choice: 'auto' } : {}),
              ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
            },
            signal,
          );
          const message = assistantMessage(response, endpoint);
          const calls = message.tool_calls ?? [];
          if (calls.length === 0) {
            const answer = message.content ?? '';
            return answer ? { answer } : {};
          }
          messages.push({ role: 'assistant', content: message.content, tool_calls: calls });
          // One after the other, in the model's order: the gateway's trace and step budget follow that order.
          for (const call of calls) {
            const content = await runToolCall(client, call, signal, toolTimeoutMs);
            messages.push({ role: 'tool', tool_call_id: call.id, content });
          }
        }
        return {};
      } finally {
        // Ends the session on a stateful gateway, but never lets a stuck gateway delay the episode's end.
        if (!signal.aborted) await withinMs(transport.terminateSession(), 2000).catch(() => {});
        await client.close().catch(() => {});
      }
    },
  };
}

/** Executes one tool call through the gateway; whatever happens becomes text the model can read. */
async function runToolCall(
  client: Client,
  call: ToolCallMessage,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<string> {
  let args: unknown;
  try {
    args = call.function.arguments.trim() ? JSON.parse(call.function.arguments) : {};
  } catch {
    return `Error: the arguments of ${call.function.name} are not valid JSON: ${tail(call.function.arguments, 200)}`;
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return `Error: the arguments of ${call.function.name} must be a JSON object`;
  }
  // Names the task does not list still go to the gateway: it refuses them and counts the hallucinated call.
  try {
    const result = await client.callTool(
      { name: call.function.name, arguments: args as Record<string, unknown> },
      undefined,
      { signal, timeout: timeoutMs },
    );
    const text = resultText(result);
    return result.isError ? `Error: ${text}` : text;
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    return `Error: ${describe(error)}`;
  }
}

/** The text of an MCP tool result: text parts joined, other parts and structured content as JSON. */
export function resultText(result: { content?: unknown; structuredContent?: unknown; toolResult?: unknown }): string {
  const parts: string[] = [];
  if (Array.isArray(result.content)) {
    for (const part of result.content as Array<{ type?: string; text?: string }>) {
      parts.push(part.type === 'text' && typeof part.text === 'string' ? part.text : JSON.stringify(part));
    }
  }
  if (parts.length === 0 && result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent));
  if (parts.length === 0 && result.toolResult !== undefined) parts.push(JSON.stringify(result.toolResult));
  return parts.length > 0 ? parts.join('\n') : '(empty result)';
}

function assistantMessage(response: unknown, endpoint: string): { content: string | null; tool_calls?: ToolCallMessage[] } {
  const choice = (response as { choices?: Array<{ message?: unknown }> } | null)?.choices?.[0];
  const message = choice?.message as { content?: unknown; tool_calls?: unknown } | undefined;
  if (!message || typeof message !== 'object') {
    throw new AgentError('model-endpoint', `openai agent: ${endpoint} answered without choices[0].message: ${tail(JSON.stringify(response), 300)}`);
  }
  const content = contentText(message.content);
  const calls: ToolCallMessage[] = [];
  if (Array.isArray(message.tool_calls)) {
    for (const [index, raw] of message.tool_calls.entries()) {
      const call = raw as { id?: unknown; function?: { name?: unknown; arguments?: unknown } };
      const name = call.function?.name;
      if (typeof name !== 'string') {
        throw new AgentError('model-endpoint', `openai agent: ${endpoint} answered with a tool call without a function name`);
      }
      const args = call.function?.arguments;
      calls.push({
        // Some local servers omit ids; the tool message must still name the call it answers.
        id: typeof call.id === 'string' && call.id ? call.id : `call_${index}`,
        type: 'function',
        function: { name, arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) },
      });
    }
  }
  return calls.length > 0 ? { content, tool_calls: calls } : { content };
}

/** Chat content is a string, or (some servers) an array of parts. */
function contentText(content: unknown): string | null {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content.map((part) => (typeof part === 'string' ? part : (part as { text?: unknown })?.text ?? '')).join('');
  }
  return null;
}

/** `Retry-After` as seconds or an HTTP date, in milliseconds. */
function parseRetryAfter(value: string | null): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function withinMs<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
