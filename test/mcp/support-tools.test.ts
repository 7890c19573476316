import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeState, type SupportState } from '../../server/src/mcp/support/state.ts';
import { tools } from '../../server/src/mcp/support/tools.ts';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { assertRefuses, callOnce, testFixtureTasks } from './harness.ts';

const NS = 'support';
type State = SupportState;

/** A call that must succeed, on the support server seeded with `state`: its reply and the state it leaves. */
const call = (name: string, args: Record<string, unknown>, state: State) => callOnce<State>(NS, state, name, args);
const refuses = (name: string, args: Record<string, unknown>, state: State, message: RegExp) => assertRefuses(NS, state, name, args, message);

const seed = (): State =>
  normalizeState({
    customers: [
      { id: 'C-101', name: 'Ana Lopez', plan: 'premium' },
      { id: 'C-102', name: 'Ben Okafor' },
    ],
    tickets: [
      { id: 'T-1001', customer_id: 'C-101', subject: 'Login fails', description: 'Cannot log in', priority: 'high' },
      {
        id: 'T-1003',
        customer_id: 'C-102',
        subject: 'Refund missing',
        description: 'Refund not received',
        priority: 'medium',
        status: 'in_progress',
        notes: ['Customer called'],
      },
      { id: 'T-0999', customer_id: 'C-101', subject: 'Old', description: 'Old issue', priority: 'low', status: 'closed', resolution: 'Fixed' },
      {
        id: 'T-1002',
        customer_id: 'C-101',
        subject: 'App crash',
        description: 'Crashes on start',
        priority: 'urgent',
        status: 'escalated',
        notes: ['Escalated to engineering: crash'],
        escalated_to: 'engineering',
        escalation_reason: 'crash',
      },
    ],
    knowledge_base: [
      { id: 'KB-3', title: 'Resetting your password', category: 'account', body: 'Use the reset link on the login page.' },
      { id: 'KB-12', title: 'Refund policy', category: 'Billing', body: 'Refunds take up to 10 business days.' },
      { id: 'KB-14', title: 'Invoices', category: 'billing', body: 'Download invoices; a refund shows as a credit note.' },
    ],
  });

const ticket = (s: State, id: string) => s.tickets.find((t) => t.id === id);

test('there is one handler per declared tool', async () => {
  assert.deepEqual(Object.keys(tools).sort(), [...(await loadRegistry()).get(NS)!.tools.keys()].sort());
});

test('create_ticket opens a ticket numbered one above the highest, with no notes', async () => {
  const out = await call('create_ticket', { customer_id: 'C-102', subject: 'Charged twice', description: 'Two charges in March', priority: 'high' }, seed());
  const created = {
    id: 'T-1004',
    customer_id: 'C-102',
    subject: 'Charged twice',
    description: 'Two charges in March',
    priority: 'high',
    status: 'open',
    notes: [],
  };
  assert.deepEqual(out.result, { ticket: created });
  assert.deepEqual(out.state!.tickets.at(-1), created);
  assert.equal(out.state!.tickets.length, 5);
});

test('the first ticket of an empty help desk is T-1001', async () => {
  const empty = normalizeState({ customers: [{ id: 'C-1', name: 'Ana' }] });
  const out = await call('create_ticket', { customer_id: 'C-1', subject: 'Hi', description: 'Hello', priority: 'low' }, empty);
  assert.equal(out.state!.tickets[0]!.id, 'T-1001');
});

test('create_ticket refuses an unknown customer and a blank subject or description', async () => {
  await refuses('create_ticket', { customer_id: 'C-999', subject: 'S', description: 'D', priority: 'low' }, seed(), /Unknown customer id "C-999"/);
  await refuses('create_ticket', { customer_id: 'C-101', subject: ' ', description: 'D', priority: 'low' }, seed(), /subject must not be empty/);
  await refuses('create_ticket', { customer_id: 'C-101', subject: 'S', description: '\t', priority: 'low' }, seed(), /description must not be empty/);
});

test('update_ticket changes only the fields given and appends a note', async () => {
  const out = await call('update_ticket', { ticket_id: 'T-1003', note: 'Checked with the bank' }, seed());
  assert.deepEqual(ticket(out.state!, 'T-1003'), {
    id: 'T-1003',
    customer_id: 'C-102',
    subject: 'Refund missing',
    description: 'Refund not received',
    priority: 'medium',
    status: 'in_progress',
    notes: ['Customer called', 'Checked with the bank'],
  });
  const both = await call('update_ticket', { ticket_id: 'T-1001', status: 'pending', priority: 'urgent' }, seed());
  assert.equal(ticket(both.state!, 'T-1001')!.status, 'pending');
  assert.equal(ticket(both.state!, 'T-1001')!.priority, 'urgent');
  assert.deepEqual(ticket(both.state!, 'T-1001')!.notes, []);
  assert.deepEqual((both.result as { ticket: unknown }).ticket, ticket(both.state!, 'T-1001'));
});

test('update_ticket refuses an empty update, an unknown ticket and a closed one', async () => {
  await refuses('update_ticket', { ticket_id: 'T-1001' }, seed(), /at least one of status, priority, note/);
  await refuses('update_ticket', { ticket_id: 'T-5555', note: 'x' }, seed(), /Unknown ticket id "T-5555"/);
  await refuses('update_ticket', { ticket_id: 'T-0999', priority: 'high' }, seed(), /T-0999 is closed and cannot be updated/);
  await refuses('update_ticket', { ticket_id: 'T-1001', note: '  ' }, seed(), /note must not be empty/);
});

test('close_ticket closes with a resolution; a closed ticket cannot be closed again', async () => {
  const out = await call('close_ticket', { ticket_id: 'T-1001', resolution: 'Password reset sent' }, seed());
  assert.equal(ticket(out.state!, 'T-1001')!.status, 'closed');
  assert.equal(ticket(out.state!, 'T-1001')!.resolution, 'Password reset sent');
  await refuses('close_ticket', { ticket_id: 'T-1001', resolution: 'again' }, out.state!, /closed and cannot be closed again/);
  await refuses('close_ticket', { ticket_id: 'T-5555', resolution: 'x' }, seed(), /Unknown ticket id/);
  await refuses('close_ticket', { ticket_id: 'T-1001', resolution: ' ' }, seed(), /resolution must not be empty/);
});

test('escalate_ticket records target and reason and appends the escalation note', async () => {
  const out = await call('escalate_ticket', { ticket_id: 'T-1003', reason: 'Refund overdue', escalate_to: 'billing' }, seed());
  const t = ticket(out.state!, 'T-1003')!;
  assert.equal(t.status, 'escalated');
  assert.equal(t.escalated_to, 'billing');
  assert.equal(t.escalation_reason, 'Refund overdue');
  assert.deepEqual(t.notes, ['Customer called', 'Escalated to billing: Refund overdue']);
  // Escalating again to another target is allowed and moves the ticket there.
  const again = await call('escalate_ticket', { ticket_id: 'T-1003', reason: 'Needs a manager', escalate_to: 'management' }, out.state!);
  assert.equal(ticket(again.state!, 'T-1003')!.escalated_to, 'management');
  assert.equal(ticket(again.state!, 'T-1003')!.notes.length, 3);
});

test('escalate_ticket refuses the same target twice, a closed or unknown ticket, and a blank reason', async () => {
  await refuses('escalate_ticket', { ticket_id: 'T-1002', reason: 'again', escalate_to: 'engineering' }, seed(), /already escalated to engineering/);
  await refuses('escalate_ticket', { ticket_id: 'T-0999', reason: 'r', escalate_to: 'tier2' }, seed(), /T-0999 is closed and cannot be escalated/);
  await refuses('escalate_ticket', { ticket_id: 'T-5555', reason: 'r', escalate_to: 'tier2' }, seed(), /Unknown ticket id/);
  await refuses('escalate_ticket', { ticket_id: 'T-1001', reason: ' ', escalate_to: 'tier2' }, seed(), /reason must not be empty/);
});

test('a ticket taken back from a tier can be escalated to it again', async () => {
  const back = (await call('update_ticket', { ticket_id: 'T-1002', status: 'in_progress' }, seed())).state!;
  const out = await call('escalate_ticket', { ticket_id: 'T-1002', reason: 'Crash is back', escalate_to: 'engineering' }, back);
  assert.equal(ticket(out.state!, 'T-1002')!.status, 'escalated');
  assert.equal(ticket(out.state!, 'T-1002')!.escalation_reason, 'Crash is back');
});

test('search_knowledge_base matches any query word in title or body, ranked by words matched', async () => {
  const out = await call('search_knowledge_base', { query: 'Refund policy?' }, seed());
  assert.equal(out.changed, false);
  assert.deepEqual(out.result, {
    articles: [
      { id: 'KB-12', title: 'Refund policy', category: 'Billing', body: 'Refunds take up to 10 business days.' },
      { id: 'KB-14', title: 'Invoices', category: 'billing', body: 'Download invoices; a refund shows as a credit note.' },
    ],
  });
  const ids = async (q: string, category?: string) =>
    ((await call('search_knowledge_base', category === undefined ? { query: q } : { query: q, category }, seed())).result as { articles: { id: string }[] }).articles.map(
      (a) => a.id,
    );
  assert.deepEqual(await ids('refund', 'BILLING'), ['KB-12', 'KB-14']);
  assert.deepEqual(await ids('refund', 'account'), []);
  assert.deepEqual(await ids('PASSWORD reset'), ['KB-3']);
  assert.deepEqual(await ids('shipping'), []);
});

test('list_open_tickets lists tickets that are not closed, with optional filters that combine', async () => {
  const out = await call('list_open_tickets', {}, seed());
  assert.equal(out.changed, false);
  assert.deepEqual(out.result, {
    tickets: [
      { id: 'T-1001', customer_id: 'C-101', subject: 'Login fails', priority: 'high', status: 'open' },
      { id: 'T-1003', customer_id: 'C-102', subject: 'Refund missing', priority: 'medium', status: 'in_progress' },
      { id: 'T-1002', customer_id: 'C-101', subject: 'App crash', priority: 'urgent', status: 'escalated', escalated_to: 'engineering' },
    ],
  });
  const ids = async (args: Record<string, unknown>) => ((await call('list_open_tickets', args, seed())).result as { tickets: { id: string }[] }).tickets.map((t) => t.id);
  assert.deepEqual(await ids({ customer_id: 'C-101' }), ['T-1001', 'T-1002']);
  assert.deepEqual(await ids({ customer_id: 'C-101', priority: 'urgent' }), ['T-1002']);
  assert.deepEqual(await ids({ priority: 'low' }), []);
});

// Every task of the namespace: its reference solutions, replayed through its server, pass; its counterexamples
// fail. A refused call is recorded and the sequence goes on, as an agent's would.
testFixtureTasks(NS);
