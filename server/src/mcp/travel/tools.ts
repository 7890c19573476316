/**
 * The travel tools as pure functions of the state (ReliabilityBench travel domain, Appendix A.2): search,
 * hold (takes a seat), confirm. The rules are the ones the tool descriptions in schemas/servers/travel.json
 * promise an agent.
 */
import { ToolError, type ToolHandler } from '../namespace.ts';
// Types only: index.ts imports this module, and a runtime import back would be a cycle.
import type { Flight, Reservation, TravelState } from './index.ts';

const code = (s: string): string => s.trim().toUpperCase();

function flightView(f: Flight): Record<string, unknown> {
  const view: Record<string, unknown> = { id: f.id };
  if (f.airline !== undefined) view.airline = f.airline;
  view.origin = f.origin;
  view.dest = f.dest;
  view.date = f.date;
  if (f.departure_time !== undefined) view.departure_time = f.departure_time;
  view.price = f.price;
  view.seats_left = f.seats_left;
  return view;
}

/** What the agent sees of a reservation: the flight's route and price, never the payment details. */
function reservationView(state: TravelState, flightId: string, r: Reservation): Record<string, unknown> {
  const f = state.flights.find((x) => x.id === flightId);
  const view: Record<string, unknown> = { flight_id: flightId };
  if (f) {
    view.origin = f.origin;
    view.dest = f.dest;
    view.date = f.date;
    if (f.departure_time !== undefined) view.departure_time = f.departure_time;
    view.price = f.price;
  }
  view.status = r.status;
  if (r.status === 'confirmed' && r.passenger !== undefined) view.passenger = r.passenger;
  return view;
}

const search_flights: ToolHandler<TravelState> = (args: { origin: string; dest: string; date: string }, state) => {
  const flights = state.flights
    .filter((f) => code(f.origin) === code(args.origin) && code(f.dest) === code(args.dest) && f.date === args.date)
    .map(flightView);
  return { result: { flights } };
};

const hold_flight: ToolHandler<TravelState> = (args: { flight_id: string }, state) => {
  const id = args.flight_id;
  const flight = state.flights.find((f) => f.id === id);
  if (!flight) throw new ToolError(`Unknown flight id "${id}". Use search_flights to find the ids of flights on a route and date.`);
  const existing = state.reservations[id];
  if (existing?.status === 'confirmed') throw new ToolError(`Flight ${id} already has a confirmed reservation; it cannot be held again.`);
  // A repeated hold (an agent retrying after a timeout) must not take a second seat.
  if (existing?.status === 'held') {
    return { result: { status: 'already_held', reservation: reservationView(state, id, existing), seats_left: flight.seats_left } };
  }
  if (flight.seats_left <= 0) throw new ToolError(`Flight ${id} is sold out (0 seats left); choose another flight.`);
  const next = structuredClone(state);
  const held = next.flights.find((f) => f.id === id)!;
  held.seats_left -= 1;
  next.reservations[id] = { status: 'held' };
  return {
    state: next,
    result: { status: 'held', reservation: reservationView(next, id, { status: 'held' }), seats_left: held.seats_left },
  };
};

const confirm_booking: ToolHandler<TravelState> = (args: { flight_id: string; passenger: string; payment_info: string }, state) => {
  const id = args.flight_id;
  const existing = state.reservations[id];
  if (!existing) {
    const known = state.flights.some((f) => f.id === id);
    throw new ToolError(
      known ? `Flight ${id} has no hold: call hold_flight first, then confirm_booking.` : `Unknown flight id "${id}". Use search_flights to find flight ids.`,
    );
  }
  if (existing.status === 'confirmed') throw new ToolError(`The reservation of flight ${id} is already confirmed.`);
  if (args.passenger.trim() === '') throw new ToolError('passenger must not be empty: give the full name of the passenger.');
  if (args.payment_info.trim() === '') throw new ToolError('payment_info must not be empty: give the payment details.');
  const next = structuredClone(state);
  const confirmed: Reservation = { status: 'confirmed', passenger: args.passenger, payment_info: args.payment_info };
  next.reservations[id] = confirmed;
  return { state: next, result: { status: 'confirmed', reservation: reservationView(next, id, confirmed) } };
};

const get_itinerary: ToolHandler<TravelState> = (_args: Record<string, never>, state) => {
  const reservations = Object.entries(state.reservations).map(([id, r]) => reservationView(state, id, r));
  return { result: { reservations } };
};

export const tools: Record<string, ToolHandler<TravelState>> = { search_flights, hold_flight, confirm_booking, get_itinerary };
