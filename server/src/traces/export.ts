/**
 * `mcpbench export runs/<id> --format atif|otlp`: a run's episodes (the standing record of each work unit)
 * handed to other tools.
 *
 *   atif   a folder of ATIF trajectories, `<work_unit>.json` each (default `runs/<id>/atif/`)
 *   otlp   one OTLP/JSON ExportTraceServiceRequest with one trace per episode (default `runs/<id>/otlp.json`)
 *
 * A sealed run's private task content (goals, arguments, results, answers, evidence) is replaced by a marker
 * unless `includePrivate` is set. Files are written atomically.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { writeJsonAtomicSync } from '../atomic-file.ts';
import { McpbenchError } from '../errors.ts';
import { openRun, type StoredRun } from '../record/run-folder.ts';
import type { EpisodeRecord } from '../record/schema.ts';
import { latestByWorkUnit } from '../record/work-units.ts';
import { loadRunTasks } from '../tasks/load.ts';
import { toAtif } from './atif.ts';
import { isSealedRun } from '../record/trace.ts';
import { PRIVATE, redactEpisode } from './episode-trace.ts';
import { toOtlp } from './otlp.ts';

export const EXPORT_FORMATS = ['atif', 'otlp'] as const;

export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export interface ExportOptions {
  format: ExportFormat;
  /** Where to write (atif: a folder; otlp: a file); default inside the run folder. */
  out?: string;
  /** Export a sealed run's private task content too. */
  includePrivate?: boolean;
  /** Only these episodes (work-unit keys, or unique prefixes of them). */
  episodes?: readonly string[];
}

export interface ExportResult {
  /** The file or folder written. */
  path: string;
  episodes: number;
  /** Whether private content was replaced (a sealed run exported without includePrivate). */
  redacted: boolean;
}

/** An export that cannot be made as asked: its code says why (a usage error). */
export class ExportError extends McpbenchError {
  static override readonly code: string = 'export';
  constructor(message: string, code: 'unknown-episode' | 'ambiguous-episode' | 'no-episodes') {
    super(message, { code });
  }
}

/** The standing episodes of `run` whose work unit starts with one of `keys` (all when none given). */
export function selectEpisodes(run: StoredRun, keys: readonly string[] = []): EpisodeRecord[] {
  const standing = latestByWorkUnit([...run.episodes]);
  if (keys.length === 0) return standing;
  return keys.map((key) => {
    const matches = standing.filter((r) => r.work_unit.startsWith(key));
    if (matches.length === 0) throw new ExportError(`${run.directory}: no episode has a work unit starting with ${key}`, 'unknown-episode');
    if (matches.length > 1) throw new ExportError(`${run.directory}: ${matches.length} episodes have a work unit starting with ${key}; give more of it`, 'ambiguous-episode');
    return matches[0]!;
  });
}

export function exportRun(directory: string, options: ExportOptions): ExportResult {
  const run = openRun(directory);
  const selected = selectEpisodes(run, options.episodes);
  if (selected.length === 0) throw new ExportError(`${directory}: the run has no episodes to export`, 'no-episodes');
  const redacted = isSealedRun(run.config) && !options.includePrivate;
  const records = redacted ? selected.map(redactEpisode) : selected;
  const tasks = redacted ? new Map() : loadRunTasks(run.config);
  const goalOf = (r: EpisodeRecord) => (redacted ? PRIVATE : tasks.get(r.task_hash)?.goal);
  if (options.format === 'atif') {
    const folder = resolve(options.out ?? join(directory, 'atif'));
    mkdirSync(folder, { recursive: true });
    for (const record of records) writeJsonAtomicSync(join(folder, `${record.work_unit}.json`), toAtif(record, run.config, goalOf(record)));
    return { path: folder, episodes: records.length, redacted };
  }
  const file = resolve(options.out ?? join(directory, 'otlp.json'));
  writeJsonAtomicSync(file, toOtlp(records, run.config, goalOf));
  return { path: file, episodes: records.length, redacted };
}
