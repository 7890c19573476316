/**
 * The results database as Kysely sees it: one interface per table, kept in step with the migrations in
 * migrations.ts (which also document every table and column with COMMENT ON; docs/results-database.md is
 * generated from those comments). Numbers come back as JS numbers from both PGlite and `pg` (db.ts sets the
 * int8 parser), JSON columns as parsed values, text[] as string arrays, timestamptz as Date.
 */
import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';

/** A JSON column: written as JSON text, read back parsed. */
export type Json = ColumnType<unknown, string, string>;
/** A JSON column that may be null. */
export type NullableJson = ColumnType<unknown | null, string | null, string | null>;
export type Timestamp = ColumnType<Date, Date | string, Date | string>;

export const EPISODE_STATUSES = ['passed', 'failed', 'agent_error', 'infra_error'] as const;
export type EpisodeStatusValue = (typeof EPISODE_STATUSES)[number];

export interface RunsTable {
  run_id: string;
  directory: string;
  record_version: number | null;
  agent: string;
  agent_label: string;
  model: string | null;
  fault_profile: string;
  perturbation: string;
  trials: number;
  seed: number;
  set_name: string | null;
  month: string;
  month_source: 'set' | 'created_at';
  created_at: Timestamp;
  imported_at: Timestamp;
  source_sha256: string;
  config: Json;
  episode_records: number;
  warnings: Json;
  plan_fingerprint: string | null;
  planned_units: number | null;
  units: Generated<number>;
  unresolved_units: Generated<number>;
  completeness: Generated<'complete' | 'incomplete' | 'unresolved'>;
  configuration: Generated<string>;
}

export interface TasksTable {
  task_hash: string;
  task_id: string;
  namespaces: string[];
  primary_namespace: string;
  category: string;
  difficulty: string | null;
  max_steps: number;
  information: boolean | null;
  required_tools: string[] | null;
  task: NullableJson;
}

export interface EpisodesTable {
  run_id: string;
  work_unit: string;
  task_id: string;
  task_hash: string;
  variant: string;
  trial: number;
  fault_profile: string;
  perturbation: string;
  seed: number;
  agent: string;
  status: EpisodeStatusValue;
  passed: boolean;
  attempts: number;
  category: string;
  namespaces: string[];
  max_steps: number;
  tool_calls: number;
  unlisted_calls: number;
  errors_seen: number;
  budget_exceeded: boolean;
  calls: number;
  invalid_argument_calls: number;
  malformed_calls: number | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  cached_tokens: number | null;
  cost_usd: number | null;
  error_kind: 'agent' | 'infra' | null;
  error_code: string | null;
  error_message: string | null;
  answer: string | null;
  goal: string | null;
  perturbed: boolean;
  verdict: NullableJson;
  failure_mode: string | null;
  failure_evidence: NullableJson;
  failure_also: string[] | null;
  started_at: Timestamp;
  duration_ms: number;
}

export interface CallsTable {
  run_id: string;
  work_unit: string;
  call_index: number;
  tool: string;
  qualified: string | null;
  status: string;
  is_error: boolean;
  invalid_arguments: boolean;
  fault_type: string | null;
  fault_executed: boolean | null;
  fault_detail: string | null;
  latency_ms: number;
  arguments: Json;
  result: Json;
}

export interface VerdictNodesTable {
  run_id: string;
  work_unit: string;
  path: string;
  kind: string;
  name: string | null;
  value: boolean | null;
  undecided: string | null;
  depth: number;
  under_not: boolean;
}

export interface RunScoresTable {
  run_id: string;
  metric: string;
  k: number | null;
  value: number | null;
  ci_low: number | null;
  ci_high: number | null;
  numerator: number | null;
  denominator: number | null;
}

export interface RotationsTable {
  set_name: string;
  month: string;
  tag: string;
  seed: number;
  share: number;
  source_file: string;
  imported_at: Generated<Timestamp>;
}

export interface RetiredTasksTable {
  set_name: string;
  month: string;
  task_id: string;
  task_hash: string;
  namespace: string;
  category: string;
  added: string;
}

export interface ResultsDatabase {
  runs: RunsTable;
  tasks: TasksTable;
  episodes: EpisodesTable;
  calls: CallsTable;
  verdict_nodes: VerdictNodesTable;
  run_scores: RunScoresTable;
  rotations: RotationsTable;
  retired_tasks: RetiredTasksTable;
  accounts: AccountsTable;
  api_tokens: ApiTokensTable;
  submissions: SubmissionsTable;
}

/** The submission service's tables (migration 0002_service). */
export interface AccountsTable {
  account_id: string;
  name: string;
  max_in_flight: ColumnType<number, number | undefined, number>;
  created_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface ApiTokensTable {
  token_id: string;
  account_id: string;
  name: string;
  secret_sha256: string;
  scopes: string[];
  created_at: ColumnType<Date, Date | string | undefined, Date | string>;
  last_used_at: Timestamp | null;
  expires_at: Timestamp | null;
  revoked_at: Timestamp | null;
}

export interface SubmissionsTable {
  submission_id: string;
  account_id: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
  set_name: string;
  month: string;
  agent: Json;
  label: string;
  trials: number;
  faults: string;
  publish: boolean;
  endpoint_secret: string | null;
  idempotency_key: string | null;
  request_sha256: string;
  progress: Json;
  result: NullableJson;
  error: NullableJson;
  run_id: string | null;
  created_at: ColumnType<Date, Date | string | undefined, Date | string>;
  started_at: Timestamp | null;
  finished_at: Timestamp | null;
}

export type RunRow = Selectable<RunsTable>;
export type EpisodeRow = Selectable<EpisodesTable>;
export type NewEpisode = Insertable<EpisodesTable>;
