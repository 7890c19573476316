/**
 * Predicate coverage for the code lens, from the check runs in `<workspace>/runs/check-*`: the latest check
 * run whose checks record (checks.json, read through the run store) judged the task, and the coverage it
 * recorded. Records are re-read only when they change on disk.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Node } from 'jsonc-parser';
import type { Coverage } from '../predicates/coverage.ts';
import { CHECKS_FILE, readChecks } from '../runner/store.ts';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { Command, type CodeLens } from 'vscode-languageserver';
import { nodeAt, treeOf } from './json-context.ts';

export const RUN_TASK_COMMAND = 'mcpbench.runTask';
export const RUN_TASK_WITH_FAULTS_COMMAND = 'mcpbench.runTaskWithFaults';
export const CHECK_TASK_COMMAND = 'mcpbench.checkTask';

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

/** What the coverage lens shows: the check's coverage of the current predicate, or that there is none. */
export interface LensCoverage {
  coverage?: Coverage;
  /** The task changed since the check run (its canonical hash differs). */
  stale?: boolean;
}

/** The lenses on a task's `id` line: run, run with faults, check, and the coverage. */
export function taskLenses(uri: string, text: string, coverage: LensCoverage): CodeLens[] {
  const root: Node | undefined = treeOf(text);
  const idProperty = nodeAt(root, ['id'])?.parent;
  if (!idProperty) return [];
  const document = TextDocument.create('', 'json', 0, text);
  const range = { start: document.positionAt(idProperty.offset), end: document.positionAt(idProperty.offset + idProperty.length) };
  const lens = (title: string, command: string): CodeLens => ({ range, command: Command.create(title, command, uri) });
  const lenses = [
    lens('Run', RUN_TASK_COMMAND),
    lens('Run with faults...', RUN_TASK_WITH_FAULTS_COMMAND),
    lens('Check', CHECK_TASK_COMMAND),
  ];
  if (coverage.coverage) {
    const { covered, total } = coverage.coverage.paths;
    const stale = coverage.stale ? ' (task changed since the check)' : '';
    // An empty command id makes the lens a label: the numbers are information, not an action.
    lenses.push({ range, command: Command.create(`${covered}/${total} solution paths covered${stale}`, '') });
  } else {
    lenses.push(lens('coverage: not checked yet', CHECK_TASK_COMMAND));
  }
  return lenses;
}
