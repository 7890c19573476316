import { test } from 'node:test';
import assert from 'node:assert/strict';
import travel from '../../server/src/mcp/travel/index.ts';
import { normalizeState } from '../../server/src/mcp/travel/state.ts';

const state = normalizeState({
  flights: [
    { id: 'BA-200', origin: 'LON', dest: 'PAR', date: '2026-01-05', price: 500, seats_left: 10 },
    { id: 'AA-500', origin: 'LON', dest: 'PAR', date: '2026-01-05', price: 300, seats_left: 9 },
    { id: 'DL-202', origin: 'NYC', dest: 'LAX', date: '2026-02-10', price: 220, seats_left: 0 },
  ],
  reservations: {
    'AA-500': { passenger: 'Bob', status: 'confirmed', payment_info: 'VISA ending 4242' },
    'DL-202': { status: 'held' },
    // A reservation whose flight is not in the database: route filters cannot match it.
    'ZZ-999': { passenger: 'Eve', status: 'confirmed', payment_info: 'cash' },
  },
});
const check = (name: string, args: Record<string, unknown>, s = state): boolean => {
  const predicate = travel.predicates[name];
  assert.ok(predicate, name);
  const verdict = predicate(args, { state: s, answer: undefined });
  JSON.stringify(verdict.evidence);
  return verdict.value;
};
const empty = normalizeState(undefined);

test('normalizeState fills empty flights and reservations', () => {
  assert.deepEqual(empty, { flights: [], reservations: {} });
  assert.deepEqual(normalizeState({ flights: [] }), { flights: [], reservations: {} });
});

test('reservationConfirmed: status, passenger (case-insensitive, trimmed), payment text', () => {
  assert.equal(check('reservationConfirmed', { flight_id: 'AA-500', passenger: 'Bob' }), true);
  assert.equal(check('reservationConfirmed', { flight_id: 'AA-500', passenger: ' bob ' }), true);
  assert.equal(check('reservationConfirmed', { flight_id: 'AA-500' }), true);
  assert.equal(check('reservationConfirmed', { flight_id: 'AA-500', passenger: 'Bobby' }), false);
  assert.equal(check('reservationConfirmed', { flight_id: 'AA-500', passenger: 'Bob', payment_info_contains: '4242' }), true);
  assert.equal(check('reservationConfirmed', { flight_id: 'AA-500', payment_info_contains: '1111' }), false);
  assert.equal(check('reservationConfirmed', { flight_id: 'DL-202' }), false, 'held is not confirmed');
  assert.equal(check('reservationConfirmed', { flight_id: 'BA-200', passenger: 'Bob' }), false, 'no reservation');
  assert.equal(check('reservationConfirmed', { flight_id: 'AA-500', passenger: 'Bob' }, empty), false);
});

test('reservationHeld', () => {
  assert.equal(check('reservationHeld', { flight_id: 'DL-202' }), true);
  assert.equal(check('reservationHeld', { flight_id: 'AA-500' }), false);
  assert.equal(check('reservationHeld', { flight_id: 'BA-200' }), false);
});

test('reservationStatus including "none"', () => {
  assert.equal(check('reservationStatus', { flight_id: 'BA-200', status: 'none' }), true);
  assert.equal(check('reservationStatus', { flight_id: 'AA-500', status: 'none' }), false);
  assert.equal(check('reservationStatus', { flight_id: 'AA-500', status: 'confirmed' }), true);
  assert.equal(check('reservationStatus', { flight_id: 'DL-202', status: 'held' }), true);
  assert.equal(check('reservationStatus', { flight_id: 'DL-202', status: 'confirmed' }), false);
});

test('reservationExists: filters combine, route filters join the flight', () => {
  assert.equal(check('reservationExists', {}), true);
  assert.equal(check('reservationExists', {}, empty), false);
  assert.equal(check('reservationExists', { passenger: 'bob', origin: 'lon', dest: 'PAR', date: '2026-01-05' }), true);
  assert.equal(check('reservationExists', { passenger: 'Bob', date: '2026-01-06' }), false);
  assert.equal(check('reservationExists', { passenger: 'Bob', status: 'held' }), false);
  assert.equal(check('reservationExists', { status: 'held', dest: 'LAX' }), true);
  assert.equal(check('reservationExists', { passenger: 'Eve' }), true);
  assert.equal(check('reservationExists', { passenger: 'Eve', origin: 'LON' }), false, 'flight unknown: no route');
  assert.equal(check('reservationExists', { flight_id: 'BA-200' }), false);
});

test('reservationCount', () => {
  assert.equal(check('reservationCount', { equals: 3 }), true);
  assert.equal(check('reservationCount', { status: 'confirmed', equals: 2 }), true);
  assert.equal(check('reservationCount', { status: 'held', equals: 0 }), false);
  assert.equal(check('reservationCount', { status: 'held', equals: 0 }, empty), true);
  assert.equal(check('reservationCount', { origin: 'LON', min: 2 }), false);
  assert.equal(check('reservationCount', { origin: 'LON', max: 1 }), true);
});

test('seatsLeft: bounds, unknown flight is false', () => {
  assert.equal(check('seatsLeft', { flight_id: 'AA-500', equals: 9 }), true);
  assert.equal(check('seatsLeft', { flight_id: 'AA-500', equals: 10 }), false);
  assert.equal(check('seatsLeft', { flight_id: 'BA-200', min: 10, max: 10 }), true);
  assert.equal(check('seatsLeft', { flight_id: 'DL-202', min: 1 }), false);
  assert.equal(check('seatsLeft', { flight_id: 'DL-202', max: 0 }), true);
  assert.equal(check('seatsLeft', { flight_id: 'XX-1', max: 100 }), false);
});

test('state schema: accepts {} and its examples, rejects a malformed state', async () => {
  const { loadRegistry } = await import('../../server/src/mcp/registry.ts');
  const info = (await loadRegistry()).get('travel');
  assert.ok(info);
  assert.equal(info.validateState({}), true);
  for (const example of (info.server.state_schema.examples as unknown[]) ?? []) assert.equal(info.validateState(example), true, JSON.stringify(example));
  assert.equal(info.validateState({ reservations: { "AA-500": { passenger: "Bob", status: "booked" } } }), false);
});
