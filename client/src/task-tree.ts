/**
 * Test Explorer grouping: every task file is a test, under its namespace and its category. Only `id`,
 * `server` and `category` are read (with JSON.parse): linting is the language server's job, and a file that
 * does not parse still shows up, so the author can run its check and see why.
 */

import { isWorkspaceTaskPath, taskNamespaces } from '../../server/src/engine/protocol.ts';

export const UNPARSED = '(unparsed)';

export interface TaskHeader {
  /** The task's id, or the file name without `.json` when the file has none. */
  id: string;
  /** `server`, sorted; a cross-server task lists several. */
  namespaces: string[];
  category: string;
  /** Whether the file parsed as a JSON object. */
  parsed: boolean;
}

function baseName(file: string): string {
  const name = file.split(/[\\/]/).pop() ?? file;
  return name.replace(/(\.task)?\.json$/, '');
}

export function readTaskHeader(file: string, text: string): TaskHeader {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { id: baseName(file), namespaces: [], category: UNPARSED, parsed: false };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { id: baseName(file), namespaces: [], category: UNPARSED, parsed: false };
  }
  const task = value as { id?: unknown; server?: unknown; category?: unknown };
  const namespaces = taskNamespaces(task).filter((s) => s.length > 0).sort();
  return {
    id: typeof task.id === 'string' && task.id ? task.id : baseName(file),
    namespaces,
    category: typeof task.category === 'string' && task.category ? task.category : '(no category)',
    parsed: true,
  };
}

/** The namespace group of a task: `github + chat` for a cross-server task. */
export function namespaceLabel(header: TaskHeader): string {
  return header.namespaces.length ? header.namespaces.join(' + ') : UNPARSED;
}

export interface TaskEntry {
  /** The file's URI string: a test item's id, unique even when two files share a task id. */
  uri: string;
  header: TaskHeader;
}

export interface CategoryGroup {
  id: string;
  label: string;
  tasks: TaskEntry[];
}

export interface NamespaceGroup {
  id: string;
  label: string;
  categories: CategoryGroup[];
}

/** Namespaces, categories and tasks sorted by label, so the tree is stable between refreshes. */
export function groupTasks(entries: TaskEntry[]): NamespaceGroup[] {
  const byNamespace = new Map<string, Map<string, TaskEntry[]>>();
  for (const entry of entries) {
    const ns = namespaceLabel(entry.header);
    let categories = byNamespace.get(ns);
    if (!categories) byNamespace.set(ns, (categories = new Map()));
    const list = categories.get(entry.header.category) ?? [];
    list.push(entry);
    categories.set(entry.header.category, list);
  }
  const byLabel = (a: { label: string }, b: { label: string }) => a.label.localeCompare(b.label);
  return [...byNamespace]
    .map(([ns, categories]) => ({
      id: namespaceGroupId(ns),
      label: ns,
      categories: [...categories]
        .map(([category, tasks]) => ({
          id: categoryGroupId(ns, category),
          label: category,
          tasks: [...tasks].sort((a, b) => a.header.id.localeCompare(b.header.id) || a.uri.localeCompare(b.uri)),
        }))
        .sort(byLabel),
    }))
    .sort(byLabel);
}

export const namespaceGroupId = (ns: string): string => `namespace:${ns}`;
export const categoryGroupId = (ns: string, category: string): string => `namespace:${ns}/category:${category}`;

/**
 * Whether a path relative to its workspace folder is a task file as the extension sees them: the language
 * server's rule (a JSON file under a `tasks/` folder or a `*.task.json`, outside node_modules, dist, runs and
 * hidden folders), less templates.
 */
export function isTaskFile(relativePath: string): boolean {
  return isWorkspaceTaskPath(relativePath);
}

/**
 * A run's title from what was asked for: `Run: all 12 tasks`, a group by its path (`Run: filesystem › single-tool
 * (3 tasks)`), one task by its id, else a count; never a list of every task id.
 */
export function runTitle(base: string, asked: { all: boolean; groups: string[][]; taskIds: string[] }): string {
  const n = asked.taskIds.length;
  const count = `${n} task${n === 1 ? '' : 's'}`;
  if (asked.all) return `${base}: all ${count}`;
  if (asked.groups.length === 1 && n !== 1) return `${base}: ${asked.groups[0]!.join(' › ')} (${count})`;
  if (n === 1) return `${base}: ${asked.taskIds[0]}`;
  return `${base}: ${count}`;
}
