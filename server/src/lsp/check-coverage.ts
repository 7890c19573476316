/**
 * Predicate coverage for the code lens, from the check runs in `<workspace>/runs/check-*`: the latest check
 * run whose checks record (checks.json, read through the run store) judged the task, and the coverage it
 * recorded. Records are re-read only when they change on disk.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Coverage } from '../predicates/coverage.ts';
import { CHECKS_FILE, readChecks } from '../record/run-folder.ts';

/** What the latest check run says about one task. */
export interface TaskCheckSummary {
  runId: string;
  /** The hash of the task version the run checked. */
  taskHash: string;
  /** Which leaves and `any` branches the passing reference solutions witnessed. */
  coverage: Coverage;
}

interface RunSummary {
  stamp: string;
  byTask: Map<string, TaskCheckSummary>;
}

export class CheckRuns {
  private readonly runs = new Map<string, RunSummary>();

  /** The latest check run under `workspace/runs` that judged `taskId`. */
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
      const stat = statSync(join(directory, CHECKS_FILE));
      stamp = `${stat.mtimeMs}:${stat.size}`;
    } catch {
      return undefined; // no checks record: the check is running, or was interrupted
    }
    const cached = this.runs.get(directory);
    if (cached?.stamp === stamp) return cached;
    let checks: ReturnType<typeof readChecks>;
    try {
      checks = readChecks(directory);
    } catch {
      return undefined; // a damaged record gives no lens; `mcpbench check` writes a new one
    }
    const byTask = new Map((checks ?? []).map((c) => [c.task_id, { runId, taskHash: c.task_hash, coverage: c.coverage }]));
    const summary: RunSummary = { stamp, byTask };
    this.runs.set(directory, summary);
    return summary;
  }
}
