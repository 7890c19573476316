/**
 * What a task or template file names, with where: its own id (a task's, a template's), the tools it lists and
 * calls, the predicates its success predicate uses, the template a task came from. The workspace keeps one
 * such index per file, opened or not, for go to definition, find references, rename and workspace symbols.
 */
import type { Range } from 'vscode-languageserver';
import type { JsonDocument } from '../tasks/document.ts';
import { isObject } from '../tasks/schema-check.ts';
import { leaves, parsePredicate } from '../predicates/tree.ts';
import type { JsonPath } from '../json-values.ts';

export type SymbolCategory = 'task' | 'template' | 'tool' | 'predicate';

export interface Occurrence {
  category: SymbolCategory;
  /** The task id, the template id, the qualified tool or predicate name. */
  name: string;
  /** The string token (quotes included), or a leaf's key. */
  range: Range;
  /** A task's or template's own `id` (where the name is defined), not a use of it. */
  definition: boolean;
}

export interface FileIndex {
  /** The file's own id (a task id, or a template id), when it has a string one. */
  id?: string;
  occurrences: Occurrence[];
}

const SOLUTION_SECTIONS = ['reference_solutions', 'counterexamples'] as const;

/** Names built from placeholders are not names yet. */
const isName = (value: unknown): value is string => typeof value === 'string' && value.length > 0 && !value.includes('{{');

export function indexFile(kind: 'task' | 'template', document: JsonDocument): FileIndex {
  const value = document.value();
  if (!isObject(value)) return { occurrences: [] };
  const occurrences: Occurrence[] = [];
  const add = (category: SymbolCategory, name: string, path: JsonPath, definition = false, key = false) => {
    const node = key ? document.keyNodeAt(path) : document.nodeAt(path);
    if (!node) return;
    occurrences.push({ category, name, definition, range: { start: document.positionAt(node.offset), end: document.positionAt(node.offset + node.length) } });
  };
  const id = typeof value.id === 'string' ? value.id : undefined;
  if (id !== undefined) add(kind, id, ['id'], true);

  const indexTask = (task: Record<string, unknown>, prefix: JsonPath) => {
    if (isObject(task.template) && isName(task.template.id)) add('template', task.template.id, [...prefix, 'template', 'id']);
    if (Array.isArray(task.available_tools)) task.available_tools.forEach((tool, i) => isName(tool) && add('tool', tool, [...prefix, 'available_tools', i]));
    for (const section of SOLUTION_SECTIONS) {
      const sequences = task[section];
      if (!Array.isArray(sequences)) continue;
      sequences.forEach((sequence, i) => {
        if (!Array.isArray(sequence)) return;
        sequence.forEach((step, j) => {
          if (isObject(step) && isName(step.tool)) add('tool', step.tool, [...prefix, section, i, j, 'tool']);
        });
      });
    }
    if ('success_predicate' in task) {
      for (const leaf of leaves(parsePredicate(task.success_predicate, [...prefix, 'success_predicate']))) {
        if (isName(leaf.name)) add('predicate', leaf.name, [...leaf.path, leaf.name], false, true);
      }
    }
  };
  if (kind === 'task') indexTask(value, []);
  else if (isObject(value.task)) indexTask(value.task, ['task']);
  return id === undefined ? { occurrences } : { id, occurrences };
}

/** The occurrence whose range holds `position` (a definition or a use), if any. */
export function occurrenceAt(index: FileIndex, position: { line: number; character: number }): Occurrence | undefined {
  const before = (a: { line: number; character: number }, b: { line: number; character: number }) => a.line < b.line || (a.line === b.line && a.character < b.character);
  return index.occurrences.find((o) => !before(position, o.range.start) && !before(o.range.end, position));
}
