/**
 * The agent contract. An agent works only through the gateway (an MCP server on streamable HTTP at
 * 127.0.0.1 exposing exactly the task's available tools as `<ns>_<tool>`); it never sees the sandboxes or
 * the predicate. It returns its final text answer, if any.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Task } from '../../tasks/model.ts';
import type { ModelMeter } from './usage.ts';

export interface AgentContext {
  task: Task;
  /** The goal as shown to the agent (perturbed when a perturbation level is set). */
  goal: string;
  gateway: {
    /** Streamable HTTP endpoint of the gateway, e.g. http://127.0.0.1:41234/mcp */
    url: string;
    /** The tools the gateway exposes (names `<ns>_<tool>`). */
    tools: Tool[];
  };
  /** For the reference agent: which sequence to replay (`reference:0`, `counterexample:1`). */
  variant: string;
  /** Aborted when the episode times out or the run is interrupted. */
  signal: AbortSignal;
  /** The run seed and the trial: a model agent derives the sampling seed it sends from them. */
  seed?: number;
  trial?: number;
  /** Where a model agent records its tokens, cost, latency and attempted calls; read when the agent stops. */
  meter?: ModelMeter;
}

export interface AgentOutcome {
  answer?: string;
}

export interface Agent {
  name: string;
  run(context: AgentContext): Promise<AgentOutcome>;
  /** Never calls a tool (the noop agent): its episodes seed and read the state without starting a server. */
  callsNoTools?: boolean;
}

/**
 * Why an agent stopped other than by answering: a typed reason, never text to parse back. `kind: 'agent'`
 * is the agent's side (its process or its model endpoint broke, or it ran out of its token budget);
 * `kind: 'infra'` is ours (the gateway could not be reached).
 */
export const AGENT_ERROR_CODES = [
  'endpoint_unreachable', // connection refused, DNS, reset: after the retries
  'endpoint_timeout', // no answer within the request timeout: after the retries
  'endpoint_rate_limited', // HTTP 429: after the retries
  'endpoint_5xx', // HTTP 5xx (and Anthropic's 529): after the retries
  'endpoint_rejected', // another 4xx (bad key, unknown model, a request the server refuses): not retried
  'non_json_body', // HTTP 2xx whose body is not JSON: after the retries
  'empty_choices', // HTTP 2xx without a message (`choices: []`): after the retries
  'bad_response', // JSON that is not the protocol's response shape: after the retries
  'content_filter', // the provider refused by content filter (finish_reason, stop_reason or error code)
  'token_budget', // --max-tokens-per-episode used up before a final answer
  'agent_failed', // any other failure of an agent (a command that crashed, an endpoint's error)
  'agent_timeout', // the episode's time limit
  'gateway_unreachable', // the agent could not reach our gateway (infra)
] as const;
export type AgentErrorCode = (typeof AGENT_ERROR_CODES)[number];

export interface AgentErrorInfo {
  kind: 'agent' | 'infra';
  code: AgentErrorCode;
  message: string;
  /** The last HTTP status the endpoint answered, for endpoint errors. */
  http_status?: number;
  /** Requests made before giving up. */
  attempts?: number;
}

export class AgentError extends Error {
  readonly info: AgentErrorInfo;
  constructor(info: Omit<AgentErrorInfo, 'kind'> & { kind?: AgentErrorInfo['kind'] }) {
    super(info.message);
    this.info = { kind: 'agent', ...info };
  }
}

/** The typed reason of whatever an agent threw; `timedOut` when the episode's own limit stopped it. */
export function agentErrorInfo(error: unknown, timedOut: boolean): AgentErrorInfo {
  if (error instanceof AgentError) return error.info;
  const message = error instanceof Error ? error.message : String(error);
  return { kind: 'agent', code: timedOut ? 'agent_timeout' : 'agent_failed', message };
}

/** The name an agent calls a task tool by: `filesystem.move_file` → `filesystem_move_file`. */
export function exposedName(qualified: string): string {
  return qualified.replace('.', '_');
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
