import { test } from 'node:test';
import assert from 'node:assert/strict';
import support from '../../server/src/mcp/support/index.ts';
import { normalizeState } from '../../server/src/mcp/support/state.ts';

const state = normalizeState({
  customers: [{ id: 'C-102', name: 'Raj Mehta' }, { id: 'C-201', name: 'Dana Lee' }],
  tickets: [
    { id: 'T-1001', customer_id: 'C-102', subject: 'Password reset', description: 'Cannot reset password.', priority: 'medium', status: 'closed', resolution: 'Sent a new Reset Link.' },
    {
      id: 'T-1003',
      customer_id: 'C-201',
      subject: 'Refund not received',
      description: 'No refund after three weeks.',
      priority: 'high',
      status: 'escalated',
      notes: ['Per KB-12 refunds take 10 days.', 'Escalated to billing: overdue refund'],
      escalated_to: 'billing',
      escalation_reason: 'Overdue refund',
    },
    // status and notes omitted: the defaults apply
    { id: 'T-1004', customer_id: 'C-201', subject: 'Login loop', description: 'Redirect loop on login.', priority: 'urgent' },
  ],
  knowledge_base: [{ id: 'KB-12', title: 'Refund processing times', category: 'billing', body: '10 business days.' }],
});
const check = (name: string, args: Record<string, unknown>, s = state): boolean => {
  const predicate = support.predicates[name];
  assert.ok(predicate, name);
  const verdict = predicate(args, { state: s, answer: undefined });
  JSON.stringify(verdict.evidence);
  return verdict.value;
};
const empty = normalizeState(undefined);

test('normalizeState defaults status to open and notes to none', () => {
  assert.deepEqual(empty, { customers: [], tickets: [], knowledge_base: [] });
  const t = state.tickets.find((x) => x.id === 'T-1004');
  assert.equal(t?.status, 'open');
  assert.deepEqual(t?.notes, []);
});

test('ticketExists: every filter must hold on the same ticket', () => {
  assert.equal(check('ticketExists', { customer_id: 'C-102', subject_contains: 'password RESET', priority: 'medium', status: 'closed', resolution_contains: 'reset link' }), true);
  assert.equal(check('ticketExists', { customer_id: 'C-102', priority: 'high' }), false);
  assert.equal(check('ticketExists', { customer_id: 'C-201', status: 'open' }), true);
  // T-1003 has the note, T-1004 is open: no single ticket has both.
  assert.equal(check('ticketExists', { customer_id: 'C-201', note_contains: 'kb-12', status: 'open' }), false);
  assert.equal(check('ticketExists', { escalated_to: 'billing', description_contains: 'three weeks' }), true);
  assert.equal(check('ticketExists', { escalated_to: 'tier2' }), false);
  assert.equal(check('ticketExists', { ticket_id: 'T-1004' }), true);
  assert.equal(check('ticketExists', { ticket_id: 'T-9999' }), false);
  assert.equal(check('ticketExists', {}, empty), false);
});

test('ticketStatus and ticketPriority', () => {
  assert.equal(check('ticketStatus', { ticket_id: 'T-1003', status: 'escalated' }), true);
  assert.equal(check('ticketStatus', { ticket_id: 'T-1003', status: 'open' }), false);
  assert.equal(check('ticketStatus', { ticket_id: 'T-1004', status: 'open' }), true);
  assert.equal(check('ticketStatus', { ticket_id: 'T-9999', status: 'open' }), false);
  assert.equal(check('ticketPriority', { ticket_id: 'T-1004', priority: 'urgent' }), true);
  assert.equal(check('ticketPriority', { ticket_id: 'T-1004', priority: 'high' }), false);
  assert.equal(check('ticketPriority', { ticket_id: 'T-9999', priority: 'high' }), false);
});

test('ticketEscalated: target and reason', () => {
  assert.equal(check('ticketEscalated', { ticket_id: 'T-1003' }), true);
  assert.equal(check('ticketEscalated', { ticket_id: 'T-1003', escalate_to: 'billing', reason_contains: 'overdue' }), true);
  assert.equal(check('ticketEscalated', { ticket_id: 'T-1003', escalate_to: 'tier2' }), false);
  assert.equal(check('ticketEscalated', { ticket_id: 'T-1003', reason_contains: 'angry' }), false);
  assert.equal(check('ticketEscalated', { ticket_id: 'T-1004' }), false);
  assert.equal(check('ticketEscalated', { ticket_id: 'T-9999' }), false);
});

test('ticketHasNote', () => {
  assert.equal(check('ticketHasNote', { ticket_id: 'T-1003', contains: 'kb-12' }), true);
  assert.equal(check('ticketHasNote', { ticket_id: 'T-1003', contains: 'KB-7' }), false);
  assert.equal(check('ticketHasNote', { ticket_id: 'T-1004', contains: 'a' }), false);
});

test('ticketClosed: status closed, optional resolution text', () => {
  assert.equal(check('ticketClosed', { ticket_id: 'T-1001' }), true);
  assert.equal(check('ticketClosed', { ticket_id: 'T-1001', resolution_contains: 'reset link' }), true);
  assert.equal(check('ticketClosed', { ticket_id: 'T-1001', resolution_contains: 'refund' }), false);
  assert.equal(check('ticketClosed', { ticket_id: 'T-1003' }), false);
  assert.equal(check('ticketClosed', { ticket_id: 'T-9999' }), false);
});

test('ticketCount', () => {
  assert.equal(check('ticketCount', { customer_id: 'C-201', equals: 2 }), true);
  assert.equal(check('ticketCount', { customer_id: 'C-201', equals: 1 }), false);
  assert.equal(check('ticketCount', { status: 'closed', max: 1 }), true);
  assert.equal(check('ticketCount', { priority: 'low', min: 1 }), false);
  assert.equal(check('ticketCount', { equals: 0 }, empty), true);
});

test('state schema: accepts {} and its examples, rejects a malformed state', async () => {
  const { loadRegistry } = await import('../../server/src/mcp/registry.ts');
  const info = (await loadRegistry()).get('support');
  assert.ok(info);
  assert.equal(info.validateState({}), true);
  for (const example of (info.server.state_schema.examples as unknown[]) ?? []) assert.equal(info.validateState(example), true, JSON.stringify(example));
  assert.equal(info.validateState({ tickets: [{ id: "T-1", customer_id: "C-1", subject: "s", description: "d", priority: "critical" }] }), false);
});
