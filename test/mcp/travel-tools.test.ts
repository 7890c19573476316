import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { normalizeState, type TravelState } from '../../server/src/mcp/travel/index.ts';
import { tools } from '../../server/src/mcp/travel/tools.ts';
import { ToolError, type ToolOutcome } from '../../server/src/mcp/namespace.ts';
import { loadRegistry, type NamespaceInfo, type Registry } from '../../server/src/mcp/registry.ts';
import { packageRoot } from '../../server/src/paths.ts';
import { evaluate, stateLeafEvaluator } from '../../server/src/predicates/evaluate.ts';
import { parsePredicate } from '../../server/src/predicates/tree.ts';
import { createAjv } from '../../server/src/tasks/ajv.ts';

const NS = 'travel';
type State = TravelState;
const ajv = createAjv();
let registry: Registry;
let info: NamespaceInfo;
before(async () => {
  registry = await loadRegistry();
  info = registry.get(NS)!;
});

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/**
 * Calls a handler as the harness would (schema-valid arguments) and checks what holds for every call: the input
 * state is untouched (frozen, and equal to a copy taken before), the result is plain JSON, and a new state
 * passes the state schema and is already normalised.
 */
function call(name: string, args: Record<string, unknown>, state: State): ToolOutcome<State> {
  const handler = tools[name];
  assert.ok(handler, `no handler for ${name}`);
  const declared = info.tools.get(name);
  assert.ok(declared, `${name} is not declared`);
  assert.ok(declared.validateInput(args), `${name} ${JSON.stringify(args)}: ${ajv.errorsText(declared.validateInput.errors)}`);
  const copy = structuredClone(state);
  deepFreeze(state);
  let outcome: ToolOutcome<State>;
  try {
    outcome = handler(args, state);
  } finally {
    assert.deepEqual(state, copy, `${name} changed its input state`);
  }
  assert.deepEqual(JSON.parse(JSON.stringify(outcome.result)), outcome.result, `${name}: result is not plain JSON`);
  if (outcome.state !== undefined) {
    assert.ok(info.validateState(outcome.state), `${name}: new state fails the schema: ${ajv.errorsText(info.validateState.errors)}`);
    assert.deepEqual(normalizeState(structuredClone(outcome.state)), outcome.state, `${name}: new state is not normalised`);
  }
  return outcome;
}

function refuses(name: string, args: Record<string, unknown>, state: State, message: RegExp): void {
  assert.throws(
    () => call(name, args, state),
    (error: unknown) => error instanceof ToolError && message.test(error.message),
  );
}

const seed = (): State =>
  normalizeState({
    flights: [
      { id: 'BA-200', origin: 'LON', dest: 'PAR', date: '2026-01-05', airline: 'British Airways', price: 500, seats_left: 10 },
      { id: 'UA-101', origin: 'LON', dest: 'PAR', date: '2026-01-05', departure_time: '07:00', price: 180, seats_left: 0 },
      { id: 'AA-500', origin: 'LON', dest: 'PAR', date: '2026-01-05', price: 300, seats_left: 1 },
      { id: 'AA-501', origin: 'LON', dest: 'PAR', date: '2026-01-06', price: 250, seats_left: 9 },
      { id: 'AF-900', origin: 'PAR', dest: 'LON', date: '2026-01-05', price: 120, seats_left: 9 },
    ],
    reservations: { 'AF-900': { status: 'confirmed', passenger: 'Eve', payment_info: 'VISA-1111' } },
  });

const seatsOf = (s: State, id: string): number | undefined => s.flights.find((f) => f.id === id)?.seats_left;

test('there is one handler per declared tool', () => {
  assert.deepEqual(Object.keys(tools).sort(), [...info.tools.keys()].sort());
});

test('search_flights matches codes case-insensitively and keeps database order, sold-out flights included', () => {
  const out = call('search_flights', { origin: 'lon', dest: 'Par', date: '2026-01-05' }, seed());
  assert.equal(out.state, undefined);
  assert.deepEqual(out.result, {
    flights: [
      { id: 'BA-200', airline: 'British Airways', origin: 'LON', dest: 'PAR', date: '2026-01-05', price: 500, seats_left: 10 },
      { id: 'UA-101', origin: 'LON', dest: 'PAR', date: '2026-01-05', departure_time: '07:00', price: 180, seats_left: 0 },
      { id: 'AA-500', origin: 'LON', dest: 'PAR', date: '2026-01-05', price: 300, seats_left: 1 },
    ],
  });
  assert.deepEqual(call('search_flights', { origin: 'LON', dest: 'NYC', date: '2026-01-05' }, seed()).result, { flights: [] });
});

test('hold_flight takes a seat and creates a held reservation', () => {
  const out = call('hold_flight', { flight_id: 'AA-500' }, seed());
  assert.equal(seatsOf(out.state!, 'AA-500'), 0);
  assert.deepEqual(out.state!.reservations['AA-500'], { status: 'held' });
  assert.deepEqual(out.result, {
    status: 'held',
    reservation: { flight_id: 'AA-500', origin: 'LON', dest: 'PAR', date: '2026-01-05', price: 300, status: 'held' },
    seats_left: 0,
  });
  // Other flights and reservations are untouched.
  assert.equal(seatsOf(out.state!, 'BA-200'), 10);
  assert.deepEqual(out.state!.reservations['AF-900'], seed().reservations['AF-900']);
});

test('a second hold on a held flight returns the hold and takes no second seat', () => {
  const held = call('hold_flight', { flight_id: 'AA-500' }, seed()).state!;
  // AA-500 is now at 0 seats: the repeat must still succeed, since it is the same hold.
  const again = call('hold_flight', { flight_id: 'AA-500' }, held);
  assert.equal(again.state, undefined);
  assert.equal((again.result as { status: string }).status, 'already_held');
  assert.equal((again.result as { seats_left: number }).seats_left, 0);
});

test('hold_flight refuses an unknown flight, a sold-out flight and a confirmed one', () => {
  refuses('hold_flight', { flight_id: 'XX-1' }, seed(), /Unknown flight id "XX-1".*search_flights/);
  refuses('hold_flight', { flight_id: 'UA-101' }, seed(), /UA-101 is sold out/);
  refuses('hold_flight', { flight_id: 'AF-900' }, seed(), /AF-900 already has a confirmed reservation/);
});

test('confirm_booking confirms a hold with passenger and payment and takes no further seat', () => {
  const held = call('hold_flight', { flight_id: 'BA-200' }, seed()).state!;
  const out = call('confirm_booking', { flight_id: 'BA-200', passenger: 'Bob Stone', payment_info: 'card on file' }, held);
  assert.deepEqual(out.state!.reservations['BA-200'], { status: 'confirmed', passenger: 'Bob Stone', payment_info: 'card on file' });
  assert.equal(seatsOf(out.state!, 'BA-200'), 9);
  assert.deepEqual(out.result, {
    status: 'confirmed',
    reservation: { flight_id: 'BA-200', origin: 'LON', dest: 'PAR', date: '2026-01-05', price: 500, status: 'confirmed', passenger: 'Bob Stone' },
  });
});

test('confirm_booking refuses without a hold, when already confirmed, and with a blank passenger or payment', () => {
  refuses('confirm_booking', { flight_id: 'BA-200', passenger: 'Bob', payment_info: 'card' }, seed(), /BA-200 has no hold: call hold_flight first/);
  refuses('confirm_booking', { flight_id: 'XX-1', passenger: 'Bob', payment_info: 'card' }, seed(), /Unknown flight id "XX-1"/);
  refuses('confirm_booking', { flight_id: 'AF-900', passenger: 'Bob', payment_info: 'card' }, seed(), /already confirmed/);
  const held = call('hold_flight', { flight_id: 'BA-200' }, seed()).state!;
  refuses('confirm_booking', { flight_id: 'BA-200', passenger: '  ', payment_info: 'card' }, held, /passenger must not be empty/);
  refuses('confirm_booking', { flight_id: 'BA-200', passenger: 'Bob', payment_info: ' ' }, held, /payment_info must not be empty/);
});

test('get_itinerary lists reservations with route and price, the passenger once confirmed, never the payment', () => {
  const held = call('hold_flight', { flight_id: 'BA-200' }, seed()).state!;
  const out = call('get_itinerary', {}, held);
  assert.equal(out.state, undefined);
  assert.deepEqual(out.result, {
    reservations: [
      { flight_id: 'AF-900', origin: 'PAR', dest: 'LON', date: '2026-01-05', price: 120, status: 'confirmed', passenger: 'Eve' },
      { flight_id: 'BA-200', origin: 'LON', dest: 'PAR', date: '2026-01-05', price: 500, status: 'held' },
    ],
  });
  assert.deepEqual(call('get_itinerary', {}, normalizeState({})).result, { reservations: [] });
});

// Every task of the namespace: its reference solutions, replayed through the handlers, pass; its
// counterexamples fail. A refused call is recorded and the sequence goes on, as an agent's would.

interface Step {
  tool?: string;
  arguments?: Record<string, unknown>;
  answer?: string;
}
interface Task {
  id: string;
  initial_state: Record<string, unknown>;
  success_predicate: unknown;
  reference_solutions: Step[][];
  counterexamples?: Step[][];
}

function replay(task: Task, steps: Step[]): { value: boolean | undefined; refusals: string[] } {
  let state = normalizeState(structuredClone(task.initial_state[NS]));
  let answer: string | undefined;
  const refusals: string[] = [];
  for (const step of steps) {
    if (step.tool === undefined) {
      answer = step.answer;
      continue;
    }
    const [ns, name] = step.tool.split('.');
    assert.equal(ns, NS, `${task.id}: ${step.tool} is not a ${NS} tool`);
    try {
      const out = call(name!, step.arguments ?? {}, state);
      if (out.state !== undefined) state = out.state;
    } catch (error) {
      if (!(error instanceof ToolError)) throw error;
      refusals.push(`${step.tool}: ${error.message}`);
    }
  }
  const verdict = evaluate(parsePredicate(task.success_predicate, ['success_predicate']), stateLeafEvaluator(registry, { [NS]: state }, answer));
  return { value: verdict.value, refusals };
}

const tasksDir = join(packageRoot(), 'test', 'fixtures', 'tasks', NS);
const taskFiles = readdirSync(tasksDir).filter((f) => f.endsWith('.json')).sort();

test('the namespace has tasks to replay', () => {
  assert.ok(taskFiles.length > 0);
});

for (const file of taskFiles) {
  const task = JSON.parse(readFileSync(join(tasksDir, file), 'utf8')) as Task;
  test(`${task.id}: reference solutions pass and counterexamples fail`, () => {
    task.reference_solutions.forEach((steps, i) => {
      const run = replay(task, steps);
      assert.equal(run.value, true, `reference solution ${i} fails (refusals: ${run.refusals.join(' | ') || 'none'})`);
    });
    (task.counterexamples ?? []).forEach((steps, i) => {
      assert.equal(replay(task, steps).value, false, `counterexample ${i} passes`);
    });
  });
}
