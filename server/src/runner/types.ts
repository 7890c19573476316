/**
 * The runner's vocabulary: faults, recorded calls, episode results and the events of a run. These shapes are
 * what the journal stores, what `--reporter jsonl` prints for the editor, and what scoring and reports read,
 * so they change only with care (a field added is fine; a field renamed breaks old journals).
 */
import type { NodeVerdict } from '../predicates/evaluate.ts';

/** The ReliabilityBench fault taxonomy (section 3.5 and Appendix B), made concrete for MCP calls. */
export const FAULT_TYPES = [
  'TransientTimeout',
  'HighLatency',
  'ConnectionReset',
  'SoftRateLimit',
  'HardRateLimit',
  'PartialResponse',
  'SchemaDrift',
  'StaleData',
  'EmptyResponse',
  'CascadingFailure',
] as const;
export type FaultType = (typeof FAULT_TYPES)[number];

/** Whether a retry can succeed (the paper's table; HighLatency only slows, CascadingFailure ends). */
export const RECOVERABLE: Record<FaultType, boolean> = {
  TransientTimeout: true,
  HighLatency: true,
  ConnectionReset: true,
  SoftRateLimit: true,
  HardRateLimit: false,
  PartialResponse: true,
  SchemaDrift: false,
  StaleData: false,
  EmptyResponse: true,
  CascadingFailure: true,
};

export interface FaultProfile {
  name: string;
  /** Probability that a call gets a fault. */
  failure_rate: number;
  /** Relative weights of the fault types drawn when a call gets one (need not sum to 1). */
  fault_weights: Partial<Record<FaultType, number>>;
}

/** What the gateway did to one call. */
export interface InjectedFault {
  type: FaultType;
  /** Whether the call reached the server (a timeout may or may not have executed). */
  executed: boolean;
  detail?: string;
}

export type CallStatus =
  | 'ok' // forwarded, the server answered without error
  | 'tool-error' // forwarded, the server answered with isError
  | 'fault' // a fault was injected (the result the agent saw may still be a success: latency, drift ...)
  | 'unlisted' // a tool the task does not list: refused, counted as hallucinated
  | 'over-budget' // after max_steps calls: refused, not forwarded
  | 'infra-error'; // the server crashed or timed out on its own

export interface CallRecord {
  /** 0-based position among the episode's calls. */
  index: number;
  /** The name the agent called (`<ns>_<tool>`). */
  tool: string;
  /** `<ns>.<tool>` when the name is one of the task's available tools. */
  qualified?: string;
  arguments: unknown;
  status: CallStatus;
  fault?: InjectedFault;
  /** What the agent received (MCP CallToolResult, or `{ error }` for a protocol-level error). */
  result: unknown;
  /** Milliseconds from the agent's request to the gateway's answer. */
  latency_ms: number;
}

export type EpisodeStatus = 'passed' | 'failed' | 'infra_error';

export interface EpisodeKey {
  task_id: string;
  /** 0-based trial number (pass^k runs k trials per task). */
  trial: number;
  /** Which sequence the reference agent replays: `reference:0`, `counterexample:1`; the agent name otherwise. */
  variant: string;
  fault_profile: string;
  perturbation: string;
}

/** What was done to the goal an episode showed its agent (a perturbation level other than none). */
export interface GoalPerturbation {
  /** The transforms applied, in order: `{ kind: 'synonym', detail: 'book -> reserve' }` ... */
  applied: { kind: string; detail: string }[];
  /** Set when an LLM paraphrase was asked for: whether it was used, or why the deterministic goal was kept. */
  paraphrase?: { paraphrased: boolean; model: string; error?: string };
}

export interface EpisodeResult extends EpisodeKey {
  run_id: string;
  /** SHA-256 of the task's canonical JSON: which version of the task this result is for. */
  task_hash: string;
  agent: string;
  seed: number;
  status: EpisodeStatus;
  /** Predicate true and no budget exceeded. */
  passed: boolean;
  verdict?: NodeVerdict;
  answer?: string;
  category: string;
  namespaces: string[];
  max_steps: number;
  /** Calls to listed tools that were forwarded or faulted (what counts against max_steps); unlisted excluded. */
  tool_calls: number;
  unlisted_calls: number;
  /** Calls whose result the agent saw as an error (injected or not). */
  errors_seen: number;
  budget_exceeded: boolean;
  calls: CallRecord[];
  started_at: string;
  duration_ms: number;
  /** Set when status is infra_error: what failed, with the server's stderr tail. */
  infra_error?: string;
  /** Set when the agent itself failed (crashed, timed out, broke its protocol): an agent failure. */
  agent_error?: string;
  /** 1 for the first attempt; infrastructure failures are retried. */
  attempt: number;
  /**
   * SHA-256 of the canonical JSON of the end states the predicate was judged on (by namespace): two episodes
   * with the same value left the same state (check's mutation testing tells equivalent mutants by it).
   */
  end_state?: string;
  /** The goal the agent was shown, recorded when it was perturbed (or otherwise differs from the task's). */
  goal?: string;
  /** How `goal` was made from the task's goal. */
  perturbed?: GoalPerturbation;
}

/** One line of `--reporter jsonl`. */
export type RunEvent =
  | { type: 'run-started'; run_id: string; tasks: string[]; episodes: number; agent: string; fault_profile: string; seed: number }
  | { type: 'episode-started'; run_id: string; key: EpisodeKey; goal?: string }
  | { type: 'call'; run_id: string; key: EpisodeKey; call: CallRecord }
  | { type: 'fault'; run_id: string; key: EpisodeKey; call_index: number; fault: InjectedFault }
  | { type: 'episode-finished'; run_id: string; result: EpisodeResult }
  | { type: 'run-finished'; run_id: string; directory: string; scores: unknown };
