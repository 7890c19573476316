/**
 * Answers that cannot be guessed, solutions that can be derived: the guesses check tries (empty, the goal's
 * numbers and quoted values, small integers, unnamed state values) on a passing verdict with the answer
 * swapped; the blind answers the linter tries on the initial state; and the arguments a reference solution
 * passes that neither the goal nor an earlier result gives.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { evaluate, stateLeafEvaluator } from '../../server/src/predicates/evaluate.ts';
import { passingBlindAnswers, passingGuesses } from '../../server/src/predicates/guesses.ts';
import { parsePredicate } from '../../server/src/predicates/tree.ts';
import { underivableArguments } from '../../server/src/runner/derivable.ts';
import type { EpisodeResult } from '../../server/src/runner/types.ts';
import type { Task } from '../../server/src/tasks/model.ts';

const FLIGHTS = {
  flights: [
    { id: 'AA-500', origin: 'LON', dest: 'PAR', date: '2026-03-01', price: 420, seats_left: 3 },
    { id: 'BA-300', origin: 'LON', dest: 'PAR', date: '2026-03-01', price: 380, seats_left: 0 },
  ],
};

function task(goal: string, predicate: unknown, answer = 'BA-300 is sold out; AA-500 costs 420.'): Task {
  return {
    id: 'fare-1',
    server: 'travel',
    category: 'single-tool',
    difficulty: 'easy',
    max_steps: 3,
    goal,
    initial_state: { travel: FLIGHTS },
    available_tools: ['travel.search_flights', 'travel.hold_flight'],
    success_predicate: predicate as Task['success_predicate'],
    reference_solutions: [[{ tool: 'travel.search_flights', arguments: { origin: 'LON', dest: 'PAR', date: '2026-03-01' } }, { answer }]],
    counterexamples: [],
  };
}

async function verdictOf(t: Task) {
  const registry = await loadRegistry();
  const root = parsePredicate(t.success_predicate, ['success_predicate']);
  const answer = (t.reference_solutions[0]!.at(-1) as { answer: string }).answer;
  return { registry, root, verdict: evaluate(root, stateLeafEvaluator(registry, { travel: FLIGHTS }, answer, { initial: { travel: FLIGHTS } })) };
}

test('guessable: a small integer, a number of the goal or a state value the predicate does not name passes', async () => {
  // "How many seats are left on AA-500?" answered by a number near 3 with a loose tolerance: 2, 3 and 4 pass.
  const loose = task('How many seats are left on flight AA-500 from LON to PAR on 2026-03-01?', { 'answer.numberNear': { value: 3, tolerance: 0.5 } }, 'There are 3 seats left.');
  const { registry, verdict } = await verdictOf(loose);
  assert.equal(verdict.value, true, 'the reference passes');
  const guesses = passingGuesses(loose, registry, verdict).map((g) => `${g.answer}: ${g.source}`);
  assert.ok(guesses.includes('2: a small integer') && guesses.includes('4: a small integer'), guesses.join('; '));
  // With an exact value only the data gives, only the answer itself ("3", a small integer) is left: the
  // count is guessable by trying small numbers, which is what the warning says.
  const exact = task('How many seats are left on flight AA-500 from LON to PAR on 2026-03-01?', { 'answer.numberNear': { value: 3, tolerance: 0 } }, 'There are 3 seats left.');
  const e = await verdictOf(exact);
  assert.deepEqual(passingGuesses(exact, e.registry, e.verdict).map((g) => g.answer), ['3']);
  // A fare only the data gives: nothing trivial passes.
  const fare = task('What does flight AA-500 from LON to PAR on 2026-03-01 cost?', { 'answer.numberNear': { value: 420, tolerance: 0 } }, 'It costs 420.');
  const f = await verdictOf(fare);
  assert.deepEqual(passingGuesses(fare, f.registry, f.verdict), []);
  // `includes` of a goal value: guessable from the goal.
  const echo = task("Which is sold out, 'BA-300' or 'AA-500'?", { 'answer.includes': { text: 'BA-300' } }, 'BA-300 is sold out.');
  const g = await verdictOf(echo);
  assert.deepEqual(passingGuesses(echo, g.registry, g.verdict).map((x) => x.source), ['a quoted value of the goal']);
});

test('answer without data: the goal read back, or an empty answer, passes on the initial state', async () => {
  const registry = await loadRegistry();
  const echo = task("Which is sold out, 'BA-300' or 'AA-500'?", { 'answer.includes': { text: 'BA-300' } });
  const root = parsePredicate(echo.success_predicate, ['success_predicate']);
  assert.deepEqual(passingBlindAnswers(echo, registry, root).map((b) => b.source), ['the goal read back']);
  const specific = task("Which is sold out, 'BA-300' or 'AA-500'?", { all: [{ 'answer.includes': { text: 'BA-300' } }, { not: { 'answer.includes': { text: 'AA-500' } } }] });
  assert.deepEqual(passingBlindAnswers(specific, registry, parsePredicate(specific.success_predicate, ['success_predicate'])), []);
  const anything = task('Tell me something about the flights.', { 'answer.maxLength': { max: 500 } });
  assert.ok(passingBlindAnswers(anything, registry, parsePredicate(anything.success_predicate, ['success_predicate'])).some((b) => b.source === 'an empty answer'));
  // A state task is not an information task: nothing to say.
  const hold = task('Hold AA-500.', { 'travel.reservationHeld': { flight_id: 'AA-500' } });
  assert.deepEqual(passingBlindAnswers(hold, registry, parsePredicate(hold.success_predicate, ['success_predicate'])), []);
});

test('underivable: an id no goal and no earlier result gives is reported at its exact place', async () => {
  const registry = await loadRegistry();
  const t = task('Hold the cheapest flight from LON to PAR on 2026-03-01 that still has seats.', { 'travel.reservationHeld': { flight_id: 'AA-500' } });
  // The solution holds AA-500 without searching first: nothing told the agent the id.
  const blind: Task = { ...t, reference_solutions: [[{ tool: 'travel.hold_flight', arguments: { flight_id: 'AA-500' } }]] };
  const episode = (calls: unknown[]): EpisodeResult => ({ task_id: t.id, variant: 'reference:0', fault_profile: 'none', status: 'passed', calls }) as unknown as EpisodeResult;
  const found = underivableArguments(blind, registry, [episode([{ index: 0, result: { content: [{ type: 'text', text: 'Held AA-500' }] } }])]);
  assert.deepEqual(found, [{ path: ['reference_solutions', 0, 0, 'arguments', 'flight_id'], unknown: '500', value: 'AA-500', solution: 0, step: 0 }]);
  // Search first: the result names AA-500, so holding it is derivable.
  const searched: Task = { ...t, reference_solutions: [[{ tool: 'travel.search_flights', arguments: { origin: 'LON', dest: 'PAR', date: '2026-03-01' } }, { tool: 'travel.hold_flight', arguments: { flight_id: 'AA-500' } }]] };
  const result = { content: [{ type: 'text', text: JSON.stringify({ flights: FLIGHTS.flights }, null, 2) }] };
  assert.deepEqual(underivableArguments(searched, registry, [episode([{ index: 0, result }, { index: 1, result: { content: [] } }])]), []);
});
