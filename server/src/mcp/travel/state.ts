/**
 * The travel state (schemas/servers/travel.json `state_schema`): flights, and reservations keyed by flight id as
 * in the paper's verifier (`reservations["AA-500"].status == "confirmed"`).
 */

const CABINS = ['economy', 'business'] as const;
export type Cabin = (typeof CABINS)[number];

/** A cabin other than economy: its own fare and seats. */
interface CabinFare {
  price: number;
  seats_left: number;
}

export interface Flight {
  id: string;
  origin: string;
  dest: string;
  date: string;
  departure_time?: string;
  airline?: string;
  /** Economy fare per seat. */
  price: number;
  /** Economy seats left. */
  seats_left: number;
  /** The business cabin, when the flight has one. */
  business?: CabinFare;
  /** Fee per checked bag (default 0). */
  baggage_fee?: number;
}

export type ReservationStatus = 'held' | 'confirmed' | 'cancelled';

export interface Reservation {
  /** The lead passenger (the first of `passengers`). */
  passenger?: string;
  status: ReservationStatus;
  payment_info?: string;
  /** Cabin of the seats (default economy). */
  cabin?: Cabin;
  /** Seats held (default 1). */
  seats?: number;
  /** Every passenger's name, one per seat, when the booking has several. */
  passengers?: string[];
  /** Checked bags (default 0). */
  bags?: number;
  /** What the confirmed booking costs: seats × fare + bags × baggage fee. */
  total?: number;
}

export interface TravelState {
  flights: Flight[];
  reservations: Record<string, Reservation>;
}

export function normalizeState(state: unknown): TravelState {
  const raw = (state ?? {}) as Partial<TravelState>;
  const reservations: Record<string, Reservation> = {};
  for (const [id, r] of Object.entries(raw.reservations ?? {})) reservations[id] = { ...r };
  return { flights: (raw.flights ?? []).map((f) => ({ ...f })), reservations };
}
