/** Past runs in the workspace's `runs/` folder, newest first, read from each `runs/<id>/run.json`. */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { EpisodeResult } from '../../server/src/runner/types.ts';

export interface RunSummary {
  id: string;
  directory: string;
  created_at: string;
  agent: string;
  fault_profile: string;
  tasks: number;
  /** Finished episodes in the journal. */
  episodes: number;
  passed: number;
  report?: string;
}

export function listRuns(runsDirectory: string, limit = 50): RunSummary[] {
  if (!existsSync(runsDirectory)) return [];
  const runs: RunSummary[] = [];
  for (const name of readdirSync(runsDirectory)) {
    const directory = join(runsDirectory, name);
    const runFile = join(directory, 'run.json');
    try {
      if (!statSync(directory).isDirectory() || !existsSync(runFile)) continue;
      const config = JSON.parse(readFileSync(runFile, 'utf8')) as { run_id?: string; created_at?: string; agent?: string; fault_profile?: string; tasks?: unknown[] };
      const results = readResults(directory);
      const report = join(directory, 'report.html');
      runs.push({
        id: config.run_id ?? name,
        directory,
        created_at: config.created_at ?? '',
        agent: config.agent ?? '?',
        fault_profile: config.fault_profile ?? '?',
        tasks: Array.isArray(config.tasks) ? config.tasks.length : 0,
        episodes: results.length,
        passed: results.filter((r) => r.passed).length,
        ...(existsSync(report) ? { report } : {}),
      });
    } catch {
      // A run folder being written or damaged is skipped; the list is a convenience, not a record.
    }
  }
  return runs.sort((a, b) => b.created_at.localeCompare(a.created_at)).slice(0, limit);
}

/** The journal's complete lines (a torn last line is what a killed run leaves, and is not an episode). */
export function readResults(directory: string): EpisodeResult[] {
  const file = join(directory, 'episodes.jsonl');
  if (!existsSync(file)) return [];
  const text = readFileSync(file, 'utf8');
  const complete = text.slice(0, text.lastIndexOf('\n') + 1);
  return complete
    .split('\n')
    .filter((line) => line.trim())
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as EpisodeResult];
      } catch {
        return [];
      }
    });
}
