/**
 * The runner's vocabulary: faults and the events of a run. The records a run folder holds (episodes, calls,
 * errors, checks) are defined with their schemas in store.ts and re-exported here. The events are what
 * `--reporter jsonl` prints for the editor, so they change only with care (a field added is fine).
 */
import type { Scores } from '../scoring/metrics.ts';
import type { FailureDiagnosis } from '../results/failure-modes.ts';
import type { CallRecord, CheckRecord, EpisodeRecord, InjectedFault } from './store.ts';

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

export type { CallRecord, CallStatus, EpisodeError, EpisodeRecord, EpisodeStatus, GoalPerturbation, InjectedFault } from './store.ts';
/** The episode record under its older name (the same type). */
export type EpisodeResult = EpisodeRecord;

/** Which episode: the fields of its work unit that a reader shows (the key itself is `work_unit`). */
export interface EpisodeKey {
  task_id: string;
  /** 0-based trial number (pass^k runs k trials per task). */
  trial: number;
  /** Which sequence the reference agent replays: `reference:0`, `counterexample:1`; the agent name otherwise. */
  variant: string;
  fault_profile: string;
  perturbation: string;
}

/**
 * A call the gateway has received and not yet answered: what the editor shows as in flight (a timeout being
 * injected, a slow server) until its CallRecord arrives with the same index.
 */
export interface CallStart {
  /** 0-based position among the episode's calls (the index its CallRecord will have). */
  index: number;
  /** The name the agent called (`<ns>_<tool>`). */
  tool: string;
  /** `<ns>.<tool>` when the name is one of the task's available tools. */
  qualified?: string;
  arguments: unknown;
  /** When the gateway received it (ISO 8601). */
  started_at: string;
}

/**
 * How a run ended: `run` with its scores (and the report files, when written), `check` with the verdict
 * per task. `interrupted`: Ctrl-C or SIGTERM stopped it; finished episodes are saved and `--resume` goes on.
 * `stopped`: the run's cost budget stopped it before its plan was done (resume it with a higher one).
 */
export type RunFinished =
  | { type: 'run-finished'; kind: 'run'; run_id: string; directory: string; interrupted: boolean; scores: Scores; report?: { json: string; junit: string; html: string }; stopped?: RunStop }
  | { type: 'run-finished'; kind: 'check'; run_id: string; directory: string; interrupted: boolean; checks: CheckRecord[] };

/** The events of a run session, in order; one line each of `--reporter jsonl`. */
export type RunEvent =
  | {
      type: 'run-started';
      kind: 'run' | 'check';
      run_id: string;
      directory: string;
      tasks: string[];
      /** Episodes planned (every work unit). */
      episodes: number;
      /** Of those, already recorded (a resumed run). */
      recorded: number;
      agent: string;
      fault_profile: string;
      seed: number;
    }
  | { type: 'episode-started'; run_id: string; work_unit: string; key: EpisodeKey; goal?: string }
  /** A call arrived at the gateway; its `call` event follows when it is answered. */
  | { type: 'call-started'; run_id: string; work_unit: string; key: EpisodeKey; call: CallStart }
  | { type: 'call'; run_id: string; work_unit: string; key: EpisodeKey; call: CallRecord }
  | { type: 'fault'; run_id: string; work_unit: string; key: EpisodeKey; call_index: number; fault: InjectedFault }
  /** `failure`: the failed episode's failure mode and evidence (results/failure-modes.ts), when the CLI could classify it. */
  | { type: 'episode-finished'; run_id: string; result: EpisodeRecord; failure?: FailureDiagnosis | null }
  /** Something the user should know that is not an episode: damaged journal lines moved, paraphrases refused. */
  | { type: 'notice'; run_id: string; level: 'info' | 'warning'; message: string }
  | RunFinished;

/** A run that ended before its plan was done because its cost budget (`--max-cost`) was reached. */
export interface RunStop {
  reason: 'cost-budget';
  /** What the recorded episodes cost (every attempt), in the price file's currency. */
  spent: number;
  max: number;
  currency?: string;
  /** Planned episodes never started. */
  not_started: number;
}
