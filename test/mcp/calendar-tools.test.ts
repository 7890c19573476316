import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { normalizeState, type CalendarState } from '../../server/src/mcp/calendar/index.ts';
import { tools } from '../../server/src/mcp/calendar/tools.ts';
import { ToolError, type ToolOutcome } from '../../server/src/mcp/namespace.ts';
import { loadRegistry, type NamespaceInfo, type Registry } from '../../server/src/mcp/registry.ts';
import { packageRoot } from '../../server/src/paths.ts';
import { evaluate, stateLeafEvaluator } from '../../server/src/predicates/evaluate.ts';
import { parsePredicate } from '../../server/src/predicates/tree.ts';
import { createAjv } from '../../server/src/tasks/ajv.ts';

const NS = 'calendar';
type State = CalendarState;
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
    meetings: { '2026-01-02': { '11:00': '1:1 with Ana', '10:00': 'Standup' }, '2026-01-05': { '09:00': 'Planning' } },
    working_hours: { start: '09:00', end: '18:00' },
  });

test('there is one handler per declared tool', () => {
  assert.deepEqual(Object.keys(tools).sort(), [...info.tools.keys()].sort());
});

test('book_meeting books a free slot and keeps every other meeting', () => {
  const out = call('book_meeting', { date: '2026-01-02', time: '12:00', topic: 'Design sync' }, seed());
  assert.deepEqual(out.result, { status: 'booked', meeting: { date: '2026-01-02', time: '12:00', topic: 'Design sync' } });
  assert.deepEqual(out.state, {
    meetings: {
      '2026-01-02': { '10:00': 'Standup', '11:00': '1:1 with Ana', '12:00': 'Design sync' },
      '2026-01-05': { '09:00': 'Planning' },
    },
    working_hours: { start: '09:00', end: '18:00' },
  });
  // Dates and times come out in order, whatever order they were booked in.
  assert.deepEqual(Object.keys(out.state!.meetings['2026-01-02']!), ['10:00', '11:00', '12:00']);
});

test('book_meeting on an empty calendar creates the day', () => {
  const out = call('book_meeting', { date: '2026-01-01', time: '09:00', topic: 'Review' }, normalizeState({}));
  assert.deepEqual(out.state, { meetings: { '2026-01-01': { '09:00': 'Review' } } });
});

test('book_meeting refuses a taken slot, naming the meeting there, and overwrites nothing', () => {
  refuses('book_meeting', { date: '2026-01-02', time: '10:00', topic: 'Design sync' }, seed(), /already taken by "Standup"/);
});

test('book_meeting keeps to the working hours: start inclusive, end exclusive', () => {
  refuses('book_meeting', { date: '2026-01-02', time: '08:59', topic: 'Early' }, seed(), /outside the working hours.*09:00.*18:00/);
  refuses('book_meeting', { date: '2026-01-02', time: '18:00', topic: 'Late' }, seed(), /outside the working hours/);
  assert.ok(call('book_meeting', { date: '2026-01-02', time: '09:00', topic: 'First' }, seed()).state);
  assert.ok(call('book_meeting', { date: '2026-01-02', time: '17:59', topic: 'Last' }, seed()).state);
  // Without working hours any time is bookable.
  assert.ok(call('book_meeting', { date: '2026-01-02', time: '23:30', topic: 'Night' }, normalizeState({})).state);
});

test('book_meeting refuses a blank topic and a date that does not exist', () => {
  refuses('book_meeting', { date: '2026-01-02', time: '12:00', topic: '   ' }, seed(), /topic must not be empty/);
  refuses('book_meeting', { date: '2026-02-30', time: '12:00', topic: 'Review' }, seed(), /not a calendar date/);
  refuses('book_meeting', { date: '2026-13-01', time: '12:00', topic: 'Review' }, seed(), /not a calendar date/);
  assert.ok(call('book_meeting', { date: '2028-02-29', time: '12:00', topic: 'Leap' }, seed()).state);
});

test('check_calendar lists a day in time order with the working hours, and changes nothing', () => {
  const out = call('check_calendar', { date: '2026-01-02' }, seed());
  assert.equal(out.state, undefined);
  assert.deepEqual(out.result, {
    date: '2026-01-02',
    meetings: [
      { time: '10:00', topic: 'Standup' },
      { time: '11:00', topic: '1:1 with Ana' },
    ],
    working_hours: { start: '09:00', end: '18:00' },
  });
  assert.deepEqual(call('check_calendar', { date: '2026-01-03' }, normalizeState({})).result, { date: '2026-01-03', meetings: [] });
});

test('cancel_meeting frees the slot and drops a day left empty', () => {
  const out = call('cancel_meeting', { date: '2026-01-05', time: '09:00' }, seed());
  assert.deepEqual(out.result, { status: 'cancelled', meeting: { date: '2026-01-05', time: '09:00', topic: 'Planning' } });
  assert.deepEqual(out.state!.meetings, { '2026-01-02': { '10:00': 'Standup', '11:00': '1:1 with Ana' } });
  const partial = call('cancel_meeting', { date: '2026-01-02', time: '10:00' }, seed());
  assert.deepEqual(partial.state!.meetings['2026-01-02'], { '11:00': '1:1 with Ana' });
  assert.deepEqual(partial.state!.working_hours, { start: '09:00', end: '18:00' });
});

test('cancel_meeting refuses an empty slot and says what is booked that day', () => {
  refuses('cancel_meeting', { date: '2026-01-02', time: '12:00' }, seed(), /No meeting is booked on 2026-01-02 at 12:00.*10:00 "Standup"/);
  refuses('cancel_meeting', { date: '2026-01-09', time: '12:00' }, seed(), /Nothing is booked that day/);
});

test('list_meetings lists an inclusive range in date and time order', () => {
  const out = call('list_meetings', { start_date: '2026-01-02', end_date: '2026-01-05' }, seed());
  assert.equal(out.state, undefined);
  assert.deepEqual(out.result, {
    start_date: '2026-01-02',
    end_date: '2026-01-05',
    meetings: [
      { date: '2026-01-02', time: '10:00', topic: 'Standup' },
      { date: '2026-01-02', time: '11:00', topic: '1:1 with Ana' },
      { date: '2026-01-05', time: '09:00', topic: 'Planning' },
    ],
  });
  const one = call('list_meetings', { start_date: '2026-01-05', end_date: '2026-01-05' }, seed()).result as { meetings: unknown[] };
  assert.equal(one.meetings.length, 1);
  const none = call('list_meetings', { start_date: '2026-01-03', end_date: '2026-01-04' }, seed()).result as { meetings: unknown[] };
  assert.deepEqual(none.meetings, []);
});

test('list_meetings refuses a range that ends before it starts', () => {
  refuses('list_meetings', { start_date: '2026-01-05', end_date: '2026-01-02' }, seed(), /start_date 2026-01-05 is after end_date 2026-01-02/);
});

test('the same call on the same state gives the same outcome', () => {
  const args = { date: '2026-01-02', time: '12:00', topic: 'Design sync' };
  assert.deepEqual(call('book_meeting', args, seed()), call('book_meeting', args, seed()));
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
