/**
 * The layering of docs/architecture.md, enforced: every import between folders of server/src points down the
 * table (so folders never import each other in a circle), and the extension imports from the server only the
 * protocol module and the record types. The table is read from the document itself.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';

const ROOT = resolve(import.meta.dirname, '..');
const SERVER = join(ROOT, 'server/src');

/** The layer table of docs/architecture.md: folder (`(root)` for files directly in server/src) -> rank. */
export function readLayers(markdown: string): Map<string, number> {
  const layers = new Map<string, number>();
  for (const line of markdown.split('\n')) {
    const row = /^\|\s*(\d+)\s*\|\s*`([^`]+)`\s*\|/.exec(line);
    if (row) layers.set(row[2]!.replace(/\/$/, ''), Number(row[1]));
  }
  return layers;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|js)$/.test(e.name))
    .map((e) => join(e.parentPath, e.name));
}

/** Relative imports of a file (static, re-exports and dynamic `import()`), resolved to absolute paths. */
function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return info.importedFiles.map((f) => f.fileName).filter((name) => name.startsWith('.')).map((name) => resolve(dirname(file), name));
}

/** The folder of server/src a path is in, `(root)` for a file directly in it, undefined outside. */
function folderOf(path: string): string | undefined {
  const rel = relative(SERVER, path);
  if (rel.startsWith('..')) return undefined;
  const parts = rel.split(sep);
  return parts.length > 1 ? parts[0] : '(root)';
}

/** Every import of server/src that does not point strictly down the table, as `from -> to` lines. */
export function upwardImports(layers: ReadonlyMap<string, number>): string[] {
  const problems: string[] = [];
  for (const file of sourceFiles(SERVER)) {
    const from = folderOf(file)!;
    const rank = layers.get(from);
    if (rank === undefined) {
      problems.push(`${relative(ROOT, file)}: folder ${from} is not in the table of docs/architecture.md`);
      continue;
    }
    for (const target of importsOf(file)) {
      const to = folderOf(target);
      if (to === undefined || to === from) continue;
      const targetRank = layers.get(to);
      if (targetRank === undefined || targetRank >= rank) {
        problems.push(`${relative(ROOT, file)} (${from}, rank ${rank}) imports ${relative(ROOT, target)} (${to}, rank ${targetRank ?? 'none'})`);
      }
    }
  }
  return problems;
}

const layers = readLayers(readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8'));

test('docs/architecture.md has a layer table that names every folder of server/src', () => {
  assert.ok(layers.size >= 10, `found ${layers.size} layer rows`);
  const folders = readdirSync(SERVER, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
  assert.deepEqual(folders.filter((f) => !layers.has(f)), []);
});

test('imports between folders of server/src point only down the layers', () => {
  assert.deepEqual(upwardImports(layers), []);
});

test('the check finds an upward import (a lower layer importing a higher one)', () => {
  // The same table with record/ ranked above everything: every import of record/ by a lower folder is upward.
  const inverted = new Map(layers);
  inverted.set('record', 100);
  assert.ok(upwardImports(inverted).some((line) => line.endsWith('(record, rank 100)')));
});

test('the extension imports from the server only the protocol module and the record types', () => {
  const allowed = (target: string) => {
    const rel = relative(SERVER, target).split(sep).join('/');
    return rel === 'engine/protocol.ts' || rel.startsWith('record/');
  };
  const problems: string[] = [];
  for (const file of sourceFiles(join(ROOT, 'client/src'))) {
    for (const target of importsOf(file)) {
      if (folderOf(target) !== undefined && !allowed(target)) problems.push(`${relative(ROOT, file)} imports ${relative(ROOT, target)}`);
    }
  }
  assert.deepEqual(problems, []);
});
