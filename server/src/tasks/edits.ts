/**
 * Text edits that add to a JSON array or object in the author's own layout: on one line when the container is
 * on one line (`["a", "b"]` → `["a", "b", "c"]`), one item per line at the items' indentation when it spans
 * lines. The linter's fixes and the language server's code actions both insert through these.
 */
import type { Node } from 'jsonc-parser';
import type { TextEdit } from './diagnostics.ts';

/** The whitespace before `offset` on its line, when only whitespace precedes it there. */
function indentBefore(text: string, offset: number): string | undefined {
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  const before = text.slice(lineStart, offset);
  return /^\s*$/.test(before) ? before : undefined;
}

/** An edit appending `items` (JSON texts) after the last entry of `container` (an array or object node). */
function appendEntries(text: string, container: Node, items: string[]): TextEdit {
  const last = container.children?.at(-1);
  if (!last) {
    const inner = text.slice(container.offset + 1, container.offset + container.length - 1);
    const spaced = container.type === 'object' ? ` ${items.join(', ')} ` : items.join(', ');
    return inner.trim() === '' ? { offset: container.offset + 1, length: inner.length, newText: spaced } : { offset: container.offset + 1, length: 0, newText: spaced };
  }
  const end = last.offset + last.length;
  const multiLine = text.slice(container.offset, container.offset + container.length).includes('\n');
  // The indentation of the last entry, when it starts its own line; entries that share a line stay on one.
  const indent = multiLine ? indentBefore(text, last.offset) : undefined;
  if (indent === undefined) return { offset: end, length: 0, newText: items.map((item) => `, ${item}`).join('') };
  return { offset: end, length: 0, newText: items.map((item) => `,\n${indent}${item}`).join('') };
}

/** Appends JSON values (e.g. `JSON.stringify("filesystem.move_file")`) to an array node. */
export function appendToArray(text: string, array: Node, values: string[]): TextEdit {
  return appendEntries(text, array, values);
}

/** Appends `"key": value` texts to an object node. */
export function appendProperties(text: string, object: Node, entries: string[]): TextEdit {
  return appendEntries(text, object, entries);
}
