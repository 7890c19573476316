/**
 * `mcpbench rejudge runs/<id> [--tasks DIR]`: the run's stored end states (`states/`, kept since issue 29) and
 * answers judged again under the tasks' current predicates, without running any agent. Writes a new run
 * folder whose run.json names its source and the task hashes judged against (`rejudged`), with a report,
 * and says which verdicts flipped.
 *
 * What is judged again: every standing episode that was judged (passed or failed), whose task is found (the
 * run's task files as they are now, or `--tasks`, by task id), whose end state the run kept whole. Anything
 * else is copied as it was, under its old task hash, with the reason it was not judged again: so the new
 * run's verdicts of a task hash are all of that hash, never a mix. A predicate comparing with the reference
 * solution's end state (`matchesReference`) cannot be decided from stored states and is undecided.
 */
import { mkdirSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import type { Registry } from '../mcp/registry.ts';
import { evaluate, stateLeafEvaluator } from '../predicates/evaluate.ts';
import { parsePredicate } from '../predicates/tree.ts';
import { createRun, openRun, readEndState } from '../record/run-folder.ts';
import type { EpisodeRecord, EpisodeStatus } from '../record/schema.ts';
import { latestByWorkUnit, workUnitKey } from '../record/work-units.ts';
import { deriveRun } from '../scoring/derive.ts';
import { writeReport } from '../scoring/report.ts';
import { collectTaskFiles } from '../tasks/files.ts';
import { readTaskFiles } from '../tasks/load.ts';
import type { Task } from '../tasks/model.ts';

/** Why an episode was not judged again. */
export type NotRejudged = 'not-judged' | 'no-task' | 'no-end-state' | 'end-state-cut';

export interface RejudgedEpisode {
  task_id: string;
  trial: number;
  variant: string;
  fault_profile: string;
  perturbation: string;
  /** The source's work unit, and the new run's (it changes with the task hash). */
  work_unit: { before: string; after: string };
  task_hash: { before: string; after: string };
  status: { before: EpisodeStatus; after: EpisodeStatus };
  /** Passed before and not now, or the other way round. */
  flipped: boolean;
  /** Set when the episode was copied as it was. */
  not_rejudged?: NotRejudged;
}

export interface RejudgeResult {
  /** The new run folder. */
  directory: string;
  episodes: RejudgedEpisode[];
  counts: { rejudged: number; flipped: number; not_rejudged: Partial<Record<NotRejudged, number>> };
}

export interface RejudgeOptions {
  registry: Registry;
  /** Task files or folders whose tasks replace the run's own (by task id). */
  tasks?: readonly string[];
  /** Where the new run folder goes (default: beside the source). */
  out?: string;
  /** The mcpbench version, recorded in the new run.json. */
  version?: string;
}

/** The tasks as they are now, by id: the run's own files (sealed entries are not read), then `extra`. */
function currentTasks(taskFiles: readonly string[], extra: readonly string[]): Map<string, { task: Task; hash: string }> {
  const files = [...taskFiles.filter((f) => !f.includes('.sealed.json')), ...(extra.length ? collectTaskFiles([...extra]).map((f) => resolve(f)) : [])];
  return new Map(readTaskFiles(files).map((t) => [t.task.id, t]));
}

function rejudgeId(): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `rejudge-${stamp}-${randomBytes(3).toString('hex')}`;
}

export function rejudgeRun(directory: string, options: RejudgeOptions): RejudgeResult {
  const source = openRun(directory);
  const tasks = currentTasks(source.config.task_files, options.tasks ?? []);
  const runId = rejudgeId();
  const episodes: RejudgedEpisode[] = [];
  const records: EpisodeRecord[] = [];
  const hashes: Record<string, string> = {};

  for (const record of latestByWorkUnit([...source.episodes])) {
    const current = tasks.get(record.task_id);
    const end = record.end_state !== undefined ? readEndState(directory, record.end_state) : undefined;
    const why: NotRejudged | undefined =
      record.status !== 'passed' && record.status !== 'failed' ? 'not-judged'
      : !current ? 'no-task'
      : !end ? 'no-end-state'
      : !('states' in end) ? 'end-state-cut'
      : undefined;
    let next: EpisodeRecord = { ...record, run_id: runId };
    if (why === undefined && current && end && 'states' in end) {
      const { task, hash } = current;
      const verdict = evaluate(parsePredicate(task.success_predicate, ['success_predicate']), stateLeafEvaluator(options.registry, end.states, record.answer, { initial: task.initial_state }));
      // As the episode judged it: the predicate, and no step budget exceeded, no stop before the end.
      const passed = verdict.value === true && !record.budget_exceeded && !record.failure;
      next = { ...next, task_hash: hash, work_unit: workUnitKey({ ...record, task_hash: hash }), verdict, passed, status: passed ? 'passed' : 'failed' };
      hashes[task.id] = hash;
    }
    records.push(next);
    episodes.push({
      task_id: record.task_id,
      trial: record.trial,
      variant: record.variant,
      fault_profile: record.fault_profile,
      perturbation: record.perturbation,
      work_unit: { before: record.work_unit, after: next.work_unit },
      task_hash: { before: record.task_hash, after: next.task_hash },
      status: { before: record.status, after: next.status },
      flipped: record.passed !== next.passed,
      ...(why ? { not_rejudged: why } : {}),
    });
  }

  const out = resolve(options.out ?? dirname(resolve(directory)));
  mkdirSync(out, { recursive: true });
  const { version: _version, ...config } = source.config;
  const target = join(out, runId);
  const run = createRun(target, {
    ...config,
    run_id: runId,
    created_at: new Date().toISOString(),
    ...(options.version ? { mcpbench_version: options.version } : {}),
    rejudged: { run_id: source.config.run_id, directory: resolve(directory), task_hashes: hashes },
  });
  for (const record of records) run.append(record);
  writeReport(target, deriveRun(openRun(target)), { tasks: new Map([...tasks.values()].map((t) => [t.hash, t.task])) });

  const not_rejudged: Partial<Record<NotRejudged, number>> = {};
  for (const e of episodes) if (e.not_rejudged) not_rejudged[e.not_rejudged] = (not_rejudged[e.not_rejudged] ?? 0) + 1;
  return { directory: target, episodes, counts: { rejudged: episodes.filter((e) => !e.not_rejudged).length, flipped: episodes.filter((e) => e.flipped).length, not_rejudged } };
}

const REASONS: Record<NotRejudged, string> = {
  'not-judged': 'an agent or infrastructure error: nothing was judged',
  'no-task': 'the task file was not found (give it with --tasks)',
  'no-end-state': 'the run kept no end state for it (runs before end states were kept, or episodes run on queue workers)',
  'end-state-cut': 'its end state was larger than the limit and was not kept whole',
};

/** What changed, for people: each flip, then the counts and why some were not judged again. */
export function rejudgeText(result: RejudgeResult): string {
  const lines = result.episodes
    .filter((e) => e.flipped)
    .map((e) => `flipped  ${e.task_id} [trial ${e.trial}] [${e.variant}] [faults ${e.fault_profile}] [perturbation ${e.perturbation}]: ${e.status.before} -> ${e.status.after}`);
  lines.push(`${result.counts.rejudged} episode${result.counts.rejudged === 1 ? '' : 's'} judged again, ${result.counts.flipped} flipped`);
  for (const [why, n] of Object.entries(result.counts.not_rejudged)) lines.push(`${n} not judged again: ${REASONS[why as NotRejudged]}`);
  lines.push(`new run: ${result.directory}`);
  return `${lines.join('\n')}\n`;
}
