/**
 * The agent contract. An agent works only through the gateway (an MCP server on streamable HTTP at
 * 127.0.0.1 exposing exactly the task's available tools as `<ns>_<tool>`); it never sees the sandboxes or
 * the predicate. It returns its final text answer, if any.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Readable, Writable } from 'node:stream';
import type { Task } from '../../tasks/model.ts';
import type { AgentErrorCode, EgressRecord, EpisodeError, InfraErrorCode } from '../store.ts';

export interface AgentContext {
  task: Task;
  /** The goal as shown to the agent (perturbed when a perturbation level is set). */
  goal: string;
  gateway: {
    /** Streamable HTTP endpoint of the gateway, e.g. http://127.0.0.1:41234/mcp */
    url: string;
    /** The tools the gateway exposes (names `<ns>_<tool>`). */
    tools: Tool[];
    /** Serves the gateway on a Unix socket too (the way into a confined agent's sandbox). */
    listenSocket?(path: string): Promise<void>;
    /** Serves one MCP connection over an agent process's stdio (its stdout in, its stdin out). */
    serveStdio?(streams: { stdin: Readable; stdout: Writable }): Promise<void>;
  };
  /**
   * A folder of the episode's for the agent's own files (a process agent's sockets and scratch): removed with
   * the episode, and by a resumed run when a killed one left it.
   */
  workspace?: string;
  /** Records a connection attempt of the agent through its egress proxy in the episode's trace. */
  onEgress?: (record: EgressRecord) => void;
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

/**
 * The runner could not set an agent up: a confined agent's sandbox did not come up, or its sockets or egress
 * proxy could not be made. Our side, so an infrastructure error (retried, never scored), never the agent's.
 */
export class AgentSetupError extends Error {
  readonly kind = 'infra';
  readonly code: InfraErrorCode = 'agent-sandbox';
  constructor(
    /** One sentence: what could not be set up. */
    readonly reason: string,
    readonly fields: Omit<EpisodeError, 'kind' | 'code' | 'message'> = {},
    message: string = reason,
  ) {
    super(message);
  }

  toRecord(): EpisodeError {
    return { kind: 'infra', code: this.code, message: this.reason, ...this.fields };
  }
}

/**
 * Options that do not make a working agent (read before anything runs); `option` names the one at fault
 * (the CLI maps it to its flag). Re-exported by the registry.
 */
export class AgentOptionsError extends Error {
  constructor(
    readonly agent: string,
    readonly option: string | undefined,
    message: string,
  ) {
    super(message);
  }
}

export interface Agent {
  name: string;
  /** Resolves with the final answer; rejects with an AgentError when the agent broke, an AgentSetupError when we could not set it up. */
  run(context: AgentContext): Promise<AgentOutcome>;
  /** Never calls a tool (the noop agent): its episodes seed and read the state without starting a server. */
  callsNoTools?: boolean;
}

/** The name an agent calls a task tool by: `filesystem.move_file` → `filesystem_move_file`. */
export function exposedName(qualified: string): string {
  return qualified.replace('.', '_');
}
