/**
 * Thousands of seeded random mutations of valid tasks, at the text level (truncations, deleted and inserted
 * characters) and at the value level (wrong types, dropped and renamed keys, shuffled predicates): the
 * linter never throws, and every diagnostic's range lies inside the document with consistent positions.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { RULES } from '../../server/src/tasks/diagnostics.ts';
import { collectTaskFiles } from '../../server/src/tasks/files.ts';
import { lintTask } from '../../server/src/tasks/lint.ts';
import { pick, seededRandom } from '../seeded-random.ts';

const SEED = 20261121;
const CASES = 4000;

const SNIPPETS = ['{', '}', '[', ']', ',', ':', '"', '\\', 'null', '-1', '1e999', 'true', '"x"', '\u{1F4C4}', '\n', '//', '/*', '"all"', '"not"', '{}', '[]'];
const VALUES: unknown[] = [null, 0, -1, 1.5, 1e9, '', 'x', 'filesystem.nope', 'nope.fileExists', true, [], {}, [1, 'a'], { all: [] }, { not: {} }, { 'filesystem.fileExists': 3 }];

function mutateText(random: () => number, text: string): string {
  const at = Math.floor(random() * (text.length + 1));
  switch (Math.floor(random() * 4)) {
    case 0: return text.slice(0, at);
    case 1: return text.slice(0, at) + text.slice(at + 1 + Math.floor(random() * 20));
    case 2: return text.slice(0, at) + pick(random, SNIPPETS) + text.slice(at);
    default: {
      const lines = text.split('\n');
      const i = Math.floor(random() * lines.length);
      lines.splice(i, 0, lines[Math.floor(random() * lines.length)]!);
      return lines.join('\n');
    }
  }
}

/** Every (parent, key) pair in a JSON value, for value-level mutations. */
function slots(value: unknown, out: [Record<string, unknown> | unknown[], string | number][] = []) {
  if (Array.isArray(value)) value.forEach((v, i) => (out.push([value, i]), slots(v, out)));
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) (out.push([value as Record<string, unknown>, k]), slots(v, out));
  return out;
}

function mutateValue(random: () => number, task: unknown): string {
  const copy = structuredClone(task);
  for (let n = 1 + Math.floor(random() * 3); n > 0; n--) {
    const all = slots(copy);
    if (!all.length) break;
    const [parent, key] = pick(random, all);
    const action = Math.floor(random() * 4);
    if (Array.isArray(parent)) {
      if (action === 0) parent.splice(key as number, 1);
      else if (action === 1) parent.push(structuredClone(parent[key as number]));
      else parent[key as number] = structuredClone(pick(random, VALUES));
    } else if (action === 0) delete parent[key as string];
    else if (action === 1) {
      parent[`${key as string}${pick(random, ['s', '_', 'X', ''])}x`] = parent[key as string];
      delete parent[key as string];
    } else parent[key as string] = structuredClone(pick(random, VALUES));
  }
  return JSON.stringify(copy, null, random() < 0.5 ? 2 : 0);
}

test(`the linter survives ${CASES} seeded mutations with ranges inside the document`, async () => {
  const registry = await loadRegistry();
  const sources = collectTaskFiles([join(__dirname, '..', '..', 'tasks'), join(__dirname, '..', 'fixtures', 'tasks'), join(__dirname, '..', 'fixtures', 'broken', 'valid.json')]).map((f) => readFileSync(f, 'utf8'));
  assert.ok(sources.length > 0);
  const random = seededRandom(SEED);
  const codes = new Set<string>();
  for (let i = 0; i < CASES; i++) {
    const source = pick(random, sources);
    const text = random() < 0.5 ? mutateText(random, source) : mutateValue(random, JSON.parse(source));
    let result;
    try {
      result = lintTask(`case-${i}.json`, text, registry);
    } catch (error) {
      assert.fail(`case ${i} (seed ${SEED}) threw ${(error as Error).stack}\n--- text ---\n${text}`);
    }
    for (const d of result.diagnostics) {
      codes.add(d.code);
      assert.ok(d.code in RULES, `case ${i}: unknown code ${d.code}`);
      assert.ok(d.offset >= 0 && d.length >= 0 && d.offset + d.length <= text.length, `case ${i}: ${d.code} range ${d.offset}+${d.length} outside ${text.length}`);
      assert.deepEqual(result.document.positionAt(d.offset), d.start, `case ${i}: start position`);
      assert.ok(d.message.length > 0);
      for (const fix of d.fixes ?? []) {
        for (const edit of fix.edits) assert.ok(edit.offset >= 0 && edit.offset + edit.length <= text.length, `case ${i}: fix edit outside the document`);
      }
    }
  }
  // The mutations reach deep into the rules, not only the syntax check.
  for (const code of ['json-syntax', 'unknown-key', 'missing-key', 'invalid-type', 'invalid-predicate', 'predicate-arguments', 'tool-arguments']) {
    assert.ok(codes.has(code), `no mutation produced ${code}`);
  }
});
