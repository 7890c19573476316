/**
 * The protocol between the engine and its adapters' readers: what `mcpbench ... --reporter jsonl` and
 * `--format json` print, what the language server answers to the extension's own requests, and what the
 * extension may know of the task format. The extension imports this module and the record types
 * (server/src/record/) and nothing else of the server (docs/architecture.md; test/architecture.test.ts).
 * Events change only with care: a field added is fine, a field renamed breaks every reader.
 */
import type { CheckListing } from '../record/run-folder.ts';
import type { CheckRecord, EpisodeRecord } from '../record/schema.ts';
import type { OutcomeCounts, RunCompleteness, SetupFailure } from '../record/work-units.ts';
import type { EpisodeEvent } from '../runner/events.ts';
import type { FailureDiagnosis } from '../scoring/failure-modes.ts';
import type { Scores } from '../scoring/metrics.ts';

export type { CallStart, EpisodeKey, NoticeEvent } from '../runner/events.ts';
export type { FailureDiagnosis } from '../scoring/failure-modes.ts';
export type { Scores } from '../scoring/metrics.ts';
// What the CLI prints as JSON for the review view (`review list|diff|accept --format json`).
export type { AcceptReport, CandidateDiff, CandidateStatus } from '../generator/review.ts';
// The endpoint agent's wire format (schemas/endpoint-request.schema.json), which the editor's own endpoint serves.
export type { AgentRequest, ReportedUsage } from '../runner/agents/endpoint.ts';
// The task format's vocabulary and how files are recognised as tasks: plain constants and functions.
export { CATEGORIES, DIFFICULTIES, TASK_ID_PATTERN, taskNamespaces } from '../tasks/vocabulary.ts';
export { isWorkspaceTaskPath } from '../tasks/files.ts';
export { lineStarts, positionAt, type Position } from '../tasks/positions.ts';
/** A tool result as the text a model is shown (the model agents' rendering, for the editor's language-model agent). */
export { resultText } from '../runner/agents/agent.ts';

/**
 * How a run ended: `run` with its scores (and the report files, when written), `check` with the verdict
 * per task. `interrupted`: Ctrl-C or SIGTERM stopped it; finished episodes are saved and `--resume` goes on.
 * `stopped`: the run's cost budget stopped it before its plan was done (resume it with a higher one).
 * `standing`: the run against its plan (complete, incomplete, unresolved infrastructure errors);
 * `setup_failure`: every episode ended in the same error (a missing key, a 401): the agent was not measured.
 */
export type RunFinished =
  | {
      type: 'run-finished';
      kind: 'run';
      run_id: string;
      directory: string;
      interrupted: boolean;
      scores: Scores;
      report?: { json: string; junit: string; html: string };
      stopped?: RunStop;
      standing?: RunCompleteness;
      setup_failure?: SetupFailure;
    }
  | { type: 'run-finished'; kind: 'check'; run_id: string; directory: string; interrupted: boolean; checks: CheckRecord[] };

export interface RunStarted {
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

/** `failure`: the failed episode's failure mode and evidence (scoring/failure-modes.ts), when it could be classified. */
export interface EpisodeFinished {
  type: 'episode-finished';
  run_id: string;
  result: EpisodeRecord;
  failure?: FailureDiagnosis | null;
}

/** The events of a run session, in order; one line each of `--reporter jsonl`. */
export type RunEvent = RunStarted | Exclude<EpisodeEvent, { type: 'episode-finished' }> | EpisodeFinished | RunFinished;

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

// ---- The language server's own requests ---------------------------------------------------------------

/** `{ uri }` -> FileStatus: what the editor asks before it runs a file. */
export const FILE_STATUS_REQUEST = 'mcpbench/fileStatus';
/** Answered once every task and template file found so far is linted and indexed: `{ files }`. */
export const WORKSPACE_INDEXED_REQUEST = 'mcpbench/workspaceIndexed';
/** `{ directory, limit? }` -> RunSummary[]: the run folders under `directory`, newest first. */
export const RUN_HISTORY_REQUEST = 'mcpbench/runHistory';
/** `{ directory }` -> RunView: one run folder read back whole. */
export const RUN_VIEW_REQUEST = 'mcpbench/runView';

/** What the editor asks before it runs a file: is it a task, and does it lint clean. */
export interface FileStatus {
  kind: 'task' | 'template' | 'other';
  /** The task id, when it has one. */
  id?: string;
  /** The workspace-relative path, for messages. */
  label: string;
  /** Its lint errors (1-based lines), the set-wide duplicate-id rule included. */
  errors: { line: number; code: string; message: string }[];
}

/** A past run as the runner panel's history lists it. */
export interface RunSummary {
  id: string;
  directory: string;
  created_at: string;
  kind: 'run' | 'check';
  agent: string;
  fault_profile: string;
  tasks: number;
  /** Work units recorded. */
  episodes: number;
  outcomes: OutcomeCounts;
  /** Journal lines that could not be read (shown as a warning). */
  damaged: number;
  /** Why the run folder could not be read at all. */
  error?: string;
  report?: string;
  /** A check's verdicts (from checks.json); absent while it runs or when it was interrupted. */
  checks?: CheckListing;
}

/** A run read back: its episode records (file order), how it finished, and the warnings of its reader. */
export interface RunView {
  runId: string;
  episodes: EpisodeRecord[];
  finished: RunFinished;
  warnings: string[];
}
