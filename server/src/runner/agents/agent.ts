/**
 * The agent contract. An agent works only through the gateway (an MCP server on streamable HTTP at
 * 127.0.0.1 exposing exactly the task's available tools as `<ns>_<tool>`); it never sees the sandboxes or
 * the predicate. It returns its final text answer, if any.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Readable, Writable } from 'node:stream';
import type { SolutionStep, Task } from '../../tasks/model.ts';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ModelMeter } from './usage.ts';
import type { AgentErrorCode, EgressRecord, EpisodeError, FailureCode, InfraErrorCode } from '../../record/schema.ts';
import { McpbenchError } from '../../errors.ts';

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
    /**
     * A client transport to the gateway inside this process, for an agent that runs in it (the reference
     * agent): the same MCP messages and the same gateway, without the HTTP hop (~1.5 ms a call, bench/gateway).
     */
    connectInProcess?(): Promise<Transport>;
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
  /** For the reference agent: the sequence itself, when it is not one of the task's own (a mutant of one). */
  steps?: SolutionStep[];
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
  /**
   * Set when the agent was stopped before it finished, through no breakage (its token budget ran out): the
   * episode fails with this reason, whatever the state says.
   */
  stopped?: { code: FailureCode; message: string };
}

/**
 * How an agent says it broke (its process crashed, timed out, its endpoint or its model endpoint answered
 * garbage): a typed code and fields the episode record keeps as they are (`toRecord`). Anything else an agent
 * throws is recorded as `agent-exception` with its message. The one code that is not the agent's side,
 * `gateway-unreachable` (an in-process agent could not connect to our gateway), makes an infrastructure
 * error: the episode is retried and never scored.
 */
export class AgentError extends Error {
  readonly kind: 'agent' | 'infra';
  constructor(
    readonly code: AgentErrorCode | 'gateway-unreachable',
    /** One sentence: what broke. */
    readonly reason: string,
    readonly fields: Omit<EpisodeError, 'kind' | 'code' | 'message'> = {},
    /** The text form, when it says more than `reason` (the stderr tail, for people reading it as text). */
    message: string = reason,
  ) {
    super(message);
    this.kind = code === 'gateway-unreachable' ? 'infra' : 'agent';
  }

  toRecord(): EpisodeError {
    return { kind: this.kind, code: this.code, message: this.reason, ...this.fields };
  }
}

/**
 * The runner could not set an agent up: a confined agent's sandbox did not come up (before the agent's
 * deadline, or before the episode ended it), or its sockets or egress proxy could not be made. Our side, so an
 * infrastructure error (retried, never scored), never the agent's: the one exception to an episode's timeout
 * being the agent's error.
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
export class AgentOptionsError extends McpbenchError {
  static override readonly code: string = 'agent-options';
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
  /** Set when what the agent spends is priced (a model agent with a price for its model): the cost's currency. */
  costCurrency?: string;
}

/** The name an agent calls a task tool by: `filesystem.move_file` → `filesystem_move_file`. */
export { exposedName } from '../../mcp/names.ts';

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
