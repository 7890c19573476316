/**
 * The files of server/src/mcp import each other in one direction only: a namespace's index.ts imports its
 * tools.ts, runtime.ts and state.ts, those import state.ts, and no file is reached again from the files it
 * imports (type-only imports count: they are the first step of a runtime cycle).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { packageRoot } from '../../server/src/paths.ts';

const root = join(packageRoot(), 'server', 'src', 'mcp');

/** Every .ts file under `dir` → the files under `dir` it imports (static, dynamic with a literal, re-exports, `import type`). */
function importGraph(dir: string): Map<string, string[]> {
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(dir, f));
  const known = new Set(files);
  return new Map(
    files.map((file) => {
      const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
      const targets = importedFiles.map((i) => i.fileName).filter((name) => name.startsWith('.')).map((name) => resolve(dirname(file), name));
      return [file, [...new Set(targets.filter((t) => known.has(t)))]];
    }),
  );
}

/** The cycles of a graph: its strongly connected components of more than one file, or of one file importing itself (Tarjan). */
function cycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || graph.get(v)!.includes(v)) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

test('the cycle finder finds a pair, a longer cycle and a self-import, and passes a tree', () => {
  const graph = new Map([
    ['a', ['b']],
    ['b', ['a', 'c']],
    ['c', []],
    ['d', ['e']],
    ['e', ['f']],
    ['f', ['d', 'c']],
    ['g', ['g']],
  ]);
  assert.deepEqual(cycles(graph).sort(), [['a', 'b'], ['d', 'e', 'f'], ['g']]);
  assert.deepEqual(cycles(new Map([['x', ['y', 'z']], ['y', ['z']], ['z', []]])), []);
});

test('no two files of server/src/mcp import each other, directly or round a longer cycle', () => {
  const graph = importGraph(root);
  assert.ok(graph.size > 40, `read ${graph.size} files`);
  // The graph is read, not empty: calendar's index.ts imports its tools.
  assert.ok(graph.get(join(root, 'calendar', 'index.ts'))!.includes(join(root, 'calendar', 'tools.ts')));
  assert.deepEqual(cycles(graph).map((c) => c.map((f) => relative(root, f))), []);
});
