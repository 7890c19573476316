/**
 * Loading a task set for a run: task texts (files, or a sealed set's entries decrypted in memory) linted and
 * parsed; any lint error or an id used twice refuses the whole set before anything starts.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { canonicalHash } from '../canonical-json.ts';
import type { Registry } from '../mcp/registry.ts';
import type { Diagnostic } from './diagnostics.ts';
import { collectTaskFiles, readText } from './files.ts';
import { lintTask } from './lint.ts';
import { TaskSchema, type Task } from './model.ts';
import { EXIT_FINDINGS, McpbenchError } from '../errors.ts';

export interface LoadedTask {
  file: string;
  task: Task;
  hash: string;
  /** The file's text, when it was read (findings of check are placed in it). */
  text?: string;
}

export class TaskLoadError extends McpbenchError {
  static override readonly code: string = 'task-load';
  static override readonly exitStatus: number = EXIT_FINDINGS;
  constructor(
    message: string,
    readonly diagnostics: Diagnostic[],
  ) {
    super(message, diagnostics[0] ? { file: diagnostics[0].uri, range: { start: diagnostics[0].start, end: diagnostics[0].end } } : {});
  }
}

/** A task's text and where it came from: a file path, or `<set>.sealed.json#<path inside>` for a sealed set. */
export interface TaskSource {
  file: string;
  text: string;
}

/** Reads and lints task files; any lint error refuses the whole set before anything starts. */
export function loadTasks(files: string[], registry: Registry): LoadedTask[] {
  return loadTaskSources(
    files.map((file) => ({ file, text: readText(file) })),
    registry,
  );
}

/**
 * Lints task texts already in memory (a sealed set is decrypted in memory and never written out); any lint
 * error refuses the whole set before anything starts, and so does an id used twice.
 */
export function loadTaskSources(sources: readonly TaskSource[], registry: Registry): LoadedTask[] {
  const loaded: LoadedTask[] = [];
  const errors: Diagnostic[] = [];
  for (const { file, text } of sources) {
    const { diagnostics } = lintTask(file, text, registry);
    const fatal = diagnostics.filter((d) => d.severity === 'error');
    if (fatal.length) {
      errors.push(...fatal);
      continue;
    }
    const task = JSON.parse(text) as Task;
    loaded.push({ file, task, hash: canonicalHash(task), text });
  }
  if (errors.length) throw new TaskLoadError(`${new Set(errors.map((e) => e.uri)).size} task file(s) have lint errors`, errors);
  const ids = new Map<string, string>();
  for (const { file, task } of loaded) {
    const other = ids.get(task.id);
    if (other) throw new TaskLoadError(`task id ${task.id} is used by both ${other} and ${file}`, []);
    ids.set(task.id, file);
  }
  return loaded;
}

/**
 * The task files a run can be judged against, by canonical hash: the run's own task files where they still
 * exist, and any further files or folders given. A file that no longer hashes as it did at run time simply
 * does not match; sealed-set entries are not read.
 */
export function loadRunTasks(config: Record<string, unknown> | { task_files: string[] }, extra: readonly string[] = []): Map<string, Task> {
  const files = new Set<string>();
  const files0 = (config as { task_files?: unknown }).task_files;
  const recorded: unknown[] = Array.isArray(files0) ? files0 : [];
  for (const file of recorded) if (typeof file === 'string' && !file.includes('.sealed.json') && existsSync(file)) files.add(file);
  if (extra.length > 0) for (const file of collectTaskFiles([...extra])) files.add(resolve(file));
  return new Map(readTaskFiles(files).map(({ task, hash }) => [hash, task]));
}

/** The task files that parse as tasks, each with its canonical hash; unreadable or invalid files are skipped. */
export function readTaskFiles(files: Iterable<string>): { file: string; task: Task; hash: string }[] {
  const tasks: { file: string; task: Task; hash: string }[] = [];
  for (const file of files) {
    let value: unknown;
    try {
      value = JSON.parse(readText(file));
    } catch {
      continue;
    }
    const parsed = TaskSchema.safeParse(value);
    if (parsed.success) tasks.push({ file, task: parsed.data, hash: canonicalHash(value) });
  }
  return tasks;
}

