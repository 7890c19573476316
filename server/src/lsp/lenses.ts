/**
 * Code lenses. On a task's `id` line: Run, Run with faults..., Check, and the predicate coverage of the latest
 * check run. On a template's `id` line: Generate Batch..., Lint a Sample, and Open Last Batch when the workspace
 * has one. The commands are the extension's; a lens only names them and their argument.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Command, type CodeLens } from 'vscode-languageserver';
import { BATCH_FILE } from '../generator/batch.ts';
import { canonicalHash } from '../canonical-json.ts';
import type { JsonDocument } from '../tasks/document.ts';
import type { CheckRuns } from './check-coverage.ts';
import type { Coverage } from '../predicates/coverage.ts';
import { objectOf, rangeOf } from './json-context.ts';

export const RUN_TASK_COMMAND = 'mcpbench.runTask';
export const RUN_TASK_WITH_FAULTS_COMMAND = 'mcpbench.runTaskWithFaults';
export const CHECK_TASK_COMMAND = 'mcpbench.checkTask';
export const GENERATE_BATCH_COMMAND = 'mcpbench.generateBatch';
export const LINT_SAMPLE_COMMAND = 'mcpbench.lintTemplateSample';
export const OPEN_BATCH_COMMAND = 'mcpbench.reviewBatch';

/** What the coverage lens shows: the coverage the latest check recorded (checks.json), or that there is none. */
export interface LensCoverage {
  coverage?: Coverage;
  /** The task changed since the check run (its canonical hash differs). */
  stale?: boolean;
}

function idLineRange(document: JsonDocument) {
  const idProperty = document.nodeAt(['id'])?.parent;
  return idProperty ? rangeOf(document, idProperty) : undefined;
}

/** The coverage of a task by the latest check run of the workspace folder, if any checked it. */
export function lensCoverage(document: JsonDocument, folder: string | undefined, checkRuns: CheckRuns): LensCoverage {
  const task = objectOf(document);
  const check = typeof task.id === 'string' && folder ? checkRuns.latestFor(folder, task.id) : undefined;
  // Mid-edit syntax errors: no task to compare with the checked version yet.
  if (!check || document.syntaxProblems.length) return {};
  return { coverage: check.coverage, stale: canonicalHash(task) !== check.taskHash };
}

/** The lenses on a task's `id` line: run, run with faults, check, and the coverage. */
export function taskLenses(document: JsonDocument, coverage: LensCoverage): CodeLens[] {
  const range = idLineRange(document);
  if (!range) return [];
  const uri = document.uri;
  const lens = (title: string, command: string): CodeLens => ({ range, command: Command.create(title, command, uri) });
  const lenses = [lens('Run', RUN_TASK_COMMAND), lens('Run with faults...', RUN_TASK_WITH_FAULTS_COMMAND), lens('Check', CHECK_TASK_COMMAND)];
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

/**
 * The newest batch generated from template `id` in `<folder>/batches` (folders `<id>-<seed>` holding a
 * batch.json), or undefined.
 */
export function lastBatch(folder: string, id: string): string | undefined {
  const batches = join(folder, 'batches');
  let newest: { path: string; mtime: number } | undefined;
  let names: string[];
  try {
    names = readdirSync(batches);
  } catch {
    return undefined;
  }
  for (const name of names) {
    if (!name.startsWith(`${id}-`) || !/^\d+$/.test(name.slice(id.length + 1))) continue;
    try {
      const mtime = statSync(join(batches, name, BATCH_FILE)).mtimeMs;
      if (!newest || mtime > newest.mtime) newest = { path: join(batches, name), mtime };
    } catch {
      // no batch.json: not a batch (yet)
    }
  }
  return newest?.path;
}

/** The lenses on a template's `id` line: generate a batch, lint a fresh sample, open the last batch. */
export function templateLenses(document: JsonDocument, folder: string | undefined): CodeLens[] {
  const range = idLineRange(document);
  if (!range) return [];
  const uri = document.uri;
  const lenses: CodeLens[] = [
    { range, command: Command.create('Generate Batch...', GENERATE_BATCH_COMMAND, uri) },
    { range, command: Command.create('Lint a Sample', LINT_SAMPLE_COMMAND, uri) },
  ];
  const id = objectOf(document).id;
  const batch = typeof id === 'string' && folder ? lastBatch(folder, id) : undefined;
  if (batch) lenses.push({ range, command: Command.create(`Open Last Batch (${batch.split(/[\\/]/).pop()})`, OPEN_BATCH_COMMAND, batch) });
  return lenses;
}
