import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hiddenInRange, partitionDiagnostics, SCHEMA_CODES } from '../../client/src/diagnostic-filter.ts';

const at = (line: number, from: number, to: number) => ({ start: { line, character: from }, end: { line, character: to } });
const ours = (code: string, line = 0) => ({ source: 'mcpbench', code, range: at(line, 2, 8), message: code });

test('with VS Code validating JSON, our schema and syntax findings are hidden and the rest shown', () => {
  const diagnostics = [ours('unknown-key'), ours('missing-key'), ours('invalid-type'), ours('invalid-value'), ours('json-syntax'), ours('unknown-tool'), ours('passes-initially')];
  const { shown, hidden } = partitionDiagnostics(diagnostics, true);
  assert.deepEqual(shown.map((d) => d.code), ['unknown-tool', 'passes-initially']);
  assert.deepEqual(hidden.map((d) => d.code).sort(), [...SCHEMA_CODES].sort());
});

test('with VS Code JSON validation off, every finding of ours is shown', () => {
  const diagnostics = [ours('unknown-key'), ours('unknown-tool')];
  assert.deepEqual(partitionDiagnostics(diagnostics, false), { shown: diagnostics, hidden: [] });
});

test('other sources are never touched, and object codes are read', () => {
  const other = { source: 'json', code: 'unknown-key', range: at(0, 0, 1) };
  const objectCode = { source: 'mcpbench', code: { value: 'missing-key' }, range: at(0, 0, 1) };
  const { shown, hidden } = partitionDiagnostics([other, objectCode], true);
  assert.deepEqual(shown, [other]);
  assert.deepEqual(hidden, [objectCode]);
});

test('hidden findings under the cursor are handed to the code-action request', () => {
  const hidden = [ours('unknown-key', 3), ours('missing-key', 7)];
  assert.deepEqual(hiddenInRange(hidden, at(3, 5, 5)).map((d) => d.code), ['unknown-key']);
  assert.deepEqual(hiddenInRange(hidden, at(3, 8, 8)).map((d) => d.code), ['unknown-key']);
  assert.deepEqual(hiddenInRange(hidden, at(3, 9, 9)), []);
  assert.deepEqual(hiddenInRange(hidden, { start: { line: 2, character: 0 }, end: { line: 8, character: 0 } }).length, 2);
});
