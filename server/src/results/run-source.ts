/**
 * How the results engine reads a run folder: the one place that touches the run record's reader, so that
 * moving to the typed run store (runner/store.ts: openRun, work_unit and status on every record) is a change
 * here and nowhere else. Today it reads through scoring/report.ts's readRun and fills in what older records
 * lack: the work-unit key and the four-way status.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { collectTaskFiles, readText } from '../tasks/files.ts';
import { canonicalHash } from '../tasks/hash.ts';
import { TaskSchema, type Task } from '../tasks/model.ts';
import { JOURNAL_FILE, RUN_FILE, readRun, type RunConfig } from '../scoring/report.ts';
import type { EpisodeResult } from '../runner/types.ts';
import type { Registry } from '../mcp/registry.ts';
import { classifyFailure, type FailureDiagnosis } from './failure-modes.ts';
import type { EpisodeStatusValue } from './schema.ts';

/** An episode record as the results engine uses it: the journal's record with its identity and outcome made explicit. */
export interface SourceEpisode extends Omit<EpisodeResult, 'status'> {
  work_unit: string;
  status: EpisodeStatusValue;
  error?: { kind: 'agent' | 'infra'; code: string; message: string };
  /** Token and cost accounting of model agents, where recorded. */
  usage?: { prompt_tokens: number | null; completion_tokens: number | null; cached_tokens: number | null; cost_usd: number | null; malformed_calls: number | null };
}

export interface SourceRun {
  directory: string;
  config: RunConfig;
  /** Journal records in file order (retried infrastructure failures included). */
  records: SourceEpisode[];
  warnings: string[];
  /** SHA-256 over run.json and the journal as read: unchanged folders import as no-ops. */
  sha256: string;
}

export function isRunFolder(path: string): boolean {
  return existsSync(join(path, RUN_FILE)) && statSync(path).isDirectory();
}

/** The work-unit key of a record that does not carry one: a hash of what decides its outcome. */
export function workUnitOf(record: Pick<EpisodeResult, 'task_hash' | 'variant' | 'trial' | 'fault_profile' | 'perturbation' | 'seed'>): string {
  const key = JSON.stringify([record.task_hash, record.variant, record.trial, record.fault_profile, record.perturbation, record.seed]);
  return createHash('sha256').update(key).digest('hex').slice(0, 32);
}

const num = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

function normalize(record: EpisodeResult): SourceEpisode {
  const raw = record as EpisodeResult & Record<string, unknown>;
  const recorded = raw.status as string;
  const status: EpisodeStatusValue =
    recorded === 'passed' || recorded === 'failed' || recorded === 'agent_error' || recorded === 'infra_error' ? recorded
    : record.passed ? 'passed' : 'failed';
  const given = raw.error as SourceEpisode['error'] | undefined;
  const error: SourceEpisode['error'] =
    given && (given.kind === 'agent' || given.kind === 'infra') ? given
    : record.infra_error !== undefined ? { kind: 'infra', code: 'infra_error', message: record.infra_error }
    : record.agent_error !== undefined ? { kind: 'agent', code: 'agent_error', message: record.agent_error }
    : undefined;
  const usage = (raw.usage ?? raw.tokens ?? {}) as Record<string, unknown>;
  const cost = raw.cost_usd ?? (raw.cost as Record<string, unknown> | undefined)?.usd ?? raw.cost;
  return {
    ...record,
    work_unit: typeof raw.work_unit === 'string' ? raw.work_unit : workUnitOf(record),
    status,
    ...(error ? { error } : {}),
    usage: {
      prompt_tokens: num(usage.prompt_tokens ?? usage.prompt),
      completion_tokens: num(usage.completion_tokens ?? usage.completion),
      cached_tokens: num(usage.cached_tokens ?? usage.cached),
      cost_usd: num(cost),
      malformed_calls: num(raw.malformed_calls),
    },
  };
}

/** A folder that is not a readable run (no run.json, or a run.json that is not one). */
export class RunSourceError extends Error {}

/** Reads a run folder (throws RunSourceError with the path when it is not one). */
export function openSourceRun(directory: string): SourceRun {
  const absolute = resolve(directory);
  let run: ReturnType<typeof readRun>;
  try {
    run = readRun(absolute);
  } catch (error) {
    throw new RunSourceError((error as Error).message);
  }
  const hash = createHash('sha256');
  for (const file of [RUN_FILE, JOURNAL_FILE]) {
    const path = join(absolute, file);
    hash.update(file).update('\0');
    if (existsSync(path)) hash.update(readFileSync(path));
    hash.update('\0');
  }
  return { directory: absolute, config: run.config, records: run.results.map(normalize), warnings: run.warnings, sha256: hash.digest('hex') };
}

/** The last scored record of each work unit (else its last record), with the number of records it had. */
export function scoredEpisodes(records: readonly SourceEpisode[]): { episode: SourceEpisode; attempts: number }[] {
  const byUnit = new Map<string, { episode: SourceEpisode; attempts: number }>();
  for (const record of records) {
    const previous = byUnit.get(record.work_unit);
    const attempts = (previous?.attempts ?? 0) + 1;
    const keep = !previous || record.status !== 'infra_error' || previous.episode.status === 'infra_error';
    byUnit.set(record.work_unit, { episode: keep ? record : previous!.episode, attempts });
  }
  return [...byUnit.values()];
}

/**
 * The task files a run can be judged against, by canonical hash: the run's own task files where they still
 * exist, and any further files or folders given. A file that no longer hashes as it did at run time simply
 * does not match; sealed-set entries are not read.
 */
export function loadRunTasks(config: Record<string, unknown> | { task_files: string[] }, extra: readonly string[] = []): Map<string, Task> {
  const files = new Set<string>();
  const files0 = (config as { task_files?: unknown }).task_files;
  const recorded: unknown[] = Array.isArray(files0) ? files0 : [];
  for (const file of recorded) if (typeof file === 'string' && !file.includes('.sealed.json') && existsSync(file)) files.add(file);
  if (extra.length > 0) for (const file of collectTaskFiles([...extra])) files.add(resolve(file));
  const tasks = new Map<string, Task>();
  for (const file of files) {
    let value: unknown;
    try {
      value = JSON.parse(readText(file));
    } catch {
      continue;
    }
    const parsed = TaskSchema.safeParse(value);
    if (parsed.success) tasks.set(canonicalHash(value), parsed.data);
  }
  return tasks;
}

/**
 * The failure diagnoser of a run's report: each failed episode classified against the task version it ran
 * (found by canonical hash among the run's task files) and the namespace schemas.
 */
export function failureDiagnoser(config: Record<string, unknown> | { task_files: string[] }, registry: Registry, extra: readonly string[] = []): (result: EpisodeResult) => FailureDiagnosis | null {
  const tasks = loadRunTasks(config, extra);
  return (result) => classifyFailure(result, tasks.get(result.task_hash), registry);
}
