/**
 * How the results engine reads a run folder: through the run store (runner/store.ts `openRun`, the one reader
 * of run.json and episodes.jsonl), with each record's model usage flattened for the database.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { EPISODES_FILE, openRun, RUN_FILE, RunStoreError } from '../record/run-folder.ts';
import type { Registry } from '../mcp/registry.ts';
import { classifyFailure, type FailureDiagnosis } from '../scoring/failure-modes.ts';
import type { EpisodeRecord, RunRecord } from '../record/schema.ts';
import { loadRunTasks } from '../tasks/load.ts';
import { McpbenchError } from '../errors.ts';

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
export class RunSourceError extends McpbenchError {
  static override readonly code: string = 'run-source';
}

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

