/**
 * Work units: an episode is identified by the hash of what decides its outcome, and a journal may hold a unit
 * more than once (retries, duplicates); these helpers choose the record that stands for each unit. Resume,
 * scoring, the queue and the results database all select episodes through them.
 */
import { createHash } from 'node:crypto';
import type { EpisodeRecord, EpisodeStatus } from './schema.ts';

/** What decides an episode's outcome, and nothing else (no paths, ports or concurrency). */
export interface WorkUnit {
  task_hash: string;
  variant: string;
  trial: number;
  fault_profile: string;
  perturbation: string;
  seed: number;
}

/** The work-unit key: SHA-256 (hex) of the JSON array of the unit's fields, in a fixed order. */
export function workUnitKey(unit: WorkUnit): string {
  const fields = ['mcpbench-work-unit/1', unit.task_hash, unit.variant, unit.trial, unit.fault_profile, unit.perturbation, unit.seed];
  return createHash('sha256').update(JSON.stringify(fields)).digest('hex');
}

/** A run's plan as recorded in run.json: its unit count and the SHA-256 of its sorted work-unit keys. */
export function planRecord(keys: readonly string[]): { units: number; fingerprint: string } {
  const unique = [...new Set(keys)].sort();
  return { units: unique.length, fingerprint: createHash('sha256').update('mcpbench-plan/1\n').update(unique.join('\n')).digest('hex') };
}

/**
 * Where a run stands against its plan: complete (every planned unit has a scored record), unresolved (some
 * unit's last attempts were all infrastructure errors), or incomplete (planned units never recorded).
 */
export type Completeness = 'complete' | 'incomplete' | 'unresolved';

export interface RunCompleteness {
  completeness: Completeness;
  /** Planned units (run.json's plan, else tasks x trials x perturbation levels for a run), null when unknown. */
  planned: number | null;
  /** Units with a record, and of those the ones whose every attempt was an infrastructure error. */
  units: number;
  unresolved: number;
}

export function runCompleteness(config: { kind?: string; plan?: { units: number } | undefined; tasks: readonly string[]; trials: number; perturbations?: readonly string[] }, records: readonly Pick<EpisodeRecord, 'work_unit' | 'status'>[]): RunCompleteness {
  const standing = latestByWorkUnit(records);
  const unresolved = standing.filter((r) => !isScored(r)).length;
  const planned = config.plan?.units ?? (config.kind !== 'check' ? config.tasks.length * config.trials * Math.max(1, config.perturbations?.length ?? 1) : null);
  const completeness: Completeness = unresolved > 0 ? 'unresolved' : planned !== null && standing.length < planned ? 'incomplete' : 'complete';
  return { completeness, planned, units: standing.length, unresolved };
}

/** Every episode of a run ended in one error (same kind and code): a setup fault, not a measurement of the agent. */
export interface SetupFailure {
  kind: 'agent' | 'infra';
  code: string;
  /** The first such episode's message. */
  message: string;
  episodes: number;
}

/**
 * Errors that say the run was set up wrong rather than anything about the agent: a model endpoint that refuses
 * the request (a missing or wrong key: 401, 403) or cannot be reached, an agent that cannot be started, and
 * every infrastructure error (ours).
 */
const SETUP_AGENT_CODES: ReadonlySet<string> = new Set(['model-rejected', 'model-unreachable', 'model-endpoint', 'agent-spawn', 'agent-unreachable']);
export const isSetupError = (error: Pick<NonNullable<EpisodeRecord['error']>, 'kind' | 'code'>) => error.kind === 'infra' || SETUP_AGENT_CODES.has(error.code);

export function commonSetupFailure(records: readonly EpisodeRecord[]): SetupFailure | undefined {
  const standing = latestByWorkUnit(records);
  const first = standing[0]?.error;
  if (!first || !isSetupError(first) || !standing.every((r) => r.error && r.error.kind === first.kind && r.error.code === first.code)) return undefined;
  return { kind: first.kind, code: first.code, message: first.message.split('\n')[0]!, episodes: standing.length };
}

/** Whether an episode's outcome stands (it is not retried): everything but an infrastructure error. */
export const isScored = (record: Pick<EpisodeRecord, 'status'>): boolean => record.status !== 'infra_error';

/**
 * The record that stands for each work unit: its last scored record, or its last record when every attempt
 * was an infrastructure error. In first-seen order. A duplicate (the same unit recorded twice) counts once.
 */
export function latestByWorkUnit<T extends Pick<EpisodeRecord, 'work_unit' | 'status'>>(records: readonly T[]): T[] {
  const byUnit = new Map<string, T>();
  for (const record of records) {
    const previous = byUnit.get(record.work_unit);
    if (!previous || isScored(record) || !isScored(previous)) byUnit.set(record.work_unit, record);
  }
  return [...byUnit.values()];
}

/** The work units that have a scored record: what a resumed run does not run again. */
export function finishedWorkUnits(records: readonly Pick<EpisodeRecord, 'work_unit' | 'status'>[]): Set<string> {
  return new Set(records.filter(isScored).map((r) => r.work_unit));
}

export type OutcomeCounts = Record<EpisodeStatus, number>;

/** Outcomes over the standing record of each work unit. */
export function outcomeCounts(records: readonly EpisodeRecord[]): OutcomeCounts {
  const counts: OutcomeCounts = { passed: 0, failed: 0, agent_error: 0, infra_error: 0 };
  for (const r of latestByWorkUnit(records)) counts[r.status]++;
  return counts;
}

/** Why an episode did not pass, in one line (empty for a passed episode). */
export function outcomeReason(record: EpisodeRecord): string {
  if (record.error) return `${record.error.code}: ${record.error.message.split('\n')[0]}`;
  if (record.status === 'passed') return '';
  if (record.failure) return `${record.failure.code}: ${record.failure.message.split('\n')[0]}`;
  if (record.budget_exceeded) return `budget exceeded: ${record.tool_calls} calls, max_steps ${record.max_steps}`;
  if (!record.verdict) return 'no verdict: the predicate was not evaluated';
  return `success predicate ${record.verdict.value === undefined ? 'undecided' : String(record.verdict.value)}`;
}
