import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeState, type TravelState } from '../../server/src/mcp/travel/state.ts';
import { tools } from '../../server/src/mcp/travel/tools.ts';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { assertRefuses, callOnce, testFixtureTasks } from './harness.ts';

const NS = 'travel';
type State = TravelState;

/** A call that must succeed, on the travel server seeded with `state`: its reply and the state it leaves. */
const call = (name: string, args: Record<string, unknown>, state: State) => callOnce<State>(NS, state, name, args);
const refuses = (name: string, args: Record<string, unknown>, state: State, message: RegExp) => assertRefuses(NS, state, name, args, message);

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

test('there is one handler per declared tool', async () => {
  assert.deepEqual(Object.keys(tools).sort(), [...(await loadRegistry()).get(NS)!.tools.keys()].sort());
});

test('search_flights matches codes case-insensitively and keeps database order, sold-out flights included', async () => {
  const out = await call('search_flights', { origin: 'lon', dest: 'Par', date: '2026-01-05' }, seed());
  assert.equal(out.changed, false);
  assert.deepEqual(out.result, {
    flights: [
      { id: 'BA-200', airline: 'British Airways', origin: 'LON', dest: 'PAR', date: '2026-01-05', price: 500, seats_left: 10 },
      { id: 'UA-101', origin: 'LON', dest: 'PAR', date: '2026-01-05', departure_time: '07:00', price: 180, seats_left: 0 },
      { id: 'AA-500', origin: 'LON', dest: 'PAR', date: '2026-01-05', price: 300, seats_left: 1 },
    ],
  });
  assert.deepEqual((await call('search_flights', { origin: 'LON', dest: 'NYC', date: '2026-01-05' }, seed())).result, { flights: [] });
});

test('hold_flight takes a seat and creates a held reservation', async () => {
  const out = await call('hold_flight', { flight_id: 'AA-500' }, seed());
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

test('a second hold on a held flight returns the hold and takes no second seat', async () => {
  const held = (await call('hold_flight', { flight_id: 'AA-500' }, seed())).state!;
  // AA-500 is now at 0 seats: the repeat must still succeed, since it is the same hold.
  const again = await call('hold_flight', { flight_id: 'AA-500' }, held);
  assert.equal(again.changed, false);
  assert.equal((again.result as { status: string }).status, 'already_held');
  assert.equal((again.result as { seats_left: number }).seats_left, 0);
});

test('hold_flight refuses an unknown flight, a sold-out flight and a confirmed one', async () => {
  await refuses('hold_flight', { flight_id: 'XX-1' }, seed(), /Unknown flight id "XX-1".*search_flights/);
  await refuses('hold_flight', { flight_id: 'UA-101' }, seed(), /UA-101 is sold out/);
  await refuses('hold_flight', { flight_id: 'AF-900' }, seed(), /AF-900 already has a confirmed reservation/);
});

test('confirm_booking confirms a hold with passenger and payment and takes no further seat', async () => {
  const held = (await call('hold_flight', { flight_id: 'BA-200' }, seed())).state!;
  const out = await call('confirm_booking', { flight_id: 'BA-200', passenger: 'Bob Stone', payment_info: 'card on file' }, held);
  assert.deepEqual(out.state!.reservations['BA-200'], { status: 'confirmed', passenger: 'Bob Stone', payment_info: 'card on file' });
  assert.equal(seatsOf(out.state!, 'BA-200'), 9);
  assert.deepEqual(out.result, {
    status: 'confirmed',
    reservation: { flight_id: 'BA-200', origin: 'LON', dest: 'PAR', date: '2026-01-05', price: 500, status: 'confirmed', passenger: 'Bob Stone' },
  });
});

test('confirm_booking refuses without a hold, when already confirmed, and with a blank passenger or payment', async () => {
  await refuses('confirm_booking', { flight_id: 'BA-200', passenger: 'Bob', payment_info: 'card' }, seed(), /BA-200 has no hold: call hold_flight first/);
  await refuses('confirm_booking', { flight_id: 'XX-1', passenger: 'Bob', payment_info: 'card' }, seed(), /Unknown flight id "XX-1"/);
  await refuses('confirm_booking', { flight_id: 'AF-900', passenger: 'Bob', payment_info: 'card' }, seed(), /already confirmed/);
  const held = (await call('hold_flight', { flight_id: 'BA-200' }, seed())).state!;
  await refuses('confirm_booking', { flight_id: 'BA-200', passenger: '  ', payment_info: 'card' }, held, /passenger must not be empty/);
  await refuses('confirm_booking', { flight_id: 'BA-200', passenger: 'Bob', payment_info: ' ' }, held, /payment_info must not be empty/);
});

test('get_itinerary lists reservations with route and price, the passenger once confirmed, never the payment', async () => {
  const held = (await call('hold_flight', { flight_id: 'BA-200' }, seed())).state!;
  const out = await call('get_itinerary', {}, held);
  assert.equal(out.changed, false);
  assert.deepEqual(out.result, {
    reservations: [
      { flight_id: 'AF-900', origin: 'PAR', dest: 'LON', date: '2026-01-05', price: 120, status: 'confirmed', passenger: 'Eve' },
      { flight_id: 'BA-200', origin: 'LON', dest: 'PAR', date: '2026-01-05', price: 500, status: 'held' },
    ],
  });
  assert.deepEqual((await call('get_itinerary', {}, normalizeState({}))).result, { reservations: [] });
});

// Every task of the namespace: its reference solutions, replayed through its server, pass; its counterexamples
// fail. A refused call is recorded and the sequence goes on, as an agent's would.
testFixtureTasks(NS);
