/** The support state (schemas/servers/support.json `state_schema`) with every default filled in: customers, tickets, knowledge base. */

export type TicketStatus = 'open' | 'in_progress' | 'pending' | 'escalated' | 'closed';
export type Priority = 'low' | 'medium' | 'high' | 'urgent';
export type EscalationTarget = 'tier2' | 'tier3' | 'engineering' | 'billing' | 'management';

interface Customer {
  id: string;
  name: string;
  email?: string;
  plan?: 'standard' | 'premium' | 'enterprise';
}

export interface Ticket {
  id: string;
  customer_id: string;
  subject: string;
  description: string;
  priority: Priority;
  status: TicketStatus;
  notes: string[];
  escalated_to?: EscalationTarget;
  escalation_reason?: string;
  resolution?: string;
}

export interface Article {
  id: string;
  title: string;
  category: string;
  body: string;
}

export interface SupportState {
  customers: Customer[];
  tickets: Ticket[];
  knowledge_base: Article[];
}

type RawTicket = Omit<Ticket, 'status' | 'notes'> & Partial<Pick<Ticket, 'status' | 'notes'>>;

export function normalizeState(state: unknown): SupportState {
  const raw = (state ?? {}) as { customers?: Customer[]; tickets?: RawTicket[]; knowledge_base?: Article[] };
  return {
    customers: (raw.customers ?? []).map((c) => ({ ...c })),
    tickets: (raw.tickets ?? []).map((t) => ({ ...t, status: t.status ?? 'open', notes: [...(t.notes ?? [])] })),
    knowledge_base: (raw.knowledge_base ?? []).map((a) => ({ ...a })),
  };
}
