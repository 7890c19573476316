/**
 * The tool-calling loop shared by the model agents (`openai`, `anthropic`). A protocol adapter says how to
 * build a request and read a response; everything else is here, once:
 *
 * - the turn loop: the goal as the first user message, the gateway's tools offered, each response's tool
 *   calls run through the gateway (MCP over streamable HTTP) in the model's order and answered, until the
 *   model answers without a call (its final answer), `max_turns` requests were made, or the token budget is
 *   used up;
 * - tool calls in every common shape: the protocol's own, or, when a response has none, calls written as text
 *   (tool-call-formats.ts), each recorded with its format. A call the model formed badly (no name, arguments
 *   that are not a JSON object) is answered with an error that says how to fix it and never reaches the
 *   gateway; it is counted as malformed. Nothing a model writes ends an episode but its final answer;
 * - the HTTP layer: a request timeout, retries with exponential back-off (honouring `Retry-After`) after a
 *   429, a 5xx, a refused or reset connection, a timeout, a 2xx body that is not JSON or has no message; then
 *   a typed AgentError (`model-5xx`, `model-non-json`, `model-empty-response` ..., the codes of store.ts) with
 *   the last HTTP status and the number of attempts. Other 4xx and content-filter refusals are not retried;
 * - the token budget: once an episode has used `max_tokens_per_episode`, the loop stops before the model's
 *   next tool call and says so (`stopped: token-budget`): the episode fails, it did not break;
 * - accounting: every response's usage, every turn's latency and every attempted call go to the episode's
 *   ModelMeter, which the episode reads however the agent stopped.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { AgentError, resultText, type Agent, type AgentContext, type AgentOutcome } from './agent.ts';
import { describe, tail } from './endpoint.ts';
import type { ModelAgentSettings } from './settings.ts';
import { extractTextToolCalls, textToolResults, withoutThinking, type AttemptedCall, type TextToolCallFormat } from './tool-call-formats.ts';
import { ModelMeter, type TokenUsage } from './usage.ts';
import type { AgentErrorCode } from '../../record/schema.ts';

/** A model response as the loop needs it. */
export interface ProtocolTurn {
  /** The assistant's text ('' when none). */
  text: string;
  /** Calls in the protocol's own structure (format `native`), in order. */
  native: AttemptedCall[];
}

/** One call with the id its answer goes back under, and that answer. */
export interface CallAnswer {
  call: AttemptedCall & { id: string };
  content: string;
  isError: boolean;
}

export interface ProtocolAdapter<Message> {
  readonly protocol: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  /** The conversation's first messages: the goal (and the system prompt, where the protocol keeps it there). */
  initial(goal: string): Message[];
  /** One request body; `seed` is the sampling seed of this episode, when there is one. */
  body(messages: readonly Message[], tools: readonly Tool[], seed: number | undefined): Record<string, unknown>;
  /** The usage a JSON response reports, or null. */
  usage(json: unknown): TokenUsage | null;
  /**
   * The turn in a 2xx JSON body. Throws ResponseProblem when the body should be asked for again (no message),
   * AgentError when it never will be good (a content-filter refusal).
   */
  turn(json: unknown): ProtocolTurn;
  /** A non-2xx JSON body that is a content-filter refusal: its message. */
  refusal?(status: number, json: unknown): string | undefined;
  /** Appends the assistant's turn and the answers to its calls (`textFormat` when they were written as text). */
  reply(messages: Message[], turn: ProtocolTurn, answers: readonly CallAnswer[], textFormat: TextToolCallFormat | undefined): void;
}

/** A 2xx response that cannot be used but may be better when asked again. */
export class ResponseProblem extends Error {
  constructor(
    readonly code: 'model-empty-response' | 'model-bad-response',
    message: string,
  ) {
    super(message);
  }
}

/** What runs the loop besides the recorded settings (never recorded: a key, test hooks). */
export interface ModelRuntime {
  /** The agent's name (default: the adapter's protocol). */
  name?: string;
  apiKey?: string;
  fetch?: typeof fetch;
  /** Limit for one tool call through the gateway (default 60 s). */
  toolTimeoutMs?: number;
  /** First back-off delay, doubled on each retry (default 1000 ms). */
  retryBaseMs?: number;
  /** Cap for one back-off delay, including a server's Retry-After (default 30 s). */
  retryMaxMs?: number;
}

export function createModelAgent<Message>(settings: ModelAgentSettings, runtime: ModelRuntime, adapter: ProtocolAdapter<Message>): Agent {
  const doFetch = runtime.fetch ?? fetch;
  const toolTimeoutMs = runtime.toolTimeoutMs ?? 60_000;
  const retryBaseMs = runtime.retryBaseMs ?? 1000;
  const retryMaxMs = runtime.retryMaxMs ?? 30_000;
  const requestTimeoutMs = settings.request_timeout_s * 1000;

  /** One model request, retried while retrying makes sense; every response's usage goes to the meter. */
  async function request(body: Record<string, unknown>, signal: AbortSignal, meter: ModelMeter): Promise<{ turn: ProtocolTurn; latencyMs: number }> {
    let last: { code: AgentErrorCode; message: string; http_status?: number; retryAfterMs?: number } = { code: 'model-unreachable', message: 'no request was made' };
    const payload = JSON.stringify(body);
    for (let attempt = 0; attempt <= settings.max_retries; attempt++) {
      if (attempt > 0) await sleep(backoff(attempt - 1, last.retryAfterMs), signal);
      signal.throwIfAborted();
      meter.request(attempt > 0);
      const timeout = AbortSignal.timeout(requestTimeoutMs);
      const started = performance.now();
      let response: Response;
      let text: string;
      try {
        response = await doFetch(adapter.url, { method: 'POST', headers: adapter.headers, body: payload, signal: AbortSignal.any([signal, timeout]) });
        text = await response.text();
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        // Already typed (a replay cache's miss): no retry makes it better.
        if (error instanceof AgentError) throw error;
        last = timeout.aborted
          ? { code: 'model-timeout', message: `no answer within ${requestTimeoutMs} ms` }
          : { code: 'model-unreachable', message: describe(error) };
        continue;
      }
      const latencyMs = performance.now() - started;
      const json = parseJson(text);
      if (!response.ok) {
        const detail = `HTTP ${response.status}${text.trim() ? `: ${tail(text, 500)}` : ''}`;
        const refusal = json.ok ? adapter.refusal?.(response.status, json.value) : undefined;
        if (refusal !== undefined) throw new AgentError('model-content-filter', `${adapter.url} refused by content filter: ${refusal}`, { http_status: response.status, attempts: attempt + 1 });
        if (response.status === 429 || response.status >= 500) {
          last = { code: response.status === 429 ? 'model-rate-limited' : 'model-5xx', message: detail, http_status: response.status, retryAfterMs: parseRetryAfter(response.headers.get('retry-after')) };
          continue;
        }
        // Other 4xx (bad key, unknown model, a request the server rejects) will not get better by waiting.
        throw new AgentError('model-rejected', `${adapter.url} answered ${detail}`, { http_status: response.status, attempts: attempt + 1 });
      }
      if (!json.ok) {
        last = { code: 'model-non-json', message: `HTTP ${response.status} with a body that is not JSON: ${tail(text, 200) || '(empty)'}`, http_status: response.status };
        continue;
      }
      meter.response(adapter.usage(json.value));
      try {
        return { turn: adapter.turn(json.value), latencyMs };
      } catch (error) {
        if (!(error instanceof ResponseProblem)) throw error;
        last = { code: error.code, message: error.message, http_status: response.status };
      }
    }
    const attempts = settings.max_retries + 1;
    throw new AgentError(last.code, `${adapter.url} failed after ${attempts} attempts; last: ${last.message}`, { ...(last.http_status !== undefined ? { http_status: last.http_status } : {}), attempts });
  }

  function backoff(retry: number, retryAfterMs: number | undefined): number {
    return Math.min(retryAfterMs ?? retryBaseMs * 2 ** retry, retryMaxMs);
  }

  const name = runtime.name ?? adapter.protocol;
  return {
    name,
    ...(settings.prices?.model ? { costCurrency: settings.prices.currency } : {}),
    async run(context: AgentContext): Promise<AgentOutcome> {
      const { signal } = context;
      signal.throwIfAborted();
      const meter = context.meter ?? new ModelMeter();
      meter.begin({
        protocol: adapter.protocol,
        model: settings.model,
        ...(settings.prices?.model ? { price: settings.prices.model, currency: settings.prices.currency } : {}),
        ...(settings.max_tokens_per_episode !== undefined ? { maxTokensPerEpisode: settings.max_tokens_per_episode } : {}),
      });
      const client = new Client({ name: `mcpbench-${name}-agent`, version: '0.1.0' });
      // In process when the gateway offers it (an episode's does): the model's tool calls skip the HTTP hop
      // (bench/gateway: ~1.4 ms a call); an agent given only a URL connects over streamable HTTP.
      let http: StreamableHTTPClientTransport | undefined;
      try {
        try {
          const transport = (await context.gateway.connectInProcess?.()) ?? (http = new StreamableHTTPClientTransport(new URL(context.gateway.url)));
          await client.connect(transport, { signal, timeout: toolTimeoutMs });
        } catch (error) {
          if (signal.aborted) throw signal.reason;
          throw new AgentError('gateway-unreachable', `could not connect to the gateway at ${context.gateway.url}: ${describe(error)}`);
        }
        const tools: Tool[] = context.gateway.tools.length > 0 ? context.gateway.tools : (await client.listTools(undefined, { signal, timeout: toolTimeoutMs })).tools;
        const toolNames = new Set(tools.map((tool) => tool.name));
        const baseSeed = settings.seed ?? context.seed;
        const seed = baseSeed === undefined ? undefined : baseSeed + (context.trial ?? 0);
        const messages = adapter.initial(context.goal);

        for (let turnIndex = 0; turnIndex < settings.max_turns; turnIndex++) {
          const { turn, latencyMs } = await request(adapter.body(messages, tools, seed), signal, meter);
          meter.turn(latencyMs);
          const text = turn.native.length > 0 ? undefined : extractTextToolCalls(turn.text, settings.tool_call_format, toolNames);
          const calls = turn.native.length > 0 ? turn.native : (text?.calls ?? []);
          if (calls.length === 0) {
            meter.finish('answer');
            const answer = withoutThinking(turn.text);
            return answer ? { answer } : {};
          }
          if (meter.overBudget()) {
            meter.finish('token-budget');
            return { stopped: { code: 'token-budget', message: `the episode used ${meter.tokens()} tokens, its budget is ${settings.max_tokens_per_episode} (max tokens per episode): stopped before the model's next tool call` } };
          }
          const answers: CallAnswer[] = [];
          const ids = new Set<string>();
          for (const [index, call] of calls.entries()) {
            // Some servers omit ids or repeat them; each answer must name the call it answers.
            const id = call.id && !ids.has(call.id) ? call.id : `call_${turnIndex}_${index}`;
            ids.add(id);
            const attempted = { ...call, id };
            if (call.problem || call.name === undefined || call.arguments === undefined) {
              meter.call({ turn: turnIndex, format: call.format, ...(call.name ? { name: call.name } : {}), status: 'malformed', problem: call.problem?.code ?? 'no-name' });
              answers.push({ call: attempted, content: malformedMessage(call, tools), isError: true });
              continue;
            }
            meter.call({ turn: turnIndex, format: call.format, name: call.name, status: 'sent' });
            answers.push({ call: attempted, ...(await runToolCall(client, call.name, call.arguments, signal, toolTimeoutMs)) });
          }
          adapter.reply(messages, turn, answers, text?.format);
        }
        meter.finish('max-turns');
        return {};
      } catch (error) {
        meter.finish(signal.aborted ? 'aborted' : 'error');
        throw error;
      } finally {
        // Ends the session on a stateful gateway, but never lets a stuck gateway delay the episode's end.
        if (http && !signal.aborted) await withinMs(http.terminateSession(), 2000).catch(() => {});
        await client.close().catch(() => {});
      }
    },
  };
}

/** The results of calls written as text, as one user message's text in that format's convention. */
export function textAnswers(format: TextToolCallFormat, answers: readonly CallAnswer[]): string {
  return textToolResults(format, answers.map((a) => ({ name: a.call.name ?? '(no name)', content: a.content, isError: a.isError })));
}

/** What the model is told about a call it formed badly: what was wrong, what it wrote, how to call instead. */
function malformedMessage(call: AttemptedCall, tools: readonly Tool[]): string {
  const what = call.name ? `Your call to ${call.name} was not run` : 'A tool call without a function name was not run';
  const reason = call.problem?.message ?? 'the tool call has no function name';
  const fix = call.name ? 'Call the tool again with a JSON object of arguments.' : `Call one of the tools by its name: ${tools.map((t) => t.name).join(', ')}.`;
  return `Error: ${what}: ${reason}. You wrote: ${tail(call.raw, 300) || '(nothing)'}. ${fix}`;
}

/** Executes one tool call through the gateway; whatever happens becomes text the model can read. */
async function runToolCall(client: Client, name: string, args: Record<string, unknown>, signal: AbortSignal, timeoutMs: number): Promise<{ content: string; isError: boolean }> {
  // Names the task does not list still go to the gateway: it refuses them and counts the hallucinated call.
  try {
    const result = await client.callTool({ name, arguments: args }, undefined, { signal, timeout: timeoutMs });
    const text = resultText(result);
    return result.isError ? { content: `Error: ${text}`, isError: true } : { content: text, isError: false };
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    return { content: `Error: ${describe(error)}`, isError: true };
  }
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** A non-negative finite count from a usage field, 0 otherwise. */
export function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `Retry-After` as seconds or an HTTP date, in milliseconds. */
export function parseRetryAfter(value: string | null): number | undefined {
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
