/**
 * What a run comes to, derived once from its records: the record that stands for each work unit (and how
 * many attempts it took), the outcome counts, the scores, and the failure mode of each failed episode. The
 * session at the end of a run, `mcpbench report`, `results import` and the extension's run history all take
 * a run's numbers from `deriveRun`, so they cannot disagree.
 *
 * Failure modes are classified against the task version each episode ran (found by canonical hash) and the
 * namespace schemas; an episode whose task is not at hand is classified without it.
 */
import type { Registry } from '../mcp/registry.ts';
import type { EpisodeRecord, RunRecord } from '../record/schema.ts';
import { latestByWorkUnit, outcomeCounts, type OutcomeCounts } from '../record/work-units.ts';
import type { Task } from '../tasks/model.ts';
import { classifyFailure, countModes, type FailureDiagnosis, type FailureMode } from './failure-modes.ts';
import { computeScores, type ScoreOptions, type Scores } from './metrics.ts';

/** Classifies a failed episode (null when it did not fail). */
export type Diagnoser = (record: EpisodeRecord) => FailureDiagnosis | null;

/** The failure mode of each failed episode, and their counts. */
export interface FailureSummary {
  counts: Record<FailureMode, number>;
  /** Failed episodes diagnosed. */
  failed: number;
  /** Share of them with a specific mode rather than `unknown`; null when none failed. */
  specific_share: number | null;
  episodes: ({ task_id: string; trial: number; variant: string; fault_profile: string; perturbation: string } & FailureDiagnosis)[];
}

export interface DerivedRun<R extends EpisodeRecord = EpisodeRecord> {
  config: RunRecord;
  /** Every journal record, in file order (retried infrastructure errors included). */
  records: readonly R[];
  /** The record that stands for each work unit (`latestByWorkUnit`), first-seen order. */
  standing: readonly R[];
  /** Journal records per work unit. */
  attempts: ReadonlyMap<string, number>;
  outcomes: OutcomeCounts;
  scores: Scores;
  /** Classifies any record of this run (memoized per record). */
  diagnose: Diagnoser;
  /** Failure modes of the standing records; absent when the run was derived without a diagnoser. */
  failures?: FailureSummary;
  warnings: readonly string[];
}

/** A run as its folder holds it (`openRun` / `resumeRun` give one). */
export interface RunRecords<R extends EpisodeRecord = EpisodeRecord> {
  config: RunRecord;
  episodes: readonly R[];
  warnings: readonly string[];
}

export interface DeriveOptions {
  /** The tasks the run's episodes may have run, by canonical hash. */
  tasks?: ReadonlyMap<string, Task>;
  /** The namespace schemas; without them (or `diagnose`) no failure modes are derived. */
  registry?: Registry;
  /** Classifies failed episodes instead of the default diagnoser of `tasks` and `registry`. */
  diagnose?: Diagnoser;
  /** Bootstrap settings (the run's seed by default, so the same run gives the same intervals). */
  scoring?: ScoreOptions;
}

/** The diagnoser of episodes run against `tasks` (by canonical hash). */
export function episodeDiagnoser(tasks: ReadonlyMap<string, Task>, registry: Registry): Diagnoser {
  const memo = new WeakMap<EpisodeRecord, FailureDiagnosis | null>();
  return (record) => {
    if (!memo.has(record)) memo.set(record, classifyFailure(record, tasks.get(record.task_hash), registry));
    return memo.get(record)!;
  };
}

/** Diagnoses the failed episodes among `records` (one per work unit). */
export function summarizeFailures(records: readonly EpisodeRecord[], diagnose: Diagnoser): FailureSummary {
  const episodes = records.flatMap((r) => {
    const d = diagnose(r);
    return d ? [{ task_id: r.task_id, trial: r.trial, variant: r.variant, fault_profile: r.fault_profile, perturbation: r.perturbation, ...d }] : [];
  });
  const counts = countModes(episodes.map((e) => e.mode));
  return { counts, failed: episodes.length, specific_share: episodes.length ? 1 - counts.unknown / episodes.length : null, episodes };
}

export function deriveRun<R extends EpisodeRecord>(run: RunRecords<R>, options: DeriveOptions = {}): DerivedRun<R> {
  const records = [...run.episodes];
  const standing = latestByWorkUnit(records);
  const attempts = new Map<string, number>();
  for (const record of records) attempts.set(record.work_unit, (attempts.get(record.work_unit) ?? 0) + 1);
  const diagnose: Diagnoser | undefined = options.diagnose ?? (options.registry ? episodeDiagnoser(options.tasks ?? new Map(), options.registry) : undefined);
  return {
    config: run.config,
    records,
    standing,
    attempts,
    outcomes: outcomeCounts(records),
    scores: computeScores(records, { seed: run.config.seed, ...options.scoring }),
    diagnose: diagnose ?? (() => null),
    ...(diagnose ? { failures: summarizeFailures(standing, diagnose) } : {}),
    warnings: run.warnings,
  };
}
