/**
 * The `endpoint` agent: the hosted-endpoint submission format. A participant hosts an HTTP endpoint; for
 * each episode the runner POSTs the task to it as JSON and waits for the answer, while the participant's
 * agent works through the gateway address given in the payload.
 *
 * Request (documented in schemas/endpoint-request.schema.json):
 *   POST <url>  content-type: application/json
 *   { task_id, goal, available_tools: [{ name, description?, inputSchema }], max_steps,
 *     gateway: { url, transport: 'streamable-http' }, deadline_ms }
 * Response (schemas/endpoint-response.schema.json): HTTP 2xx with `{ "answer"?: string }` (other fields are
 * ignored; 204 or an empty body means no answer). Any other status, a body that is not JSON, or an `answer`
 * that is not a string fails the episode with a message that says which.
 *
 * The payload deliberately carries no predicate, initial state, reference solutions or counterexamples:
 * an agent that saw them could game the check instead of doing the task.
 */
import { AgentError, type Agent, type AgentContext, type AgentOutcome } from './agent.ts';

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
        response = await doFetch(options.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json', ...options.headers },
          body: JSON.stringify(request),
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
      return parseEndpointResponse(options.url, response.status, body);
    },
  };
}

function parseEndpointResponse(url: string, status: number, body: string): AgentOutcome {
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
  const answer = (parsed as { answer?: unknown }).answer;
  if (answer === undefined) return {};
  if (typeof answer !== 'string') {
    throw new AgentError('agent-response', `endpoint agent: ${url} answered with an "answer" that is not a string (${typeof answer})`, { http_status: status });
  }
  return { answer };
}

export function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
  }
  return String(error);
}
