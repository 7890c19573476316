import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeState, type CalendarState } from '../../server/src/mcp/calendar/state.ts';
import { tools } from '../../server/src/mcp/calendar/tools.ts';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { assertRefuses, callOnce, testFixtureTasks } from './harness.ts';

const NS = 'calendar';
type State = CalendarState;

/** A call that must succeed, on the calendar server seeded with `state`: its reply and the state it leaves. */
const call = (name: string, args: Record<string, unknown>, state: State) => callOnce<State>(NS, state, name, args);
const refuses = (name: string, args: Record<string, unknown>, state: State, message: RegExp) => assertRefuses(NS, state, name, args, message);

const seed = (): State =>
  normalizeState({
    meetings: { '2026-01-02': { '11:00': '1:1 with Ana', '10:00': 'Standup' }, '2026-01-05': { '09:00': 'Planning' } },
    working_hours: { start: '09:00', end: '18:00' },
  });

test('there is one handler per declared tool', async () => {
  assert.deepEqual(Object.keys(tools).sort(), [...(await loadRegistry()).get(NS)!.tools.keys()].sort());
});

test('book_meeting books a free slot and keeps every other meeting', async () => {
  const out = await call('book_meeting', { date: '2026-01-02', time: '12:00', topic: 'Design sync' }, seed());
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

test('book_meeting on an empty calendar creates the day', async () => {
  const out = await call('book_meeting', { date: '2026-01-01', time: '09:00', topic: 'Review' }, normalizeState({}));
  assert.deepEqual(out.state, { meetings: { '2026-01-01': { '09:00': 'Review' } } });
});

test('book_meeting refuses a taken slot, naming the meeting there, and overwrites nothing', async () => {
  await refuses('book_meeting', { date: '2026-01-02', time: '10:00', topic: 'Design sync' }, seed(), /already taken by "Standup"/);
});

test('book_meeting keeps to the working hours: start inclusive, end exclusive', async () => {
  await refuses('book_meeting', { date: '2026-01-02', time: '08:59', topic: 'Early' }, seed(), /outside the working hours.*09:00.*18:00/);
  await refuses('book_meeting', { date: '2026-01-02', time: '18:00', topic: 'Late' }, seed(), /outside the working hours/);
  assert.ok((await call('book_meeting', { date: '2026-01-02', time: '09:00', topic: 'First' }, seed())).changed);
  assert.ok((await call('book_meeting', { date: '2026-01-02', time: '17:59', topic: 'Last' }, seed())).changed);
  // Without working hours any time is bookable.
  assert.ok((await call('book_meeting', { date: '2026-01-02', time: '23:30', topic: 'Night' }, normalizeState({}))).changed);
});

test('book_meeting refuses a blank topic and a date that does not exist', async () => {
  await refuses('book_meeting', { date: '2026-01-02', time: '12:00', topic: '   ' }, seed(), /topic must not be empty/);
  await refuses('book_meeting', { date: '2026-02-30', time: '12:00', topic: 'Review' }, seed(), /not a calendar date/);
  await refuses('book_meeting', { date: '2026-13-01', time: '12:00', topic: 'Review' }, seed(), /not a calendar date/);
  assert.ok((await call('book_meeting', { date: '2028-02-29', time: '12:00', topic: 'Leap' }, seed())).changed);
});

test('check_calendar lists a day in time order with the working hours, and changes nothing', async () => {
  const out = await call('check_calendar', { date: '2026-01-02' }, seed());
  assert.equal(out.changed, false);
  assert.deepEqual(out.result, {
    date: '2026-01-02',
    meetings: [
      { time: '10:00', topic: 'Standup' },
      { time: '11:00', topic: '1:1 with Ana' },
    ],
    working_hours: { start: '09:00', end: '18:00' },
  });
  assert.deepEqual((await call('check_calendar', { date: '2026-01-03' }, normalizeState({}))).result, { date: '2026-01-03', meetings: [] });
});

test('cancel_meeting frees the slot and drops a day left empty', async () => {
  const out = await call('cancel_meeting', { date: '2026-01-05', time: '09:00' }, seed());
  assert.deepEqual(out.result, { status: 'cancelled', meeting: { date: '2026-01-05', time: '09:00', topic: 'Planning' } });
  assert.deepEqual(out.state!.meetings, { '2026-01-02': { '10:00': 'Standup', '11:00': '1:1 with Ana' } });
  const partial = await call('cancel_meeting', { date: '2026-01-02', time: '10:00' }, seed());
  assert.deepEqual(partial.state!.meetings['2026-01-02'], { '11:00': '1:1 with Ana' });
  assert.deepEqual(partial.state!.working_hours, { start: '09:00', end: '18:00' });
});

test('cancel_meeting refuses an empty slot and says what is booked that day', async () => {
  await refuses('cancel_meeting', { date: '2026-01-02', time: '12:00' }, seed(), /No meeting is booked on 2026-01-02 at 12:00.*10:00 "Standup"/);
  await refuses('cancel_meeting', { date: '2026-01-09', time: '12:00' }, seed(), /Nothing is booked that day/);
});

test('list_meetings lists an inclusive range in date and time order', async () => {
  const out = await call('list_meetings', { start_date: '2026-01-02', end_date: '2026-01-05' }, seed());
  assert.equal(out.changed, false);
  assert.deepEqual(out.result, {
    start_date: '2026-01-02',
    end_date: '2026-01-05',
    meetings: [
      { date: '2026-01-02', time: '10:00', topic: 'Standup' },
      { date: '2026-01-02', time: '11:00', topic: '1:1 with Ana' },
      { date: '2026-01-05', time: '09:00', topic: 'Planning' },
    ],
  });
  const one = (await call('list_meetings', { start_date: '2026-01-05', end_date: '2026-01-05' }, seed())).result as { meetings: unknown[] };
  assert.equal(one.meetings.length, 1);
  const none = (await call('list_meetings', { start_date: '2026-01-03', end_date: '2026-01-04' }, seed())).result as { meetings: unknown[] };
  assert.deepEqual(none.meetings, []);
});

test('list_meetings refuses a range that ends before it starts', async () => {
  await refuses('list_meetings', { start_date: '2026-01-05', end_date: '2026-01-02' }, seed(), /start_date 2026-01-05 is after end_date 2026-01-02/);
});

test('the same call on the same state gives the same outcome', async () => {
  const args = { date: '2026-01-02', time: '12:00', topic: 'Design sync' };
  assert.deepEqual(await call('book_meeting', args, seed()), await call('book_meeting', args, seed()));
});

// Every task of the namespace: its reference solutions, replayed through its server, pass; its counterexamples
// fail. A refused call is recorded and the sequence goes on, as an agent's would.
testFixtureTasks(NS);
