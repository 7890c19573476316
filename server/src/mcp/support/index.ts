/**
 * The support namespace: the ReliabilityBench customer support domain (tickets, escalation, knowledge base).
 * Tickets created during a run have ids the task author cannot know, so `ticketExists` and `ticketCount` take
 * every ticket field as a filter: conditions on one new ticket must sit in one leaf to apply to the same ticket.
 */
import { defineNamespace, type PredicateFunction } from '../namespace.ts';
import { normalizeState, type EscalationTarget, type Priority, type SupportState, type Ticket, type TicketStatus } from './state.ts';
import { tools } from './tools.ts';

const contains = (haystack: string | undefined, needle: string): boolean =>
  haystack !== undefined && haystack.toLowerCase().includes(needle.trim().toLowerCase());

interface Filters {
  ticket_id?: string;
  customer_id?: string;
  subject_contains?: string;
  description_contains?: string;
  priority?: Priority;
  status?: TicketStatus;
  escalated_to?: EscalationTarget;
  note_contains?: string;
  resolution_contains?: string;
}

function matches(t: Ticket, f: Filters): boolean {
  if (f.ticket_id !== undefined && t.id !== f.ticket_id) return false;
  if (f.customer_id !== undefined && t.customer_id !== f.customer_id) return false;
  if (f.subject_contains !== undefined && !contains(t.subject, f.subject_contains)) return false;
  if (f.description_contains !== undefined && !contains(t.description, f.description_contains)) return false;
  if (f.priority !== undefined && t.priority !== f.priority) return false;
  if (f.status !== undefined && t.status !== f.status) return false;
  if (f.escalated_to !== undefined && t.escalated_to !== f.escalated_to) return false;
  if (f.note_contains !== undefined && !t.notes.some((n) => contains(n, f.note_contains!))) return false;
  if (f.resolution_contains !== undefined && !contains(t.resolution, f.resolution_contains)) return false;
  return true;
}

interface Bounds {
  equals?: number;
  min?: number;
  max?: number;
}
const withinBounds = (n: number, b: Bounds): boolean =>
  (b.equals === undefined || n === b.equals) && (b.min === undefined || n >= b.min) && (b.max === undefined || n <= b.max);

/** Evidence for a predicate about one ticket by id: the ticket, or the known ids when it is missing. */
function byId(state: SupportState, id: string, check: (t: Ticket) => boolean) {
  const ticket = state.tickets.find((t) => t.id === id);
  if (!ticket) return { value: false, evidence: { ticket_id: id, ticket: null, known_ids: state.tickets.map((t) => t.id).slice(0, 20) } };
  return { value: check(ticket), evidence: { ticket } };
}

const ticketExists: PredicateFunction<SupportState> = (args: Filters, { state }) => {
  const found = state.tickets.filter((t) => matches(t, args));
  if (found.length > 0) return { value: true, evidence: { matched: found.slice(0, 5) } };
  // The customer's tickets are the likeliest near misses; otherwise show a few tickets.
  const near = args.customer_id !== undefined ? state.tickets.filter((t) => t.customer_id === args.customer_id) : state.tickets;
  return { value: false, evidence: { matched: [], candidates: near.slice(0, 5) } };
};

const ticketStatus: PredicateFunction<SupportState> = (args: { ticket_id: string; status: TicketStatus }, { state }) =>
  byId(state, args.ticket_id, (t) => t.status === args.status);

const ticketPriority: PredicateFunction<SupportState> = (args: { ticket_id: string; priority: Priority }, { state }) =>
  byId(state, args.ticket_id, (t) => t.priority === args.priority);

const ticketEscalated: PredicateFunction<SupportState> = (
  args: { ticket_id: string; escalate_to?: EscalationTarget; reason_contains?: string },
  { state },
) =>
  byId(
    state,
    args.ticket_id,
    (t) =>
      t.escalated_to !== undefined &&
      (args.escalate_to === undefined || t.escalated_to === args.escalate_to) &&
      (args.reason_contains === undefined || contains(t.escalation_reason, args.reason_contains)),
  );

const ticketHasNote: PredicateFunction<SupportState> = (args: { ticket_id: string; contains: string }, { state }) =>
  byId(state, args.ticket_id, (t) => t.notes.some((n) => contains(n, args.contains)));

const ticketClosed: PredicateFunction<SupportState> = (args: { ticket_id: string; resolution_contains?: string }, { state }) =>
  byId(
    state,
    args.ticket_id,
    (t) => t.status === 'closed' && (args.resolution_contains === undefined || contains(t.resolution, args.resolution_contains)),
  );

const ticketCount: PredicateFunction<SupportState> = (args: Filters & Bounds, { state }) => {
  const found = state.tickets.filter((t) => matches(t, args));
  return { value: withinBounds(found.length, args), evidence: { count: found.length, ticket_ids: found.map((t) => t.id).slice(0, 20) } };
};

export default defineNamespace<SupportState>({
  namespace: 'support',
  normalizeState,
  predicates: { ticketExists, ticketStatus, ticketPriority, ticketEscalated, ticketHasNote, ticketClosed, ticketCount },
  tools,
});
