import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { normalizeState, type SupportState } from '../../server/src/mcp/support/index.ts';
import { tools } from '../../server/src/mcp/support/tools.ts';
import { ToolError, type ToolOutcome } from '../../server/src/mcp/namespace.ts';
import { loadRegistry, type NamespaceInfo, type Registry } from '../../server/src/mcp/registry.ts';
import { packageRoot } from '../../server/src/paths.ts';
import { evaluate, stateLeafEvaluator } from '../../server/src/predicates/evaluate.ts';
import { parsePredicate } from '../../server/src/predicates/tree.ts';
import { createAjv } from '../../server/src/tasks/ajv.ts';

const NS = 'support';
type State = SupportState;
const ajv = createAjv();
let registry: Registry;
let info: NamespaceInfo;
before(async () => {
  registry = await loadRegistry();
  info = registry.get(NS)!;
});

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/**
 * Calls a handler as the harness would (schema-valid arguments) and checks what holds for every call: the input
 * state is untouched (frozen, and equal to a copy taken before), the result is plain JSON, and a new state
 * passes the state schema and is already normalised.
 */
function call(name: string, args: Record<string, unknown>, state: State): ToolOutcome<State> {
  const handler = tools[name];
  assert.ok(handler, `no handler for ${name}`);
  const declared = info.tools.get(name);
  assert.ok(declared, `${name} is not declared`);
  assert.ok(declared.validateInput(args), `${name} ${JSON.stringify(args)}: ${ajv.errorsText(declared.validateInput.errors)}`);
  const copy = structuredClone(state);
  deepFreeze(state);
  let outcome: ToolOutcome<State>;
  try {
    outcome = handler(args, state);
  } finally {
    assert.deepEqual(state, copy, `${name} changed its input state`);
  }
  assert.deepEqual(JSON.parse(JSON.stringify(outcome.result)), outcome.result, `${name}: result is not plain JSON`);
  if (outcome.state !== undefined) {
    assert.ok(info.validateState(outcome.state), `${name}: new state fails the schema: ${ajv.errorsText(info.validateState.errors)}`);
    assert.deepEqual(normalizeState(structuredClone(outcome.state)), outcome.state, `${name}: new state is not normalised`);
  }
  return outcome;
}

function refuses(name: string, args: Record<string, unknown>, state: State, message: RegExp): void {
  assert.throws(
    () => call(name, args, state),
    (error: unknown) => error instanceof ToolError && message.test(error.message),
  );
}

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

test('there is one handler per declared tool', () => {
  assert.deepEqual(Object.keys(tools).sort(), [...info.tools.keys()].sort());
});

test('create_ticket opens a ticket numbered one above the highest, with no notes', () => {
  const out = call('create_ticket', { customer_id: 'C-102', subject: 'Charged twice', description: 'Two charges in March', priority: 'high' }, seed());
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

test('the first ticket of an empty help desk is T-1001', () => {
  const empty = normalizeState({ customers: [{ id: 'C-1', name: 'Ana' }] });
  const out = call('create_ticket', { customer_id: 'C-1', subject: 'Hi', description: 'Hello', priority: 'low' }, empty);
  assert.equal(out.state!.tickets[0]!.id, 'T-1001');
});

test('create_ticket refuses an unknown customer and a blank subject or description', () => {
  refuses('create_ticket', { customer_id: 'C-999', subject: 'S', description: 'D', priority: 'low' }, seed(), /Unknown customer id "C-999"/);
  refuses('create_ticket', { customer_id: 'C-101', subject: ' ', description: 'D', priority: 'low' }, seed(), /subject must not be empty/);
  refuses('create_ticket', { customer_id: 'C-101', subject: 'S', description: '\t', priority: 'low' }, seed(), /description must not be empty/);
});

test('update_ticket changes only the fields given and appends a note', () => {
  const out = call('update_ticket', { ticket_id: 'T-1003', note: 'Checked with the bank' }, seed());
  assert.deepEqual(ticket(out.state!, 'T-1003'), {
    id: 'T-1003',
    customer_id: 'C-102',
    subject: 'Refund missing',
    description: 'Refund not received',
    priority: 'medium',
    status: 'in_progress',
    notes: ['Customer called', 'Checked with the bank'],
  });
  const both = call('update_ticket', { ticket_id: 'T-1001', status: 'pending', priority: 'urgent' }, seed());
  assert.equal(ticket(both.state!, 'T-1001')!.status, 'pending');
  assert.equal(ticket(both.state!, 'T-1001')!.priority, 'urgent');
  assert.deepEqual(ticket(both.state!, 'T-1001')!.notes, []);
  assert.deepEqual((both.result as { ticket: unknown }).ticket, ticket(both.state!, 'T-1001'));
});

test('update_ticket refuses an empty update, an unknown ticket and a closed one', () => {
  refuses('update_ticket', { ticket_id: 'T-1001' }, seed(), /at least one of status, priority, note/);
  refuses('update_ticket', { ticket_id: 'T-5555', note: 'x' }, seed(), /Unknown ticket id "T-5555"/);
  refuses('update_ticket', { ticket_id: 'T-0999', priority: 'high' }, seed(), /T-0999 is closed and cannot be updated/);
  refuses('update_ticket', { ticket_id: 'T-1001', note: '  ' }, seed(), /note must not be empty/);
});

test('close_ticket closes with a resolution; a closed ticket cannot be closed again', () => {
  const out = call('close_ticket', { ticket_id: 'T-1001', resolution: 'Password reset sent' }, seed());
  assert.equal(ticket(out.state!, 'T-1001')!.status, 'closed');
  assert.equal(ticket(out.state!, 'T-1001')!.resolution, 'Password reset sent');
  refuses('close_ticket', { ticket_id: 'T-1001', resolution: 'again' }, out.state!, /closed and cannot be closed again/);
  refuses('close_ticket', { ticket_id: 'T-5555', resolution: 'x' }, seed(), /Unknown ticket id/);
  refuses('close_ticket', { ticket_id: 'T-1001', resolution: ' ' }, seed(), /resolution must not be empty/);
});

test('escalate_ticket records target and reason and appends the escalation note', () => {
  const out = call('escalate_ticket', { ticket_id: 'T-1003', reason: 'Refund overdue', escalate_to: 'billing' }, seed());
  const t = ticket(out.state!, 'T-1003')!;
  assert.equal(t.status, 'escalated');
  assert.equal(t.escalated_to, 'billing');
  assert.equal(t.escalation_reason, 'Refund overdue');
  assert.deepEqual(t.notes, ['Customer called', 'Escalated to billing: Refund overdue']);
  // Escalating again to another target is allowed and moves the ticket there.
  const again = call('escalate_ticket', { ticket_id: 'T-1003', reason: 'Needs a manager', escalate_to: 'management' }, out.state!);
  assert.equal(ticket(again.state!, 'T-1003')!.escalated_to, 'management');
  assert.equal(ticket(again.state!, 'T-1003')!.notes.length, 3);
});

test('escalate_ticket refuses the same target twice, a closed or unknown ticket, and a blank reason', () => {
  refuses('escalate_ticket', { ticket_id: 'T-1002', reason: 'again', escalate_to: 'engineering' }, seed(), /already escalated to engineering/);
  refuses('escalate_ticket', { ticket_id: 'T-0999', reason: 'r', escalate_to: 'tier2' }, seed(), /T-0999 is closed and cannot be escalated/);
  refuses('escalate_ticket', { ticket_id: 'T-5555', reason: 'r', escalate_to: 'tier2' }, seed(), /Unknown ticket id/);
  refuses('escalate_ticket', { ticket_id: 'T-1001', reason: ' ', escalate_to: 'tier2' }, seed(), /reason must not be empty/);
});

test('a ticket taken back from a tier can be escalated to it again', () => {
  const back = call('update_ticket', { ticket_id: 'T-1002', status: 'in_progress' }, seed()).state!;
  const out = call('escalate_ticket', { ticket_id: 'T-1002', reason: 'Crash is back', escalate_to: 'engineering' }, back);
  assert.equal(ticket(out.state!, 'T-1002')!.status, 'escalated');
  assert.equal(ticket(out.state!, 'T-1002')!.escalation_reason, 'Crash is back');
});

test('search_knowledge_base matches any query word in title or body, ranked by words matched', () => {
  const out = call('search_knowledge_base', { query: 'Refund policy?' }, seed());
  assert.equal(out.state, undefined);
  assert.deepEqual(out.result, {
    articles: [
      { id: 'KB-12', title: 'Refund policy', category: 'Billing', body: 'Refunds take up to 10 business days.' },
      { id: 'KB-14', title: 'Invoices', category: 'billing', body: 'Download invoices; a refund shows as a credit note.' },
    ],
  });
  const ids = (q: string, category?: string) =>
    (call('search_knowledge_base', category === undefined ? { query: q } : { query: q, category }, seed()).result as { articles: { id: string }[] }).articles.map(
      (a) => a.id,
    );
  assert.deepEqual(ids('refund', 'BILLING'), ['KB-12', 'KB-14']);
  assert.deepEqual(ids('refund', 'account'), []);
  assert.deepEqual(ids('PASSWORD reset'), ['KB-3']);
  assert.deepEqual(ids('shipping'), []);
});

test('list_open_tickets lists tickets that are not closed, with optional filters that combine', () => {
  const out = call('list_open_tickets', {}, seed());
  assert.equal(out.state, undefined);
  assert.deepEqual(out.result, {
    tickets: [
      { id: 'T-1001', customer_id: 'C-101', subject: 'Login fails', priority: 'high', status: 'open' },
      { id: 'T-1003', customer_id: 'C-102', subject: 'Refund missing', priority: 'medium', status: 'in_progress' },
      { id: 'T-1002', customer_id: 'C-101', subject: 'App crash', priority: 'urgent', status: 'escalated', escalated_to: 'engineering' },
    ],
  });
  const ids = (args: Record<string, unknown>) => (call('list_open_tickets', args, seed()).result as { tickets: { id: string }[] }).tickets.map((t) => t.id);
  assert.deepEqual(ids({ customer_id: 'C-101' }), ['T-1001', 'T-1002']);
  assert.deepEqual(ids({ customer_id: 'C-101', priority: 'urgent' }), ['T-1002']);
  assert.deepEqual(ids({ priority: 'low' }), []);
});

// Every task of the namespace: its reference solutions, replayed through the handlers, pass; its
// counterexamples fail. A refused call is recorded and the sequence goes on, as an agent's would.

interface Step {
  tool?: string;
  arguments?: Record<string, unknown>;
  answer?: string;
}
interface Task {
  id: string;
  initial_state: Record<string, unknown>;
  success_predicate: unknown;
  reference_solutions: Step[][];
  counterexamples?: Step[][];
}

function replay(task: Task, steps: Step[]): { value: boolean | undefined; refusals: string[] } {
  let state = normalizeState(structuredClone(task.initial_state[NS]));
  let answer: string | undefined;
  const refusals: string[] = [];
  for (const step of steps) {
    if (step.tool === undefined) {
      answer = step.answer;
      continue;
    }
    const [ns, name] = step.tool.split('.');
    assert.equal(ns, NS, `${task.id}: ${step.tool} is not a ${NS} tool`);
    try {
      const out = call(name!, step.arguments ?? {}, state);
      if (out.state !== undefined) state = out.state;
    } catch (error) {
      if (!(error instanceof ToolError)) throw error;
      refusals.push(`${step.tool}: ${error.message}`);
    }
  }
  const verdict = evaluate(parsePredicate(task.success_predicate, ['success_predicate']), stateLeafEvaluator(registry, { [NS]: state }, answer));
  return { value: verdict.value, refusals };
}

const tasksDir = join(packageRoot(), 'test', 'fixtures', 'tasks', NS);
const taskFiles = readdirSync(tasksDir).filter((f) => f.endsWith('.json')).sort();

test('the namespace has tasks to replay', () => {
  assert.ok(taskFiles.length > 0);
});

for (const file of taskFiles) {
  const task = JSON.parse(readFileSync(join(tasksDir, file), 'utf8')) as Task;
  test(`${task.id}: reference solutions pass and counterexamples fail`, () => {
    task.reference_solutions.forEach((steps, i) => {
      const run = replay(task, steps);
      assert.equal(run.value, true, `reference solution ${i} fails (refusals: ${run.refusals.join(' | ') || 'none'})`);
    });
    (task.counterexamples ?? []).forEach((steps, i) => {
      assert.equal(replay(task, steps).value, false, `counterexample ${i} passes`);
    });
  });
}
