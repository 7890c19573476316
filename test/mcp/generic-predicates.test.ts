/**
 * The generic state predicates every namespace with a state gets from the registry (`<ns>.unchanged`,
 * `<ns>.stateEquals`, `<ns>.matchesReference`): declared with documentation, evaluated on the namespace's
 * state through JSON pointers, undecided (never silently false) when there is nothing to compare with; and
 * over real episodes, `matchesReference` compares with the end state the first reference solution leaves.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { GENERIC_PREDICATES } from '../../server/src/mcp/generic-predicates.ts';
import { evaluate, stateLeafEvaluator } from '../../server/src/predicates/evaluate.ts';
import { parsePredicate } from '../../server/src/predicates/tree.ts';
import { lintTask } from '../../server/src/tasks/lint.ts';
import { predicateMarkdown } from '../../server/src/lsp/docs.ts';

test('every namespace with a state has the generic predicates, with docs; the virtual answer namespace has none', async () => {
  const registry = await loadRegistry();
  for (const info of registry.namespaces.values()) {
    for (const generic of GENERIC_PREDICATES) {
      const predicate = info.predicates.get(generic.name);
      if (info.server.implementation.kind === 'virtual') {
        assert.equal(predicate, undefined, `${info.namespace} has no state`);
        continue;
      }
      assert.ok(predicate, `${info.namespace}.${generic.name}`);
      const markdown = predicateMarkdown(`${info.namespace}.${generic.name}`, predicate);
      assert.match(markdown, new RegExp(`\\*\\*${info.namespace}\\.${generic.name}\\*\\* \\(predicate\\)`));
      assert.match(markdown, /JSON pointer/);
    }
  }
});

const FILES = { files: { 'a.txt': 'one', 'dir/b.txt': 'two' } };

function value(registry: Awaited<ReturnType<typeof loadRegistry>>, predicate: unknown, end: unknown, compare: { initial?: unknown; reference?: unknown }) {
  const verdict = evaluate(
    parsePredicate(predicate, ['success_predicate']),
    stateLeafEvaluator(registry, { filesystem: end }, undefined, {
      ...(compare.initial !== undefined ? { initial: { filesystem: compare.initial } } : {}),
      ...(compare.reference !== undefined ? { reference: { filesystem: compare.reference } } : {}),
    }),
  );
  return verdict;
}

test('unchanged, stateEquals and matchesReference read the state through JSON pointers', async () => {
  const registry = await loadRegistry();
  const changed = { files: { 'a.txt': 'ONE', 'dir/b.txt': 'two' } };
  const unchangedB = { 'filesystem.unchanged': { pointer: '/files/dir~1b.txt' } };
  const unchangedA = { 'filesystem.unchanged': { pointer: '/files/a.txt' } };
  assert.equal(value(registry, unchangedB, changed, { initial: FILES }).value, true);
  assert.equal(value(registry, unchangedA, changed, { initial: FILES }).value, false);
  const created = { files: { ...FILES.files, 'c.txt': 'new' } };
  assert.equal(value(registry, { 'filesystem.unchanged': { pointer: '/files/c.txt' } }, created, { initial: FILES }).value, false, 'absent at the start, present at the end');
  assert.equal(value(registry, { 'filesystem.unchanged': { pointer: '/files/zzz' } }, FILES, { initial: FILES }).value, true, 'absent in both');

  assert.equal(value(registry, { 'filesystem.stateEquals': { pointer: '/files/a.txt', value: 'ONE' } }, changed, {}).value, true);
  assert.equal(value(registry, { 'filesystem.stateEquals': { pointer: '/files/a.txt', value: 'one' } }, changed, {}).value, false);

  const matches = { 'filesystem.matchesReference': { pointers: ['/files/a.txt'] } };
  assert.equal(value(registry, matches, changed, { reference: changed }).value, true);
  const miss = value(registry, matches, FILES, { reference: changed });
  assert.equal(miss.value, false);
  assert.deepEqual(miss.evidence, { pointers: ['/files/a.txt'], differing: [{ pointer: '/files/a.txt', reference: 'ONE', actual: 'one' }] });
  // Nothing to compare with: undecided, so the predicate can never pass by accident.
  const undecided = value(registry, matches, changed, {});
  assert.equal(undecided.value, undefined);
  assert.match(undecided.undecided ?? '', /no reference end state/);
});

test('the linter knows the generic predicates: unchanged alone passes initially, a bad pointer is an argument error', async () => {
  const registry = await loadRegistry();
  const task = (predicate: unknown) =>
    JSON.stringify({
      id: 'generic-1',
      server: 'filesystem',
      category: 'single-tool',
      difficulty: 'easy',
      max_steps: 3,
      goal: 'Leave a.txt alone.',
      initial_state: { filesystem: FILES },
      available_tools: ['filesystem.write_file'],
      success_predicate: predicate,
      reference_solutions: [[{ tool: 'filesystem.write_file', arguments: { path: 'c.txt', content: 'x' } }]],
      counterexamples: [[]],
    });
  const codes = (predicate: unknown) => lintTask('t.json', task(predicate), registry).diagnostics.map((d) => d.code);
  assert.ok(codes({ 'filesystem.unchanged': { pointer: '/files/a.txt' } }).includes('passes-initially'));
  assert.ok(codes({ 'filesystem.unchanged': { pointer: 'files' } }).includes('predicate-arguments'));
  assert.ok(!codes({ 'filesystem.matchesReference': { pointers: ['/files'] } }).includes('passes-initially'), 'undecided without a reference');
});
