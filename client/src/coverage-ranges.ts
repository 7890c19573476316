/**
 * Predicate coverage as statement ranges of a task file: each coverage item (a leaf or an `any` branch,
 * named by its JSON path from the CLI's check) is located in the file's text, so the editor can mark the
 * exact predicate. Positions are zero-based line/character, like VS Code's.
 */
import { findNodeAtLocation, parseTree, type Node } from 'jsonc-parser';
import { lineStarts, positionAt, type Position } from '../../server/src/engine/protocol.ts';

export { lineStarts, positionAt, type Position };

export interface CoverageItemLike {
  path: (string | number)[];
  kind: 'leaf' | 'branch';
  label: string;
  witnessed: boolean;
}

export interface CoverageRange {
  start: Position;
  end: Position;
  covered: boolean;
  kind: CoverageItemLike['kind'];
  label: string;
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
