/**
 * predicates/: the heart of every verdict. The tree (parse with paths and structural problems), three-valued
 * evaluation (Kleene logic: an undecided leaf leaves a combinator undecided only where the decided ones do
 * not settle it), the leaf evaluator over real namespace states and the final answer, and coverage (which
 * leaves and `any` branches passing runs witnessed, a leaf under `not` by its `not`).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { predicateCoverage } from '../../server/src/predicates/coverage.ts';
import { evaluate, stateLeafEvaluator, type LeafEvaluator } from '../../server/src/predicates/evaluate.ts';
import { leaves, parsePredicate, walk, type StructureProblem } from '../../server/src/predicates/tree.ts';
import type { NodeVerdict, Truth } from '../../server/src/record/schema.ts';

const P = ['success_predicate'];

test('parse: every node keeps its JSON path; leaves split into namespace and predicate', () => {
  const tree = parsePredicate({ all: [{ 'fs.exists': { path: 'a' } }, { not: { 'fs.exists': { path: 'b' } } }, { any: [{ 'answer.includes': { text: 'x' } }] }] }, P);
  assert.deepEqual([...walk(tree)].map((n) => [n.kind, n.path.join('.')]), [
    ['all', 'success_predicate'],
    ['leaf', 'success_predicate.all.0'],
    ['not', 'success_predicate.all.1'],
    ['leaf', 'success_predicate.all.1.not'],
    ['any', 'success_predicate.all.2'],
    ['leaf', 'success_predicate.all.2.any.0'],
  ]);
  assert.deepEqual(leaves(tree).map((l) => [l.namespace, l.predicate, l.args]), [
    ['fs', 'exists', { path: 'a' }],
    ['fs', 'exists', { path: 'b' }],
    ['answer', 'includes', { text: 'x' }],
  ]);
});

test('parse: structural problems say where and what, and parsing goes on past them', () => {
  const cases: [unknown, Pick<StructureProblem, 'target' | 'code'> & { path: string; message: RegExp }][] = [
    [[], { path: 'success_predicate', target: 'value', code: 'invalid-predicate', message: /must be an object/ }],
    [{}, { path: 'success_predicate', target: 'value', code: 'invalid-predicate', message: /empty predicate object/ }],
    [{ 'fs.a': {}, 'fs.b': {} }, { path: 'success_predicate', target: 'value', code: 'invalid-predicate', message: /exactly one key, found 2/ }],
    [{ all: {} }, { path: 'success_predicate.all', target: 'value', code: 'invalid-predicate', message: /takes an array/ }],
    [{ any: [] }, { path: 'success_predicate.any', target: 'value', code: 'empty-combinator', message: /always false/ }],
    [{ all: [] }, { path: 'success_predicate.all', target: 'value', code: 'empty-combinator', message: /vacuously true/ }],
    [{ exists: {} }, { path: 'success_predicate.exists', target: 'key', code: 'invalid-predicate', message: /neither `all`, `any`, `not` nor a predicate/ }],
    [{ 'fs.exists': 'a' }, { path: 'success_predicate.fs.exists', target: 'value', code: 'invalid-predicate', message: /must be an object/ }],
  ];
  for (const [value, expected] of cases) {
    const problems: StructureProblem[] = [];
    parsePredicate(value, P, problems);
    assert.equal(problems.length, 1, JSON.stringify(value));
    const [problem] = problems;
    assert.deepEqual([problem!.path.join('.'), problem!.target, problem!.code], [expected.path, expected.target, expected.code], JSON.stringify(value));
    assert.match(problem!.message, expected.message);
  }
  // Siblings of a broken node are still parsed (and checked).
  const problems: StructureProblem[] = [];
  const tree = parsePredicate({ all: [{ 'fs.a': {} }, 7, { any: [] }] }, P, problems);
  assert.deepEqual(problems.map((p) => p.path.join('.')), ['success_predicate.all.1', 'success_predicate.all.2.any']);
  assert.equal(leaves(tree).length, 1);
});

/** Leaves answer by name: `t.x` true, `f.x` false, `u.x` undecided. */
const byName: LeafEvaluator = (leaf) => (leaf.namespace === 't' ? { value: true } : leaf.namespace === 'f' ? { value: false } : { value: undefined, undecided: 'no state' });
const leaf = (v: 't' | 'f' | 'u') => ({ [`${v}.x`]: {} });
const truth = (predicate: unknown): Truth => evaluate(parsePredicate(predicate, P), byName).value;

test('evaluate: Kleene logic; what decided leaves settle is settled, the rest is undecided', () => {
  const T = leaf('t');
  const F = leaf('f');
  const U = leaf('u');
  // all: false wins, then undecided, then true.
  assert.equal(truth({ all: [T, T] }), true);
  assert.equal(truth({ all: [T, F, U] }), false);
  assert.equal(truth({ all: [T, U] }), undefined);
  // any: true wins, then undecided, then false.
  assert.equal(truth({ any: [F, T, U] }), true);
  assert.equal(truth({ any: [F, U] }), undefined);
  assert.equal(truth({ any: [F, F] }), false);
  // not: flips a decided value, keeps undecided.
  assert.equal(truth({ not: T }), false);
  assert.equal(truth({ not: F }), true);
  assert.equal(truth({ not: U }), undefined);
  // Nested, and the empty combinators' classical values.
  assert.equal(truth({ all: [{ any: [U, T] }, { not: { all: [F, U] } }] }), true);
  assert.equal(truth({ all: [] }), true);
  assert.equal(truth({ any: [] }), false);
  // An invalid node is undecided, never true.
  assert.equal(truth({ all: [T, 7] }), undefined);
});

test('evaluate: every node keeps its value, and leaves their evidence or why they are undecided', () => {
  const evidence: LeafEvaluator = (l) => (l.namespace === 't' ? { value: true, evidence: { seen: l.args } } : byName(l));
  const verdict = evaluate(parsePredicate({ all: [{ 't.x': { a: 1 } }, { not: leaf('u') }] }, P), evidence);
  const flat = (v: NodeVerdict): unknown[] => [[v.path.join('.'), v.kind, v.name, v.value, v.evidence, v.undecided], ...(v.children ?? []).flatMap(flat)];
  assert.deepEqual(flat(verdict), [
    ['success_predicate', 'all', undefined, undefined, undefined, undefined],
    ['success_predicate.all.0', 'leaf', 't.x', true, { seen: { a: 1 } }, undefined],
    ['success_predicate.all.1', 'not', undefined, undefined, undefined, undefined],
    ['success_predicate.all.1.not', 'leaf', 'u.x', undefined, undefined, 'no state'],
  ]);
});

test('stateLeafEvaluator: real namespace predicates over a state and the final answer; what cannot be decided says why', async () => {
  const registry = await loadRegistry();
  const states = { filesystem: { files: { 'archive/report.txt': 'Q3 numbers', 'archive/': null } } };
  const at = (predicate: unknown, answer?: string) => evaluate(parsePredicate(predicate, P), stateLeafEvaluator(registry, states, answer));
  assert.equal(at({ 'filesystem.fileExists': { path: 'archive/report.txt' } }).value, true);
  assert.equal(at({ 'filesystem.fileExists': { path: 'report.txt' } }).value, false);
  assert.equal(at({ 'answer.includes': { text: 'q3' } }, 'The Q3 report is archived').value, true);
  assert.equal(at({ 'answer.includes': { text: 'q3' } }).value, false, 'no answer: every answer predicate is false');
  const unknown = at({ 'filesystem.fileIsThere': { path: 'a' } });
  assert.deepEqual([unknown.value, unknown.undecided], [undefined, 'unknown predicate filesystem.fileIsThere']);
  const badArgs = at({ 'filesystem.fileExists': { file: 'a' } });
  assert.deepEqual([badArgs.value, badArgs.undecided], [undefined, 'invalid arguments']);
  const badState = evaluate(parsePredicate({ 'filesystem.fileExists': { path: 'a' } }, P), stateLeafEvaluator(registry, { filesystem: { files: 7 } }, undefined));
  assert.deepEqual([badState.value, badState.undecided], [undefined, 'the filesystem state fails its schema']);
  // An undecided leaf does not hide a decided false beside it.
  assert.equal(at({ all: [{ 'filesystem.fileIsThere': {} }, { 'filesystem.fileExists': { path: 'missing' } }] }).value, false);
});

test('coverage: leaves and any-branches witnessed true by passing runs; a leaf under not is witnessed by its not', () => {
  const predicate = parsePredicate({ all: [{ any: [leaf('t'), leaf('f')] }, { not: leaf('f') }] }, P);
  const passing = evaluate(predicate, byName);
  assert.equal(passing.value, true);
  const coverage = predicateCoverage(predicate, [passing]);
  assert.deepEqual(coverage.paths, { covered: 1, total: 2 }, 'one of two solution paths witnessed');
  assert.deepEqual(coverage.leaves, { covered: 2, total: 3 });
  assert.deepEqual(coverage.items.map((i) => [i.kind, i.label, i.path.join('.'), i.witnessed]), [
    ['branch', 'any[0]', 'success_predicate.all.0.any.0', true],
    ['branch', 'any[1]', 'success_predicate.all.0.any.1', false],
    ['leaf', 't.x', 'success_predicate.all.0.any.0', true],
    ['leaf', 'f.x', 'success_predicate.all.0.any.1', false],
    ['leaf', 'f.x', 'success_predicate.all.1.not', true],
  ]);
  // A second passing run that takes the other branch covers it; no run covers nothing.
  const other: LeafEvaluator = (l) => ({ value: l.path.join('.') === 'success_predicate.all.0.any.1' });
  const second = evaluate(predicate, other);
  assert.equal(second.value, true);
  assert.deepEqual(predicateCoverage(predicate, [passing, second]).paths, { covered: 2, total: 2 });
  assert.deepEqual(predicateCoverage(predicate, []).paths, { covered: 0, total: 2 });
  // Without any `any`, the predicate is one path, covered when the root held.
  const single = parsePredicate(leaf('t'), P);
  assert.deepEqual(predicateCoverage(single, [evaluate(single, byName)]).paths, { covered: 1, total: 1 });
  assert.deepEqual(predicateCoverage(single, []).paths, { covered: 0, total: 1 });
});
