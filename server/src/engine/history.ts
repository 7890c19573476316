/**
 * Past runs of a workspace as the editor shows them: a summary per run folder (newest first) and one run
 * read back whole, its numbers derived as every other reader derives them (scoring/derive.ts). The language
 * server answers the extension's history requests with these (engine/protocol.ts).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { listRuns, openRun, readChecks, REPORT_FILES } from '../record/run-folder.ts';
import { deriveRun } from '../scoring/derive.ts';
import type { RunFinished, RunSummary, RunView } from './protocol.ts';

/** The run folders under `runsDirectory`, newest first, at most `limit`. */
export function runHistory(runsDirectory: string, limit = 50): RunSummary[] {
  return listRuns(runsDirectory)
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
      ...(run.checks ? { checks: run.checks } : {}),
    }));
}

/** The report files of a run folder, when it has them (an interrupted run has none). */
function reportOf(directory: string): { report?: { json: string; junit: string; html: string } } {
  const files = { json: join(directory, REPORT_FILES.json), junit: join(directory, REPORT_FILES.junit), html: join(directory, REPORT_FILES.html) };
  return existsSync(files.html) ? { report: files } : {};
}

/** A run's episode records (file order), how it finished (its scores, or a check's verdicts), and its reader's warnings. */
export function runView(directory: string): RunView {
  const run = openRun(directory);
  const base = { type: 'run-finished', run_id: run.config.run_id, directory } as const;
  const checks = run.config.kind === 'check' ? readChecks(directory) : undefined;
  const finished: RunFinished = run.config.kind === 'check'
    ? { ...base, kind: 'check', interrupted: checks === undefined, checks: checks ?? [] }
    : { ...base, kind: 'run', interrupted: false, scores: deriveRun(run).scores, ...reportOf(directory) };
  return { runId: run.config.run_id, episodes: [...run.episodes], finished, warnings: [...run.warnings] };
}
