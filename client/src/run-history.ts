/**
 * Past runs in the workspace's `runs/` folder, newest first, read through the run store (the same reader
 * the CLI and the reports use): outcomes per run, and a run's episodes and scores to show it again.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { computeScores } from '../../server/src/scoring/metrics.ts';
import { listRuns as listStoredRuns, openRun, readChecks, REPORT_FILES, type CheckListing, type EpisodeRecord, type OutcomeCounts } from '../../server/src/runner/store.ts';
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
  /** A check's verdicts (from checks.json); absent while it runs or when it was interrupted. */
  checks?: CheckListing;
  /** The line the runner panel's history shows under the run id. */
  label: string;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * What a past run came to, in one line. A check says what check decided (`check ok`, `check failing` and
 * which tasks), from its checks.json: its episodes are probes that must fail as often as pass, so a count of
 * passed episodes would say nothing. A run says its outcomes, the three kinds of not passing apart.
 */
export function historyLabel(run: Omit<RunSummary, 'label'>): string {
  if (run.error) return `unreadable: ${run.error}`;
  const damaged = run.damaged ? ` · ${plural(run.damaged, 'damaged line')}` : '';
  if (run.kind === 'check') {
    if (!run.checks) return `check not finished (interrupted, or still running)${damaged}`;
    const { tasks, failing } = run.checks;
    if (!failing.length) return `check ok · ${plural(tasks, 'task')}${damaged}`;
    const named = failing.slice(0, 3).join(', ') + (failing.length > 3 ? `, and ${failing.length - 3} more` : '');
    return `check failing · ${failing.length} of ${plural(tasks, 'task')}: ${named}${damaged}`;
  }
  const o = run.outcomes;
  return (
    `${run.agent} · faults ${run.fault_profile} · ${o.passed}/${run.episodes} passed` +
    (o.failed ? ` · ${o.failed} failed` : '') +
    (o.agent_error ? ` · ${plural(o.agent_error, 'agent error')}` : '') +
    (o.infra_error ? ` · ${plural(o.infra_error, 'infra error')}` : '') +
    damaged
  );
}

export function listRuns(runsDirectory: string, limit = 50): RunSummary[] {
  return listStoredRuns(runsDirectory)
    .slice(0, limit)
    .map((run): Omit<RunSummary, 'label'> => ({
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
      ...(run.checks ? { checks: run.checks } : {}),
    }))
    .map((run) => ({ ...run, label: historyLabel(run) }));
}

/** The report files of a run folder, when it has them (an interrupted run has none). */
function reportOf(directory: string): { report?: { json: string; junit: string; html: string } } {
  const files = { json: join(directory, REPORT_FILES.json), junit: join(directory, REPORT_FILES.junit), html: join(directory, REPORT_FILES.html) };
  return existsSync(files.html) ? { report: files } : {};
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
    : { ...base, kind: 'run', interrupted: false, scores: computeScores(episodes, { seed: run.config.seed }), ...reportOf(directory) };
  return { runId: run.config.run_id, episodes, finished, warnings: run.warnings };
}
