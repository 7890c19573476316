import { test } from 'node:test';
import assert from 'node:assert/strict';
import plugin from '../../server/src/mcp/answer/index.ts';
import { extractDates, extractNumbers } from '../../server/src/mcp/answer/predicates.ts';

const state = plugin.normalizeState(undefined);
const run = (name: string, args: unknown, answer: string | undefined): boolean =>
  plugin.predicates[name]!(args, { state, answer }).value;

test('normalizeState is the empty object', () => {
  assert.deepEqual(plugin.normalizeState(undefined), {});
  assert.deepEqual(plugin.normalizeState({}), {});
});

test('no answer makes every positive check false', () => {
  const examples: Array<[string, unknown]> = [
    ['includes', { text: 'x' }],
    ['includesAll', { texts: ['x'] }],
    ['includesAny', { texts: ['x'] }],
    ['equals', { text: '' }],
    ['matches', { pattern: '.*' }],
    ['numberNear', { value: 0, absolute_tolerance: 100 }],
    ['dateEquals', { date: '2026-01-05' }],
    ['nonEmpty', {}],
    ['maxLength', { max: 1000 }],
  ];
  for (const [name, args] of examples) assert.equal(run(name, args, undefined), false, name);
});

test('includes: case, whitespace and NFKC folding', () => {
  assert.equal(run('includes', { text: 'aa-500' }, 'The cheapest is AA-500 at 300 EUR.'), true);
  assert.equal(run('includes', { text: 'aa-500', case_sensitive: true }, 'The cheapest is AA-500.'), false);
  assert.equal(run('includes', { text: 'new york' }, 'flights to New\n  York'), true);
  assert.equal(run('includes', { text: 'AA-501' }, 'AA-500'), false);
  // full-width digits and non-breaking space fold to ASCII
  assert.equal(run('includes', { text: '300 EUR' }, '３００\u00a0EUR'), true);
});

test('includesAll and includesAny', () => {
  assert.equal(run('includesAll', { texts: ['#12', '#15'] }, 'PRs #12 and #15 are open'), true);
  assert.equal(run('includesAll', { texts: ['#12', '#16'] }, 'PRs #12 and #15 are open'), false);
  const verdict = plugin.predicates.includesAll!({ texts: ['#12', '#16'] }, { state, answer: 'PRs #12 and #15' });
  assert.deepEqual((verdict.evidence as { missing: string[] }).missing, ['#16']);
  assert.equal(run('includesAny', { texts: ['cancelled', 'canceled'] }, 'It was Canceled.'), true);
  assert.equal(run('includesAny', { texts: ['cancelled', 'canceled'] }, 'It was postponed.'), false);
});

test('equals: trims, collapses whitespace, ignores case and one final full stop', () => {
  assert.equal(run('equals', { text: 'Paris' }, '  paris. '), true);
  assert.equal(run('equals', { text: 'New York' }, 'new   york'), true);
  assert.equal(run('equals', { text: 'Paris' }, 'Paris, France'), false);
  assert.equal(run('equals', { text: 'Paris', case_sensitive: true }, 'paris'), false);
  assert.equal(run('equals', { text: '42' }, '42..'), false);
});

test('matches: flags, no match, invalid pattern never throws', () => {
  assert.equal(run('matches', { pattern: '\\bpr #?12\\b', flags: 'i' }, 'Merged PR 12 today'), true);
  assert.equal(run('matches', { pattern: '\\bpr #?12\\b' }, 'Merged PR 12 today'), false);
  assert.equal(run('matches', { pattern: '^\\d+$' }, '42 issues'), false);
  const verdict = plugin.predicates.matches!({ pattern: '([' }, { state, answer: 'x' });
  assert.equal(verdict.value, false);
  assert.match(JSON.stringify(verdict.evidence), /invalid regular expression/);
  // a global flag must not make repeated evaluation stateful
  assert.equal(run('matches', { pattern: 'a', flags: 'g' }, 'a'), true);
  assert.equal(run('matches', { pattern: 'a', flags: 'g' }, 'a'), true);
});

test('extractNumbers: signs, separators, decimals, ranges, scales', () => {
  assert.deepEqual(extractNumbers('Total: 1,200.50 EUR'), [1200.5]);
  assert.deepEqual(extractNumbers('balance is -3.5 and then +2'), [-3.5, 2]);
  assert.deepEqual(extractNumbers('a drop of \u22127%'), [-7]);
  assert.deepEqual(extractNumbers('between 10-20 items'), [10, 20]);
  assert.deepEqual(extractNumbers('item x-1'), [1]);
  assert.deepEqual(extractNumbers('growth of 12.5%'), [12.5]);
  assert.deepEqual(extractNumbers('1,2,3'), [1, 2, 3]);
  assert.deepEqual(extractNumbers('1,2000'), [1, 2000]);
  assert.deepEqual(extractNumbers('costs 1,200, not 1,300.'), [1200, 1300]);
  assert.deepEqual(extractNumbers('about 1.2 million users and 5k stars'), [1.2e6, 5000]);
  assert.deepEqual(extractNumbers('version 1.2.3'), [1.2]);
  assert.deepEqual(extractNumbers('It is 42.'), [42]);
  assert.deepEqual(extractNumbers('$1,234,567'), [1234567]);
  assert.deepEqual(extractNumbers('.5 of it'), [0.5]);
  assert.deepEqual(extractNumbers('no numbers here'), []);
});

test('numberNear: 5% relative default, exact, absolute, negatives', () => {
  assert.equal(run('numberNear', { value: 1200.5 }, 'The total is 1,200.50 EUR'), true);
  assert.equal(run('numberNear', { value: 1000 }, 'about 1,049'), true);
  assert.equal(run('numberNear', { value: 1000 }, 'about 1,051'), false);
  assert.equal(run('numberNear', { value: 3, tolerance: 0 }, '3 open issues'), true);
  assert.equal(run('numberNear', { value: 3, tolerance: 0 }, '4 open issues'), false);
  assert.equal(run('numberNear', { value: -3.5 }, 'the change was -3.5'), true);
  assert.equal(run('numberNear', { value: -3.5 }, 'the change was 3.5'), false);
  assert.equal(run('numberNear', { value: 12.5 }, 'grew 12.5%'), true);
  assert.equal(run('numberNear', { value: 0 }, 'zero: 0.01'), false);
  assert.equal(run('numberNear', { value: 0, absolute_tolerance: 0.05 }, 'zero: 0.01'), true);
  assert.equal(run('numberNear', { value: 0.3, tolerance: 0 }, 'it is 0.3'), true);
  const verdict = plugin.predicates.numberNear!({ value: 7 }, { state, answer: 'from 10 to 20' });
  assert.equal(verdict.value, false);
  assert.deepEqual((verdict.evidence as { numbers: number[] }).numbers, [10, 20]);
});

test('extractDates and dateEquals: formats and numeric order', () => {
  assert.deepEqual(extractDates('Due 2026-01-05.'), ['2026-01-05']);
  assert.deepEqual(extractDates('Due 5 January 2026'), ['2026-01-05']);
  assert.deepEqual(extractDates('Due 5th of Jan 2026'), ['2026-01-05']);
  assert.deepEqual(extractDates('Due Monday, January 5, 2026'), ['2026-01-05']);
  assert.deepEqual(extractDates('Due Jan. 5th 2026'), ['2026-01-05']);
  assert.deepEqual(extractDates('Due Sept 30, 2026'), ['2026-09-30']);
  assert.deepEqual(extractDates('Due 01/05/2026', 'MDY'), ['2026-01-05']);
  assert.deepEqual(extractDates('Due 01/05/2026', 'DMY'), ['2026-05-01']);
  assert.deepEqual(extractDates('Due 01/05/2026'), ['2026-01-05', '2026-05-01']);
  assert.deepEqual(extractDates('Due 13/05/2026'), ['2026-05-13']);
  assert.deepEqual(extractDates('February 30, 2026'), []);
  assert.equal(run('dateEquals', { date: '2026-01-05' }, 'It ships on January 5, 2026.'), true);
  assert.equal(run('dateEquals', { date: '2026-01-05' }, 'It ships on January 6, 2026.'), false);
  assert.equal(run('dateEquals', { date: '2026-01-05', numeric_order: 'DMY' }, 'on 01/05/2026'), false);
  assert.equal(run('dateEquals', { date: '2026-01-05', numeric_order: 'DMY' }, 'on 05/01/2026'), true);
  assert.equal(run('dateEquals', { date: '2026-01-05' }, 'on 1/5/2026'), true);
});

test('nonEmpty and maxLength', () => {
  assert.equal(run('nonEmpty', {}, '  ok '), true);
  assert.equal(run('nonEmpty', {}, ' \n '), false);
  assert.equal(run('maxLength', { max: 5 }, '  hello  '), true);
  assert.equal(run('maxLength', { max: 4 }, 'hello'), false);
  assert.equal(run('maxLength', { max: 2, unit: 'words' }, 'two words'), true);
  assert.equal(run('maxLength', { max: 2, unit: 'words' }, 'three small words'), false);
});

test('answer state schema admits only the empty object', async () => {
  const { loadRegistry } = await import('../../server/src/mcp/registry.ts');
  const info = (await loadRegistry()).get('answer')!;
  assert.equal(info.validateState({}), true);
  assert.equal(info.validateState({ answer: 'x' }), false);
  assert.deepEqual(info.server.tools, []);
  for (const predicate of info.predicates.values()) assert.deepEqual(predicate.declaration.reads, ['answer']);
});
