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
import { passingBlindAnswers, passingGuesses } from '../../server/src/tasks/guesses.ts';
import { parsePredicate } from '../../server/src/predicates/tree.ts';
import { underivableArguments } from '../../server/src/runner/derivable.ts';
import type { Task } from '../../server/src/tasks/model.ts';
import type { EpisodeRecord } from '../../server/src/record/schema.ts';

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
  const episode = (calls: unknown[]): EpisodeRecord => ({ task_id: t.id, variant: 'reference:0', fault_profile: 'none', status: 'passed', calls }) as unknown as EpisodeRecord;
  const found = underivableArguments(blind, registry, [episode([{ index: 0, result: { content: [{ type: 'text', text: 'Held AA-500' }] } }])]);
  assert.deepEqual(found, [{ path: ['reference_solutions', 0, 0, 'arguments', 'flight_id'], unknown: '500', value: 'AA-500', solution: 0, step: 0 }]);
  // Search first: the result names AA-500, so holding it is derivable.
  const searched: Task = { ...t, reference_solutions: [[{ tool: 'travel.search_flights', arguments: { origin: 'LON', dest: 'PAR', date: '2026-03-01' } }, { tool: 'travel.hold_flight', arguments: { flight_id: 'AA-500' } }]] };
  const result = { content: [{ type: 'text', text: JSON.stringify({ flights: FLIGHTS.flights }, null, 2) }] };
  assert.deepEqual(underivableArguments(searched, registry, [episode([{ index: 0, result }, { index: 1, result: { content: [] } }])]), []);
});

/** An information task over files: the answer is checked, the files are the data. */
function fileTask(files: Record<string, string>, predicate: unknown, answer: string): Task {
  return {
    id: 'files-1',
    server: 'filesystem',
    category: 'single-tool',
    difficulty: 'easy',
    max_steps: 3,
    goal: 'What is the ETA of the pool fix?',
    initial_state: { filesystem: { files } },
    available_tools: ['filesystem.read_text_file'],
    success_predicate: predicate as Task['success_predicate'],
    reference_solutions: [[{ tool: 'filesystem.read_text_file', arguments: { path: 'a.txt' } }, { answer }]],
    counterexamples: [],
  };
}

async function guessesOf(t: Task, options: Parameters<typeof passingGuesses>[3] = {}) {
  const registry = await loadRegistry();
  const root = parsePredicate(t.success_predicate, ['success_predicate']);
  const answer = (t.reference_solutions[0]!.at(-1) as { answer: string }).answer;
  const states = t.initial_state as Record<string, unknown>;
  const verdict = evaluate(root, stateLeafEvaluator(registry, states, answer, { initial: states }));
  assert.equal(verdict.value, true, 'the reference passes');
  return passingGuesses(t, registry, verdict, options);
}

test('a shotgun (every value of the state or of the reads, joined) is tried with --shortcuts, and passes a predicate that only looks for the value', async () => {
  // "What does AA-500 cost?" checked by the number alone: a shotgun of every fare passes.
  const fare = task('What does flight AA-500 from LON to PAR on 2026-03-01 cost?', { 'answer.numberNear': { value: 420, tolerance: 0 } }, 'It costs 420.');
  const f = await verdictOf(fare);
  assert.deepEqual(passingGuesses(fare, f.registry, f.verdict), [], 'no trivial guess passes');
  const reads = [{ content: [{ type: 'text', text: JSON.stringify(FLIGHTS.flights) }] }];
  const shotguns = passingGuesses(fare, f.registry, f.verdict, { shotgun: true, reads }).map((g) => g.source);
  assert.deepEqual(shotguns.map((s) => s.replace(/\d+/, 'N')), ['a shotgun of the N ids, numbers, names and statuses of the initial state', 'a shotgun of the N values the reads returned']);
  // The same question with the answer pinned (no other fare may appear) rejects both shotguns.
  const pinned = task('What does flight AA-500 from LON to PAR on 2026-03-01 cost?', { all: [{ 'answer.numberNear': { value: 420, tolerance: 0 } }, { not: { 'answer.numberNear': { value: 380, tolerance: 0 } } }] }, 'It costs 420.');
  const p = await verdictOf(pinned);
  assert.deepEqual(passingGuesses(pinned, p.registry, p.verdict, { shotgun: true, reads }), []);
});

test('a state value that merely contains the checked text, as others do, is a guess; the one value that holds it is the answer', async () => {
  const predicate = { 'answer.includes': { text: '16:30' } };
  const two = fileTask({ 'a.txt': 'Dev: revised ETA for the pool fix is 16:30 today', 'b.txt': 'Mia: the 16:30 standup moves to tomorrow morning' }, predicate, 'The ETA is 16:30.');
  const guessed = (await guessesOf(two)).map((g) => g.answer);
  assert.ok(guessed.includes('Mia: the 16:30 standup moves to tomorrow morning'), guessed.join(' | '));
  const one = fileTask({ 'a.txt': 'Dev: revised ETA for the pool fix is 16:30 today', 'b.txt': 'Mia: the standup moves to tomorrow morning' }, predicate, 'The ETA is 16:30.');
  assert.deepEqual(await guessesOf(one), []);
});

test('a short option of an answer leaf (a regex flag) names nothing: the state values are still tried', async () => {
  // `flags: "i"` is in nearly every value; it once switched every state guess off.
  const t = fileTask({ 'a.txt': 'the pool fix lands at six', 'b.txt': 'six items left in the bin' }, { 'answer.matches': { pattern: '\\bsix\\b', flags: 'i' } }, 'It lands at six.');
  const guessed = (await guessesOf(t)).map((g) => g.answer);
  assert.ok(guessed.includes('six items left in the bin') && guessed.includes('the pool fix lands at six'), guessed.join(' | '));
});

test('check --shortcuts: a guessable answer is an error that fails the task, unless accepted_findings gives a reason', async () => {
  const { judgeCheck } = await import('../../server/src/runner/check.ts');
  const echo = task("Which flight from LON to PAR on 2026-03-01 is sold out, 'BA-300' or 'AA-500'?", { 'answer.includes': { text: 'BA-300' } }, 'BA-300 is sold out.');
  const { registry, verdict } = await verdictOf(echo);
  const record = (t: Task, variant: string, passed: boolean) =>
    ({ task_id: t.id, task_hash: 'h', variant, fault_profile: 'none', trial: 0, perturbation: 'none', status: passed ? 'passed' : 'failed', passed, verdict, calls: [] }) as unknown as EpisodeRecord;
  const { deriveShortcuts } = await import('../../server/src/tasks/shortcuts.ts');
  // Every shortcut ran and failed: only the guess is left to judge.
  const shortcuts = (t: Task) => deriveShortcuts(t, registry).map((s) => record(t, `shortcut:${s.id}`, false));
  const judge = (t: Task, strict = true) =>
    judgeCheck([{ file: 't.json', task: t, hash: 'h' }], [record(t, 'noop', false), record(t, 'reference:0', true), ...shortcuts(t)], registry, { shortcuts: strict })[0]!;
  assert.deepEqual(judge(echo, false).findings.map((f) => `${f.code} ${f.severity}`), ['guessable-answer warning'], 'a warning in the plain check');
  assert.equal(judge(echo, false).ok, true);
  const plain = judge(echo);
  assert.equal(plain.ok, false);
  assert.deepEqual(plain.findings.map((f) => `${f.code} ${f.severity}`), ['guessable-answer error']);
  const accepted = judge({ ...echo, accepted_findings: [{ code: 'guessable-answer', reason: 'accepted for the test' }] });
  assert.equal(accepted.ok, true, accepted.problems.join('; '));
  assert.deepEqual(accepted.findings, []);
  assert.deepEqual(accepted.accepted_findings, ['guessable-answer']);
});
