/**
 * What the runner reports while an episode runs: its start, each call as it arrives and as it is answered,
 * each fault, and the finished record. The session adds run-level events (engine/protocol.ts).
 */
import type { CallRecord, EpisodeRecord, InjectedFault } from '../record/schema.ts';

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

/** Something the user should know that is not an episode: damaged journal lines moved, a pooled start that failed. */
export interface NoticeEvent {
  type: 'notice';
  run_id: string;
  level: 'info' | 'warning';
  message: string;
}

/** The events of one episode, in order, as the runner (in process or a queue's coordinator) reports them. */
export type EpisodeEvent =
  | { type: 'episode-started'; run_id: string; work_unit: string; key: EpisodeKey; goal?: string }
  /** A call arrived at the gateway; its `call` event follows when it is answered. */
  | { type: 'call-started'; run_id: string; work_unit: string; key: EpisodeKey; call: CallStart }
  | { type: 'call'; run_id: string; work_unit: string; key: EpisodeKey; call: CallRecord }
  | { type: 'fault'; run_id: string; work_unit: string; key: EpisodeKey; call_index: number; fault: InjectedFault }
  | { type: 'episode-finished'; run_id: string; result: EpisodeRecord }
  | NoticeEvent;
