/**
 * The travel namespace: the ReliabilityBench travel domain. Reservations are keyed by flight id as in the
 * paper's verifier (`reservations["AA-500"].status == "confirmed"`), so a flight carries one reservation.
 */
import { defineNamespace, type PredicateFunction } from '../namespace.ts';
import { normalizeState, type Cabin, type Flight, type Reservation, type ReservationStatus, type TravelState } from './state.ts';
import { tools } from './tools.ts';

const norm = (s: string): string => s.trim().toLowerCase();
const sameName = (a: string | undefined, b: string): boolean => a !== undefined && norm(a) === norm(b);

interface Bounds {
  equals?: number;
  min?: number;
  max?: number;
}
const withinBounds = (n: number, b: Bounds): boolean =>
  (b.equals === undefined || n === b.equals) && (b.min === undefined || n >= b.min) && (b.max === undefined || n <= b.max);

interface ReservationFilters {
  flight_id?: string;
  passenger?: string;
  status?: ReservationStatus;
  origin?: string;
  dest?: string;
  date?: string;
  cabin?: Cabin;
  seats?: number;
  bags?: number;
}

interface ReservationView extends Reservation {
  flight_id: string;
  flight: Flight | null;
}

function reservationViews(state: TravelState): ReservationView[] {
  return Object.entries(state.reservations).map(([flight_id, r]) => ({
    flight_id,
    ...r,
    flight: state.flights.find((f) => f.id === flight_id) ?? null,
  }));
}

function matches(r: ReservationView, f: ReservationFilters): boolean {
  if (f.flight_id !== undefined && r.flight_id !== f.flight_id) return false;
  // A passenger filter matches the lead passenger or any other passenger of the booking.
  if (f.passenger !== undefined && !sameName(r.passenger, f.passenger) && !(r.passengers ?? []).some((p) => sameName(p, f.passenger!))) return false;
  if (f.status !== undefined && r.status !== f.status) return false;
  if (f.cabin !== undefined && (r.cabin ?? 'economy') !== f.cabin) return false;
  if (f.seats !== undefined && (r.seats ?? 1) !== f.seats) return false;
  if (f.bags !== undefined && (r.bags ?? 0) !== f.bags) return false;
  // Route filters need the flight; a reservation of a flight missing from the database cannot match them.
  if (f.origin !== undefined && !sameName(r.flight?.origin, f.origin)) return false;
  if (f.dest !== undefined && !sameName(r.flight?.dest, f.dest)) return false;
  if (f.date !== undefined && r.flight?.date !== f.date) return false;
  return true;
}

const reservationConfirmed: PredicateFunction<TravelState> = (
  args: { flight_id: string; passenger?: string; payment_info_contains?: string },
  { state },
) => {
  const reservation = state.reservations[args.flight_id];
  const evidence = { flight_id: args.flight_id, reservation: reservation ?? null };
  if (!reservation || reservation.status !== 'confirmed') return { value: false, evidence };
  if (args.passenger !== undefined && !sameName(reservation.passenger, args.passenger)) return { value: false, evidence };
  if (args.payment_info_contains !== undefined && !norm(reservation.payment_info ?? '').includes(norm(args.payment_info_contains))) {
    return { value: false, evidence };
  }
  return { value: true, evidence };
};

const reservationHeld: PredicateFunction<TravelState> = (args: { flight_id: string }, { state }) => {
  const reservation = state.reservations[args.flight_id];
  return { value: reservation?.status === 'held', evidence: { flight_id: args.flight_id, reservation: reservation ?? null } };
};

const reservationStatus: PredicateFunction<TravelState> = (args: { flight_id: string; status: 'none' | ReservationStatus }, { state }) => {
  const reservation = state.reservations[args.flight_id];
  const actual = reservation?.status ?? 'none';
  return { value: actual === args.status, evidence: { flight_id: args.flight_id, status: actual } };
};

const reservationExists: PredicateFunction<TravelState> = (args: ReservationFilters, { state }) => {
  const all = reservationViews(state);
  const found = all.filter((r) => matches(r, args));
  return found.length > 0
    ? { value: true, evidence: { matched: found.slice(0, 5) } }
    : { value: false, evidence: { matched: [], reservations: all.slice(0, 10) } };
};

const reservationCount: PredicateFunction<TravelState> = (args: ReservationFilters & Bounds, { state }) => {
  const found = reservationViews(state).filter((r) => matches(r, args));
  return { value: withinBounds(found.length, args), evidence: { count: found.length, reservations: found.slice(0, 10) } };
};

const seatsLeft: PredicateFunction<TravelState> = (args: { flight_id: string; cabin?: Cabin } & Bounds, { state }) => {
  const flight = state.flights.find((f) => f.id === args.flight_id);
  if (!flight) return { value: false, evidence: { flight_id: args.flight_id, flight: null } };
  const cabin = args.cabin ?? 'economy';
  const left = cabin === 'business' ? flight.business?.seats_left : flight.seats_left;
  if (left === undefined) return { value: false, evidence: { flight_id: flight.id, cabin, seats_left: null } };
  return { value: withinBounds(left, args), evidence: { flight_id: flight.id, ...(args.cabin ? { cabin } : {}), seats_left: left } };
};

export default defineNamespace<TravelState>({
  namespace: 'travel',
  normalizeState,
  predicates: { reservationConfirmed, reservationHeld, reservationStatus, reservationExists, reservationCount, seatsLeft },
  tools,
});
