/**
 * Predicate coverage as statement ranges of a task file: each coverage item (a leaf or an `any` branch,
 * named by its JSON path from the CLI's check) is located in the file's text, so the editor can mark the
 * exact predicate. Positions are zero-based line/character, like VS Code's.
 */
import { findNodeAtLocation, parseTree, type Node } from 'jsonc-parser';

export interface CoverageItemLike {
  path: (string | number)[];
  kind: 'leaf' | 'branch';
  label: string;
  witnessed: boolean;
}

export interface Position {
  line: number;
  character: number;
}

export interface CoverageRange {
  start: Position;
  end: Position;
  covered: boolean;
  kind: CoverageItemLike['kind'];
  label: string;
}

export function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (ch === 13 /* \r */ && text.charCodeAt(i + 1) === 10) continue; // \r\n ends on the \n
    if (ch === 10 || ch === 13) starts.push(i + 1);
  }
  return starts;
}

export function positionAt(starts: number[], offset: number): Position {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (starts[mid]! <= offset) low = mid;
    else high = mid - 1;
  }
  return { line: low, character: offset - starts[low]! };
}

/**
 * Items whose path is not in the text (the file changed since the check) are left out rather than guessed:
 * a wrong mark is worse than none.
 */
export function coverageRanges(text: string, items: CoverageItemLike[]): CoverageRange[] {
  const root: Node | undefined = parseTree(text, [], { allowTrailingComma: true, disallowComments: false });
  if (!root) return [];
  const starts = lineStarts(text);
  const ranges: CoverageRange[] = [];
  for (const item of items) {
    const node = findNodeAtLocation(root, item.path);
    if (!node) continue;
    ranges.push({
      start: positionAt(starts, node.offset),
      end: positionAt(starts, node.offset + node.length),
      covered: item.witnessed,
      kind: item.kind,
      label: item.label,
    });
  }
  return ranges;
}

/** The range of the value at `path` (e.g. `['success_predicate']`), or undefined when it is not there. */
export function rangeOfPath(text: string, path: (string | number)[]): { start: Position; end: Position } | undefined {
  const root = parseTree(text, [], { allowTrailingComma: true });
  const node = root && findNodeAtLocation(root, path);
  if (!node) return undefined;
  const starts = lineStarts(text);
  return { start: positionAt(starts, node.offset), end: positionAt(starts, node.offset + node.length) };
}
