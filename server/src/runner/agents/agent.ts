/**
 * The agent contract. An agent works only through the gateway (an MCP server on streamable HTTP at
 * 127.0.0.1 exposing exactly the task's available tools as `<ns>_<tool>`); it never sees the sandboxes or
 * the predicate. It returns its final text answer, if any.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Task } from '../../tasks/model.ts';
import type { AgentErrorCode, EpisodeError } from '../store.ts';

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
}

export interface AgentOutcome {
  answer?: string;
}

/**
 * How an agent says it broke (its process crashed, timed out, its endpoint answered garbage): a typed code
 * and fields the episode record keeps as they are. Anything else an agent throws is recorded as
 * `agent-exception` with its message.
 */
export class AgentError extends Error {
  readonly kind = 'agent';
  constructor(
    readonly code: AgentErrorCode,
    /** One sentence: what broke. */
    readonly reason: string,
    readonly fields: Omit<EpisodeError, 'kind' | 'code' | 'message'> = {},
    /** The text form, when it says more than `reason` (the stderr tail, for people reading it as text). */
    message: string = reason,
  ) {
    super(message);
  }

  toRecord(): EpisodeError {
    return { kind: 'agent', code: this.code, message: this.reason, ...this.fields };
  }
}

export interface Agent {
  name: string;
  /** Resolves with the final answer; rejects with an AgentError when the agent broke. */
  run(context: AgentContext): Promise<AgentOutcome>;
  /** Never calls a tool (the noop agent): its episodes seed and read the state without starting a server. */
  callsNoTools?: boolean;
}

/** The name an agent calls a task tool by: `filesystem.move_file` → `filesystem_move_file`. */
export function exposedName(qualified: string): string {
  return qualified.replace('.', '_');
}
