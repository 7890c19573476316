/**
 * The help-desk tools as pure functions of the state (ReliabilityBench customer support domain, Appendix A.3).
 * The rules are the ones the tool descriptions in schemas/servers/support.json promise an agent.
 */
import { findCustomers } from '../customers.ts';
import { ToolError, type ToolHandler } from '../namespace.ts';
import type { Article, EscalationTarget, Priority, SupportState, Ticket, TicketStatus } from './state.ts';

const PRIORITIES: readonly Priority[] = ['low', 'medium', 'high', 'urgent'];
const UPDATABLE_STATUSES: readonly TicketStatus[] = ['open', 'in_progress', 'pending'];
const TARGETS: readonly EscalationTarget[] = ['tier2', 'tier3', 'engineering', 'billing', 'management'];

const blank = (s: string | undefined): boolean => s === undefined || s.trim() === '';

/** `T-<n>` with n one above the highest existing ticket number; the first ticket is T-1001. */
function nextTicketId(tickets: readonly Ticket[]): string {
  let max = 1000;
  for (const t of tickets) {
    const m = /^T-(\d+)$/.exec(t.id);
    if (m) max = Math.max(max, Number(m[1]));
  }
  return `T-${max + 1}`;
}

/** A ticket in schema key order, whatever order the seed had; also what the agent sees. */
function ticketView(t: Ticket): Ticket {
  const view: Ticket = {
    id: t.id,
    customer_id: t.customer_id,
    subject: t.subject,
    description: t.description,
    priority: t.priority,
    status: t.status,
    notes: [...t.notes],
  };
  if (t.escalated_to !== undefined) view.escalated_to = t.escalated_to;
  if (t.escalation_reason !== undefined) view.escalation_reason = t.escalation_reason;
  if (t.resolution !== undefined) view.resolution = t.resolution;
  return view;
}

/** The ticket to change, in a copy of the state; refuses unknown and closed tickets. */
function editable(state: SupportState, ticketId: string, action: string): { next: SupportState; ticket: Ticket } {
  const index = state.tickets.findIndex((t) => t.id === ticketId);
  const current = state.tickets[index];
  if (!current) throw new ToolError(`Unknown ticket id "${ticketId}". Use list_open_tickets to find ticket ids.`);
  if (current.status === 'closed') throw new ToolError(`Ticket ${ticketId} is closed and cannot be ${action}.`);
  const next = structuredClone(state);
  const ticket = next.tickets[index]!;
  return { next, ticket };
}

const create_ticket: ToolHandler<SupportState> = (
  args: { customer_id: string; subject: string; description: string; priority: Priority },
  state,
) => {
  if (!state.customers.some((c) => c.id === args.customer_id)) {
    throw new ToolError(`Unknown customer id "${args.customer_id}": tickets can only be created for known customers.`);
  }
  if (blank(args.subject)) throw new ToolError('subject must not be empty.');
  if (blank(args.description)) throw new ToolError('description must not be empty.');
  if (!PRIORITIES.includes(args.priority)) throw new ToolError(`priority must be one of ${PRIORITIES.join(', ')}.`);
  const ticket: Ticket = {
    id: nextTicketId(state.tickets),
    customer_id: args.customer_id,
    subject: args.subject,
    description: args.description,
    priority: args.priority,
    status: 'open',
    notes: [],
  };
  const next = structuredClone(state);
  next.tickets.push(ticket);
  return { state: next, result: { ticket: ticketView(ticket) } };
};

const update_ticket: ToolHandler<SupportState> = (
  args: { ticket_id: string; status?: TicketStatus; priority?: Priority; note?: string },
  state,
) => {
  if (args.status === undefined && args.priority === undefined && args.note === undefined) {
    throw new ToolError('Nothing to update: give at least one of status, priority, note.');
  }
  if (args.status !== undefined && !UPDATABLE_STATUSES.includes(args.status)) {
    throw new ToolError(`status can be set to ${UPDATABLE_STATUSES.join(', ')} only: use escalate_ticket to escalate and close_ticket to close.`);
  }
  if (args.priority !== undefined && !PRIORITIES.includes(args.priority)) throw new ToolError(`priority must be one of ${PRIORITIES.join(', ')}.`);
  if (args.note !== undefined && blank(args.note)) throw new ToolError('note must not be empty.');
  const { next, ticket } = editable(state, args.ticket_id, 'updated');
  if (args.status !== undefined) ticket.status = args.status;
  if (args.priority !== undefined) ticket.priority = args.priority;
  if (args.note !== undefined) ticket.notes.push(args.note);
  return { state: next, result: { ticket: ticketView(ticket) } };
};

const close_ticket: ToolHandler<SupportState> = (args: { ticket_id: string; resolution: string }, state) => {
  const { next, ticket } = editable(state, args.ticket_id, 'closed again');
  if (blank(args.resolution)) throw new ToolError('resolution must not be empty: say how the issue was resolved.');
  ticket.status = 'closed';
  ticket.resolution = args.resolution;
  return { state: next, result: { ticket: ticketView(ticket) } };
};

const escalate_ticket: ToolHandler<SupportState> = (
  args: { ticket_id: string; reason: string; escalate_to: EscalationTarget },
  state,
) => {
  if (!TARGETS.includes(args.escalate_to)) throw new ToolError(`escalate_to must be one of ${TARGETS.join(', ')}.`);
  const { next, ticket } = editable(state, args.ticket_id, 'escalated');
  if (blank(args.reason)) throw new ToolError('reason must not be empty: say why the ticket is escalated.');
  // A ticket sent back from a tier (status changed since) may go to that tier again; only a live duplicate is refused.
  if (ticket.status === 'escalated' && ticket.escalated_to === args.escalate_to) {
    throw new ToolError(`Ticket ${ticket.id} is already escalated to ${args.escalate_to}.`);
  }
  ticket.status = 'escalated';
  ticket.escalated_to = args.escalate_to;
  ticket.escalation_reason = args.reason;
  ticket.notes.push(`Escalated to ${args.escalate_to}: ${args.reason}`);
  return { state: next, result: { ticket: ticketView(ticket) } };
};

/** Query words, lower-cased, without the punctuation around them ("policy?" finds "policy"). */
function queryWords(query: string): string[] {
  const words = query
    .toLowerCase()
    .split(/\s+/)
    .map((w) => w.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, ''))
    .filter((w) => w !== '');
  return [...new Set(words)];
}

const search_knowledge_base: ToolHandler<SupportState> = (args: { query: string; category?: string }, state) => {
  const words = queryWords(args.query);
  const category = args.category?.trim().toLowerCase();
  const scored: { article: Article; score: number }[] = [];
  for (const article of state.knowledge_base) {
    if (category && article.category.trim().toLowerCase() !== category) continue;
    const text = `${article.title}\n${article.body}`.toLowerCase();
    const score = words.filter((w) => text.includes(w)).length;
    if (score > 0) scored.push({ article, score });
  }
  // Array.prototype.sort is stable: equal scores keep knowledge-base order.
  scored.sort((a, b) => b.score - a.score);
  const articles = scored.map(({ article: a }) => ({ id: a.id, title: a.title, category: a.category, body: a.body }));
  return { result: { articles } };
};

const list_open_tickets: ToolHandler<SupportState> = (args: { priority?: Priority; customer_id?: string }, state) => {
  const tickets = state.tickets
    .filter(
      (t) =>
        t.status !== 'closed' &&
        (args.priority === undefined || t.priority === args.priority) &&
        (args.customer_id === undefined || t.customer_id === args.customer_id),
    )
    .map((t) => {
      const view: Record<string, unknown> = { id: t.id, customer_id: t.customer_id, subject: t.subject, priority: t.priority, status: t.status };
      if (t.escalated_to !== undefined) view.escalated_to = t.escalated_to;
      return view;
    });
  return { result: { tickets } };
};

const find_customer: ToolHandler<SupportState> = (args: { name?: string; email?: string }, state) => ({
  result: {
    customers: findCustomers(state.customers, args).map((c) => ({
      id: c.id,
      name: c.name,
      ...(c.email !== undefined ? { email: c.email } : {}),
      ...(c.plan !== undefined ? { plan: c.plan } : {}),
      open_tickets: state.tickets.filter((t) => t.customer_id === c.id && t.status !== 'closed').map((t) => t.id),
    })),
  },
});

export const tools: Record<string, ToolHandler<SupportState>> = {
  find_customer,
  create_ticket,
  update_ticket,
  close_ticket,
  escalate_ticket,
  search_knowledge_base,
  list_open_tickets,
};
