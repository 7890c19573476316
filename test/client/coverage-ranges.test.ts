import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { coverageRanges, lineStarts, positionAt, rangeOfPath } from '../../client/src/coverage-ranges.ts';
import { predicateCoverage } from '../../server/src/predicates/coverage.ts';
import { parsePredicate } from '../../server/src/predicates/tree.ts';

const text = [
  '{',
  '  "id": "t",',
  '  "success_predicate": {',
  '    "any": [',
  '      { "a.one": {} },',
  '      { "all": [ { "a.two": { "x": 1 } }, { "not": { "a.three": {} } } ] }',
  '    ]',
  '  }',
  '}',
].join('\n');

test('offsets become line/character positions, with \\n and \\r\\n', () => {
  assert.deepEqual(positionAt(lineStarts('ab\ncd'), 4), { line: 1, character: 1 });
  assert.deepEqual(positionAt(lineStarts('ab\r\ncd'), 5), { line: 1, character: 1 });
  assert.deepEqual(positionAt(lineStarts('ab\r\ncd'), 0), { line: 0, character: 0 });
});

test('coverage items from the engine map onto the exact predicate objects in the file', () => {
  const predicate = parsePredicate(JSON.parse(text).success_predicate, ['success_predicate']);
  const coverage = predicateCoverage(predicate, []);
  const ranges = coverageRanges(text, coverage.items);
  assert.equal(ranges.length, coverage.items.length);
  const lines = text.split('\n');
  const textOf = (r: (typeof ranges)[number]) => {
    assert.equal(r.start.line, r.end.line);
    return lines[r.start.line]!.slice(r.start.character, r.end.character);
  };
  const byLabel = new Map(ranges.map((r) => [`${r.kind}:${r.label}:${textOf(r)}`, r]));
  assert.ok(byLabel.has('leaf:a.one:{ "a.one": {} }'));
  assert.ok(byLabel.has('leaf:a.two:{ "a.two": { "x": 1 } }'));
  assert.ok(byLabel.has('leaf:a.three:{ "a.three": {} }'));
  assert.ok(byLabel.has('branch:any[0]:{ "a.one": {} }'));
  assert.ok([...byLabel.keys()].some((k) => k.startsWith('branch:any[1]:{ "all": [')));
  assert.ok(ranges.every((r) => r.covered === false));
});

test('witnessed items are covered; items whose path is gone from the text are left out', () => {
  const ranges = coverageRanges(text, [
    { path: ['success_predicate', 'any', 0], kind: 'branch', label: 'any[0]', witnessed: true },
    { path: ['success_predicate', 'any', 5], kind: 'branch', label: 'any[5]', witnessed: true },
  ]);
  assert.equal(ranges.length, 1);
  assert.equal(ranges[0]!.covered, true);
  assert.deepEqual(ranges[0]!.start, { line: 4, character: 6 });
});

test('a real task file: rangeOfPath finds the id and the predicate', () => {
  const task = readFileSync(new URL('../fixtures/tasks/filesystem/fs-move-report-001.json', import.meta.url), 'utf8');
  const id = rangeOfPath(task, ['id'])!;
  assert.equal(task.split('\n')[id.start.line]!.slice(id.start.character, id.end.character), '"fs-move-report-001"');
  assert.equal(rangeOfPath(task, ['nope']), undefined);
});
