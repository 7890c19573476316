/**
 * The `endpoint` agent: the hosted-endpoint submission format. A participant hosts an HTTP endpoint; for
 * each episode the runner POSTs the task to it as JSON and waits for the answer, while the participant's
 * agent works through the gateway address given in the payload.
 *
 * Request (documented in schemas/endpoint-request.schema.json):
 *   POST <url>  content-type: application/json
 *   { task_id, goal, available_tools: [{ name, description?, inputSchema }], max_steps,
 *     gateway: { url, transport: 'streamable-http' }, deadline_ms }
 * Response (schemas/endpoint-response.schema.json): HTTP 2xx with `{ "answer"?: string, "usage"?: {...} }`
 * (other fields are ignored; 204 or an empty body means no answer). `usage` (model, requests, prompt and
 * completion tokens, latency per turn), when the agent reports it, becomes the episode's model record, priced
 * from the price file when one is given. Any other status, a body that is not JSON, or an `answer`
 * that is not a string fails the episode with a message that says which.
 *
 * The payload deliberately carries no predicate, initial state, reference solutions or counterexamples:
 * an agent that saw them could game the check instead of doing the task.
 */
import { createHmac } from 'node:crypto';
import { AgentError, type Agent, type AgentContext, type AgentOutcome } from './agent.ts';
import { priceFor, type PriceFile } from './usage.ts';

/** One tool as the agent is told about it: what a model API needs to call it. */
export interface AgentToolDescription {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

/** The task as an external agent receives it (endpoint body, command stdin). */
export interface AgentRequest {
  task_id: string;
  goal: string;
  available_tools: AgentToolDescription[];
  max_steps: number;
  gateway: { url: string; transport: 'streamable-http' };
  /** Milliseconds the agent has, from the moment it receives the request, before the runner gives up. */
  deadline_ms: number;
}

export interface EndpointAgentOptions {
  url: string;
  /** Wall-clock limit for the whole request; default 300 s, lowered to the task's `timeout_s` when set. */
  timeoutMs?: number;
  /** Extra request headers, e.g. an `authorization` the endpoint needs. */
  headers?: Record<string, string>;
  fetch?: typeof fetch;
  /** Prices the usage the endpoint reports, by the model it names. */
  prices?: PriceFile;
  /**
   * A key to sign each request with: `MCPBench-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`,
   * so the endpoint can tell the runner's requests from anyone else's (the submission service's per-submission
   * secret). Comes from the environment (MCPBENCH_ENDPOINT_SECRET), never from run.json.
   */
  signingKey?: string;
}

/** The variable the endpoint agent's signing key is read from. */
export const ENDPOINT_SIGNING_KEY_ENV = 'MCPBENCH_ENDPOINT_SECRET';

/** The `MCPBench-Signature` value of a request body. */
export function endpointSignature(key: string, body: string, now = new Date()): string {
  const t = Math.floor(now.getTime() / 1000);
  return `t=${t},v1=${createHmac('sha256', key).update(`${t}.${body}`).digest('hex')}`;
}

/** What an endpoint may report about its model's spending (schemas/endpoint-response.schema.json). */
export interface ReportedUsage {
  model?: string;
  requests?: number;
  prompt_tokens?: number;
  completion_tokens?: number;
  cached_tokens?: number;
  turn_latency_ms?: number[];
}

export const DEFAULT_AGENT_TIMEOUT_MS = 300_000;

/** The budget an external agent is told about: the agent's own limit, capped by the task's. */
export function agentDeadlineMs(context: AgentContext, timeoutMs: number | undefined): number {
  const own = timeoutMs ?? DEFAULT_AGENT_TIMEOUT_MS;
  const task = context.task.timeout_s !== undefined ? Math.round(context.task.timeout_s * 1000) : Infinity;
  return Math.min(own, task);
}

/** Builds the request from the context: only what the agent may know (the goal as shown, the tools, the budget). */
export function buildAgentRequest(context: AgentContext, deadlineMs: number): AgentRequest {
  return {
    task_id: context.task.id,
    goal: context.goal,
    available_tools: context.gateway.tools.map((tool) => ({
      name: tool.name,
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      inputSchema: tool.inputSchema as Record<string, unknown>,
    })),
    max_steps: context.task.max_steps,
    gateway: { url: context.gateway.url, transport: 'streamable-http' },
    deadline_ms: deadlineMs,
  };
}

/** The last `max` characters of a text, for error messages that must stay readable. */
export function tail(text: string, max = 2000): string {
  const trimmed = text.trim();
  return trimmed.length <= max ? trimmed : `…${trimmed.slice(trimmed.length - max)}`;
}

export function createEndpointAgent(options: EndpointAgentOptions): Agent {
  const doFetch = options.fetch ?? fetch;
  return {
    name: 'endpoint',
    async run(context: AgentContext): Promise<AgentOutcome> {
      context.signal.throwIfAborted();
      const deadlineMs = agentDeadlineMs(context, options.timeoutMs);
      const request = buildAgentRequest(context, deadlineMs);
      const timeout = AbortSignal.timeout(deadlineMs);
      const signal = AbortSignal.any([context.signal, timeout]);
      let response: Response;
      let body: string;
      try {
        const payload = JSON.stringify(request);
        const signature: Record<string, string> = options.signingKey ? { 'mcpbench-signature': endpointSignature(options.signingKey, payload) } : {};
        response = await doFetch(options.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json', ...options.headers, ...signature },
          body: payload,
          signal,
        });
        body = await response.text();
      } catch (error) {
        if (context.signal.aborted) throw context.signal.reason;
        if (timeout.aborted) throw new AgentError('agent-timeout', `endpoint agent: ${options.url} did not answer within ${deadlineMs} ms`);
        throw new AgentError('agent-unreachable', `endpoint agent: POST ${options.url} failed: ${describe(error)}`);
      }
      if (!response.ok) {
        throw new AgentError('agent-http', `endpoint agent: ${options.url} answered HTTP ${response.status}${body.trim() ? `: ${tail(body, 500)}` : ''}`, { http_status: response.status });
      }
      const { answer, usage } = parseEndpointResponse(options.url, response.status, body);
      if (usage && context.meter) {
        const model = usage.model ?? 'unknown';
        const price = options.prices ? priceFor(options.prices, model) : undefined;
        context.meter.reported({
          protocol: 'endpoint',
          model,
          requests: usage.requests ?? usage.turn_latency_ms?.length ?? 0,
          usage:
            usage.prompt_tokens !== undefined || usage.completion_tokens !== undefined
              ? { prompt_tokens: usage.prompt_tokens ?? 0, completion_tokens: usage.completion_tokens ?? 0, cached_tokens: usage.cached_tokens ?? 0, cache_write_tokens: 0 }
              : null,
          turnLatencyMs: usage.turn_latency_ms ?? [],
          ...(price ? { price, currency: options.prices!.currency } : {}),
        });
      }
      return answer === undefined ? {} : { answer };
    },
  };
}

function parseEndpointResponse(url: string, status: number, body: string): AgentOutcome & { usage?: ReportedUsage } {
  if (status === 204 || body.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new AgentError('agent-response', `endpoint agent: ${url} answered HTTP ${status} with a body that is not JSON: ${tail(body, 200)}`, { http_status: status });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new AgentError('agent-response', `endpoint agent: ${url} answered with JSON that is not an object: ${tail(body, 200)}`, { http_status: status });
  }
  const { answer, usage } = parsed as { answer?: unknown; usage?: unknown };
  if (answer !== undefined && typeof answer !== 'string') {
    throw new AgentError('agent-response', `endpoint agent: ${url} answered with an "answer" that is not a string (${typeof answer})`, { http_status: status });
  }
  const reported = reportedUsage(usage);
  return { ...(answer !== undefined ? { answer } : {}), ...(reported ? { usage: reported } : {}) };
}

/** The well-typed fields of a reported `usage` (a malformed report is ignored rather than failing the task). */
function reportedUsage(value: unknown): ReportedUsage | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const raw = value as Record<string, unknown>;
  const count = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);
  const usage: ReportedUsage = {};
  if (typeof raw.model === 'string' && raw.model) usage.model = raw.model;
  for (const key of ['requests', 'prompt_tokens', 'completion_tokens', 'cached_tokens'] as const) {
    const n = count(raw[key]);
    if (n !== undefined) usage[key] = n;
  }
  if (Array.isArray(raw.turn_latency_ms)) usage.turn_latency_ms = raw.turn_latency_ms.map(count).filter((n): n is number => n !== undefined);
  return Object.keys(usage).length > 0 ? usage : undefined;
}

export function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
  }
  return String(error);
}
