/**
 * Predicate coverage for the code lens, from the check runs in `<workspace>/runs/check-*`: the latest run
 * that checked the task, its passing reference episodes at no faults, and `predicateCoverage` of the task's
 * current predicate over their verdict trees. Journals are re-read only when they change on disk.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { predicateCoverage, type Coverage } from '../predicates/coverage.ts';
import type { NodeVerdict } from '../predicates/evaluate.ts';
import { parsePredicate } from '../predicates/tree.ts';
import { EPISODES_FILE, readEpisodes } from '../runner/journal.ts';
import type { EpisodeResult } from '../runner/types.ts';

/** What the latest check run says about one task. */
export interface TaskCheckSummary {
  runId: string;
  /** The hash of the task version the run checked. */
  taskHash: string;
  /** Verdict trees of the passing reference solutions (latest record per solution). */
  passingVerdicts: NodeVerdict[];
}

interface RunSummary {
  stamp: string;
  byTask: Map<string, TaskCheckSummary>;
}

export class CheckRuns {
  private readonly runs = new Map<string, RunSummary>();

  /** The latest check run under `workspace/runs` that has episodes of `taskId`. */
  latestFor(workspace: string, taskId: string): TaskCheckSummary | undefined {
    const runsDir = join(workspace, 'runs');
    let names: string[];
    try {
      names = readdirSync(runsDir).filter((n) => n.startsWith('check-'));
    } catch {
      return undefined;
    }
    // Run ids are `check-YYYYMMDD-HHMMSS-<random>`: the name orders them by start time.
    for (const name of names.sort().reverse()) {
      const hit = this.summary(join(runsDir, name), name)?.byTask.get(taskId);
      if (hit) return hit;
    }
    return undefined;
  }

  private summary(directory: string, runId: string): RunSummary | undefined {
    let stamp: string;
    try {
      const stat = statSync(join(directory, EPISODES_FILE));
      stamp = `${stat.mtimeMs}:${stat.size}`;
    } catch {
      return undefined;
    }
    const cached = this.runs.get(directory);
    if (cached?.stamp === stamp) return cached;
    const summary: RunSummary = { stamp, byTask: summarize(runId, readEpisodes(directory).results) };
    this.runs.set(directory, summary);
    return summary;
  }
}

function summarize(runId: string, results: EpisodeResult[]): Map<string, TaskCheckSummary> {
  // The latest non-infra record per (task, reference solution) at no faults, as `judgeCheck` reads them.
  const latest = new Map<string, EpisodeResult>();
  const hashes = new Map<string, string>();
  for (const r of results) {
    hashes.set(r.task_id, r.task_hash);
    if (r.status === 'infra_error' || r.fault_profile !== 'none' || !r.variant.startsWith('reference:')) continue;
    latest.set(`${r.task_id}|${r.variant}`, r);
  }
  const byTask = new Map<string, TaskCheckSummary>();
  for (const [taskId, taskHash] of hashes) byTask.set(taskId, { runId, taskHash, passingVerdicts: [] });
  for (const r of latest.values()) if (r.passed && r.verdict) byTask.get(r.task_id)!.passingVerdicts.push(r.verdict);
  return byTask;
}

export function coverageOf(successPredicate: unknown, check: TaskCheckSummary): Coverage {
  return predicateCoverage(parsePredicate(successPredicate, ['success_predicate']), check.passingVerdicts);
}
