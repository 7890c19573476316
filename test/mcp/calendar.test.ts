import { test } from 'node:test';
import assert from 'node:assert/strict';
import calendar from '../../server/src/mcp/calendar/index.ts';
import { normalizeState } from '../../server/src/mcp/calendar/state.ts';

const state = normalizeState({
  meetings: {
    '2026-01-01': { '09:00': 'Review' },
    '2026-01-02': { '10:00': 'Standup', '11:00': '1:1 with Ana', '13:00': 'Design Sync' },
    '2026-01-05': { '09:00': 'Standup' },
    '2026-01-06': {},
  },
});
const check = (name: string, args: Record<string, unknown>, s = state): boolean => {
  const predicate = calendar.predicates[name];
  assert.ok(predicate, name);
  const verdict = predicate(args, { state: s, answer: undefined });
  JSON.stringify(verdict.evidence);
  return verdict.value;
};

test('normalizeState: absent and empty calendars read alike; empty days are dropped', () => {
  assert.deepEqual(normalizeState(undefined), { meetings: {} });
  assert.deepEqual(normalizeState({}), { meetings: {} });
  assert.deepEqual(normalizeState({ meetings: { '2026-01-06': {} } }), { meetings: {} });
  assert.deepEqual(normalizeState({ working_hours: { start: '09:00', end: '17:00' } }).working_hours, { start: '09:00', end: '17:00' });
  assert.equal('2026-01-06' in state.meetings, false);
});

test('meetingBooked: slot, exact topic (case-insensitive, trimmed), topic_contains', () => {
  assert.equal(check('meetingBooked', { date: '2026-01-01', time: '09:00', topic: 'Review' }), true);
  assert.equal(check('meetingBooked', { date: '2026-01-01', time: '09:00', topic: '  review ' }), true);
  assert.equal(check('meetingBooked', { date: '2026-01-01', time: '09:00' }), true);
  assert.equal(check('meetingBooked', { date: '2026-01-01', time: '09:00', topic: 'Review meeting' }), false);
  assert.equal(check('meetingBooked', { date: '2026-01-01', time: '09:00', topic: 'Rev' }), false);
  assert.equal(check('meetingBooked', { date: '2026-01-02', time: '11:00', topic_contains: 'ana' }), true);
  assert.equal(check('meetingBooked', { date: '2026-01-02', time: '11:00', topic_contains: 'bob' }), false);
  assert.equal(check('meetingBooked', { date: '2026-01-01', time: '10:00', topic: 'Review' }), false);
  assert.equal(check('meetingBooked', { date: '2026-01-03', time: '09:00' }), false);
  assert.equal(check('meetingBooked', { date: '2026-01-01', time: '09:00', topic: 'Review' }, normalizeState(undefined)), false);
});

test('meetingBooked evidence shows the day when the slot is empty', () => {
  const verdict = calendar.predicates.meetingBooked!({ date: '2026-01-02', time: '12:00' }, { state, answer: undefined });
  assert.deepEqual((verdict.evidence as { meetings_that_day: object }).meetings_that_day, state.meetings['2026-01-02']);
});

test('slotFree', () => {
  assert.equal(check('slotFree', { date: '2026-01-02', time: '12:00' }), true);
  assert.equal(check('slotFree', { date: '2026-01-09', time: '09:00' }), true);
  assert.equal(check('slotFree', { date: '2026-01-02', time: '10:00' }), false);
});

test('meetingScheduled: topic within date and time windows', () => {
  assert.equal(check('meetingScheduled', { topic: 'design sync' }), true);
  assert.equal(check('meetingScheduled', { topic: 'Design sync', date: '2026-01-02', start_time: '12:00', end_time: '13:00' }), true);
  assert.equal(check('meetingScheduled', { topic: 'Design sync', date: '2026-01-02', end_time: '12:59' }), false);
  assert.equal(check('meetingScheduled', { topic: 'Design sync', start_date: '2026-01-03' }), false);
  assert.equal(check('meetingScheduled', { topic: 'Standup', start_date: '2026-01-03', end_date: '2026-01-05' }), true);
  assert.equal(check('meetingScheduled', { topic: 'Standup', start_date: '2026-01-03', end_date: '2026-01-04' }), false);
  assert.equal(check('meetingScheduled', { topic_contains: 'sync' }), true);
  assert.equal(check('meetingScheduled', { topic: 'Retro' }), false);
});

test('meetingCount: filters and equals/min/max bounds', () => {
  assert.equal(check('meetingCount', { equals: 5 }), true);
  assert.equal(check('meetingCount', { equals: 4 }), false);
  assert.equal(check('meetingCount', { date: '2026-01-02', equals: 3 }), true);
  assert.equal(check('meetingCount', { topic: 'standup', equals: 2 }), true);
  assert.equal(check('meetingCount', { topic: 'Standup', start_date: '2026-01-03', max: 0 }), false);
  assert.equal(check('meetingCount', { start_date: '2026-01-02', end_date: '2026-01-05', min: 4, max: 4 }), true);
  assert.equal(check('meetingCount', { start_time: '10:00', min: 4 }), false);
  assert.equal(check('meetingCount', { equals: 0 }, normalizeState({})), true);
});

test('state schema: accepts {} and its examples, rejects a malformed state', async () => {
  const { loadRegistry } = await import('../../server/src/mcp/registry.ts');
  const info = (await loadRegistry()).get('calendar');
  assert.ok(info);
  assert.equal(info.validateState({}), true);
  for (const example of (info.server.state_schema.examples as unknown[]) ?? []) assert.equal(info.validateState(example), true, JSON.stringify(example));
  assert.equal(info.validateState({ meetings: { "2026-01-01": { "9am": "Review" } } }), false);
});
