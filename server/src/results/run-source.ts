/**
 * How the results engine reads a run folder: through the run store (runner/store.ts `openRun`, the one reader
 * of run.json and episodes.jsonl), with each record's model usage flattened for the database.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { collectTaskFiles, readText } from '../tasks/files.ts';
import { canonicalHash } from '../tasks/hash.ts';
import { TaskSchema, type Task } from '../tasks/model.ts';
import { EPISODES_FILE, openRun, RUN_FILE, RunStoreError, type EpisodeRecord, type RunRecord } from '../runner/store.ts';
import type { Registry } from '../mcp/registry.ts';
import { classifyFailure, type FailureDiagnosis } from './failure-modes.ts';

/** An episode record as the results engine uses it: the store's record with its model usage flattened. */
export interface SourceEpisode extends EpisodeRecord {
  /** Token and cost accounting of model agents (null where not recorded). */
  usage: { prompt_tokens: number | null; completion_tokens: number | null; cached_tokens: number | null; cost_usd: number | null; malformed_calls: number | null };
}

export interface SourceRun {
  directory: string;
  config: RunRecord;
  /** Journal records in file order (retried infrastructure failures included). */
  records: SourceEpisode[];
  warnings: string[];
  /** SHA-256 over run.json and the journal as read: unchanged folders import as no-ops. */
  sha256: string;
}

export function isRunFolder(path: string): boolean {
  return existsSync(join(path, RUN_FILE)) && statSync(path).isDirectory();
}

function withUsage(record: EpisodeRecord): SourceEpisode {
  const m = record.model;
  return {
    ...record,
    usage: {
      prompt_tokens: m ? m.prompt_tokens : null,
      completion_tokens: m ? m.completion_tokens : null,
      cached_tokens: m ? m.cached_tokens : null,
      // Costs in another currency than US dollars are not comparable here.
      cost_usd: m && (m.currency === undefined || m.currency === 'USD') ? m.cost : null,
      malformed_calls: m ? m.calls.filter((c) => c.status === 'malformed').length : null,
    },
  };
}

/** A folder that is not a readable run (no run.json, or a run.json that is not one). */
export class RunSourceError extends Error {}

/** Reads a run folder (throws RunSourceError with the path when it is not one). */
export function openSourceRun(directory: string): SourceRun {
  const absolute = resolve(directory);
  let run: ReturnType<typeof openRun>;
  try {
    run = openRun(absolute);
  } catch (error) {
    if (error instanceof RunStoreError) throw new RunSourceError(error.message);
    throw error;
  }
  const hash = createHash('sha256');
  for (const file of [RUN_FILE, EPISODES_FILE]) {
    const path = join(absolute, file);
    hash.update(file).update('\0');
    if (existsSync(path)) hash.update(readFileSync(path));
    hash.update('\0');
  }
  return { directory: absolute, config: run.config, records: run.episodes.map(withUsage), warnings: [...run.warnings], sha256: hash.digest('hex') };
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
export function failureDiagnoser(config: Record<string, unknown> | { task_files: string[] }, registry: Registry, extra: readonly string[] = []): (result: EpisodeRecord) => FailureDiagnosis | null {
  const tasks = loadRunTasks(config, extra);
  return (result) => classifyFailure(result, tasks.get(result.task_hash), registry);
}
