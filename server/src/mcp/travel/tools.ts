/**
 * The travel tools as pure functions of the state (ReliabilityBench travel domain, Appendix A.2): search,
 * hold (takes a seat), confirm. The rules are the ones the tool descriptions in schemas/servers/travel.json
 * promise an agent.
 */
import { ToolError, type ToolHandler } from '../namespace.ts';
import type { Cabin, Flight, Reservation, TravelState } from './state.ts';

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
  if (f.business) view.business = { ...f.business };
  if (f.baggage_fee !== undefined) view.baggage_fee = f.baggage_fee;
  return view;
}

/** The fare and seats of a cabin of a flight; undefined when the flight has no such cabin. */
function cabinOf(f: Flight, cabin: Cabin): { price: number; seats_left: number } | undefined {
  return cabin === 'business' ? f.business : { price: f.price, seats_left: f.seats_left };
}

/** Takes (negative: gives back) seats of a cabin of a flight, in place. */
function takeSeats(f: Flight, cabin: Cabin, seats: number): void {
  if (cabin === 'business') f.business!.seats_left -= seats;
  else f.seats_left -= seats;
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
    view.price = r.cabin === 'business' ? (f.business?.price ?? f.price) : f.price;
  }
  view.status = r.status;
  if (r.cabin !== undefined) view.cabin = r.cabin;
  if (r.seats !== undefined) view.seats = r.seats;
  if (r.status === 'confirmed' && r.passenger !== undefined) view.passenger = r.passenger;
  if (r.status === 'confirmed' && r.passengers !== undefined) view.passengers = [...r.passengers];
  if (r.bags !== undefined) view.bags = r.bags;
  if (r.total !== undefined) view.total = r.total;
  return view;
}

const search_flights: ToolHandler<TravelState> = (args: { origin: string; dest: string; date: string }, state) => {
  const flights = state.flights
    .filter((f) => code(f.origin) === code(args.origin) && code(f.dest) === code(args.dest) && f.date === args.date)
    .map(flightView);
  return { result: { flights } };
};

const hold_flight: ToolHandler<TravelState> = (args: { flight_id: string; seats?: number; cabin?: Cabin }, state) => {
  const id = args.flight_id;
  const seats = args.seats ?? 1;
  const cabin = args.cabin ?? 'economy';
  const flight = state.flights.find((f) => f.id === id);
  if (!flight) throw new ToolError(`Unknown flight id "${id}". Use search_flights to find the ids of flights on a route and date.`);
  const existing = state.reservations[id];
  if (existing?.status === 'confirmed') throw new ToolError(`Flight ${id} already has a confirmed reservation; it cannot be held again.`);
  // A repeated hold (an agent retrying after a timeout) must not take a second seat.
  if (existing?.status === 'held') {
    return { result: { status: 'already_held', reservation: reservationView(state, id, existing), seats_left: cabinOf(flight, existing.cabin ?? 'economy')?.seats_left ?? 0 } };
  }
  const fare = cabinOf(flight, cabin);
  if (!fare) throw new ToolError(`Flight ${id} has no ${cabin} cabin; hold it in economy.`);
  if (fare.seats_left <= 0) throw new ToolError(`Flight ${id} is sold out in ${cabin} (0 seats left); choose another flight${cabin === 'business' ? ' or cabin' : ''}.`);
  if (fare.seats_left < seats) throw new ToolError(`Flight ${id} has only ${fare.seats_left} ${cabin} seat(s) left, fewer than the ${seats} asked for.`);
  const next = structuredClone(state);
  const held = next.flights.find((f) => f.id === id)!;
  takeSeats(held, cabin, seats);
  // Plain one-seat economy holds keep their original shape.
  const reservation: Reservation = { status: 'held', ...(args.cabin !== undefined ? { cabin } : {}), ...(args.seats !== undefined ? { seats } : {}) };
  next.reservations[id] = reservation;
  return {
    state: next,
    result: { status: 'held', reservation: reservationView(next, id, reservation), seats_left: cabinOf(held, cabin)!.seats_left },
  };
};

const confirm_booking: ToolHandler<TravelState> = (
  args: { flight_id: string; passenger: string; payment_info: string; passengers?: string[]; bags?: number },
  state,
) => {
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
  const seats = existing.seats ?? 1;
  const passengers = args.passengers;
  if (seats > 1 && passengers === undefined) throw new ToolError(`The hold on flight ${id} is for ${seats} seats: give every passenger's name in passengers.`);
  if (passengers !== undefined && passengers.length !== seats) {
    throw new ToolError(`passengers names ${passengers.length} people but the hold on flight ${id} is for ${seats} seat(s).`);
  }
  if (passengers !== undefined && !passengers.some((p) => p.trim().toLowerCase() === args.passenger.trim().toLowerCase())) {
    throw new ToolError('passenger (the lead passenger) must be one of passengers.');
  }
  const flight = state.flights.find((f) => f.id === id);
  const next = structuredClone(state);
  const confirmed: Reservation = { ...existing, status: 'confirmed', passenger: args.passenger, payment_info: args.payment_info };
  if (passengers !== undefined) confirmed.passengers = [...passengers];
  if (args.bags !== undefined) confirmed.bags = args.bags;
  // The price of a booking that uses more than the one-seat economy fare is recorded with it.
  if (flight && (existing.cabin !== undefined || existing.seats !== undefined || args.bags !== undefined)) {
    const fare = cabinOf(flight, existing.cabin ?? 'economy')?.price ?? flight.price;
    confirmed.total = Math.round((fare * seats + (args.bags ?? 0) * (flight.baggage_fee ?? 0)) * 100) / 100;
  }
  next.reservations[id] = confirmed;
  return { state: next, result: { status: 'confirmed', reservation: reservationView(next, id, confirmed) } };
};

const cancel_reservation: ToolHandler<TravelState> = (args: { flight_id: string }, state) => {
  const id = args.flight_id;
  const existing = state.reservations[id];
  if (!existing || existing.status === 'cancelled') {
    throw new ToolError(`Flight ${id} has no ${existing ? 'active ' : ''}reservation to cancel; get_itinerary lists the reservations.`);
  }
  const next = structuredClone(state);
  const flight = next.flights.find((f) => f.id === id);
  // The seats go back to the cabin they were taken from.
  if (flight && cabinOf(flight, existing.cabin ?? 'economy')) takeSeats(flight, existing.cabin ?? 'economy', -(existing.seats ?? 1));
  const cancelled: Reservation = { ...existing, status: 'cancelled' };
  next.reservations[id] = cancelled;
  return { state: next, result: { status: 'cancelled', reservation: reservationView(next, id, cancelled), seats_released: existing.seats ?? 1 } };
};

const get_itinerary: ToolHandler<TravelState> = (_args: Record<string, never>, state) => {
  const reservations = Object.entries(state.reservations).map(([id, r]) => reservationView(state, id, r));
  return { result: { reservations } };
};

export const tools: Record<string, ToolHandler<TravelState>> = { search_flights, hold_flight, confirm_booking, cancel_reservation, get_itinerary };
