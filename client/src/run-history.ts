/**
 * Past runs in the workspace's `runs/` folder, newest first, read through the run store (the same reader
 * the CLI and the reports use): outcomes per run, and a run's episodes and scores to show it again.
 */
import { computeScores } from '../../server/src/scoring/metrics.ts';
import { listRuns as listStoredRuns, openRun, readChecks, type EpisodeRecord, type OutcomeCounts } from '../../server/src/runner/store.ts';
import type { RunFinished } from '../../server/src/runner/types.ts';

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
}

export function listRuns(runsDirectory: string, limit = 50): RunSummary[] {
  return listStoredRuns(runsDirectory)
    .slice(0, limit)
    .map((run) => ({
      id: run.id,
      directory: run.directory,
      created_at: run.config?.created_at ?? '',
      kind: run.config?.kind ?? 'run',
      agent: run.config?.agent ?? '?',
      fault_profile: run.config?.fault_profile ?? '?',
      tasks: run.config?.tasks.length ?? 0,
      episodes: run.episodes,
      outcomes: run.outcomes,
      damaged: run.damaged,
      ...(run.error ? { error: run.error } : {}),
      ...(run.report ? { report: run.report } : {}),
    }));
}

/**
 * A run's episode records (file order), how it finished (its scores as the CLI computes them, or a check's
 * verdicts), and the warnings of its reader.
 */
export function readRun(directory: string): { runId: string; episodes: EpisodeRecord[]; finished: RunFinished; warnings: readonly string[] } {
  const run = openRun(directory);
  const episodes = [...run.episodes];
  const base = { type: 'run-finished', run_id: run.config.run_id, directory } as const;
  const checks = run.config.kind === 'check' ? readChecks(directory) : undefined;
  const finished: RunFinished = run.config.kind === 'check'
    ? { ...base, kind: 'check', interrupted: checks === undefined, checks: checks ?? [] }
    : { ...base, kind: 'run', interrupted: false, scores: computeScores(episodes, { seed: run.config.seed }) };
  return { runId: run.config.run_id, episodes, finished, warnings: run.warnings };
}
