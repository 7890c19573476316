/**
 * The agent contract. An agent works only through the gateway (an MCP server on streamable HTTP at
 * 127.0.0.1 exposing exactly the task's available tools as `<ns>_<tool>`); it never sees the sandboxes or
 * the predicate. It returns its final text answer, if any.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { SolutionStep, Task } from '../../tasks/model.ts';

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
  /** For the reference agent: the sequence itself, when it is not one of the task's own (a mutant of one). */
  steps?: SolutionStep[];
  /** Aborted when the episode times out or the run is interrupted. */
  signal: AbortSignal;
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

/** The name an agent calls a task tool by: `filesystem.move_file` → `filesystem_move_file`. */
export function exposedName(qualified: string): string {
  return qualified.replace('.', '_');
}
