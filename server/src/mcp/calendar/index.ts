/**
 * The calendar namespace: the ReliabilityBench scheduling domain. State is the paper's expected-final-state
 * shape (date → time → topic) under `meetings`, so a slot can hold one meeting by construction.
 */
import { defineNamespace, type PredicateFunction } from '../namespace.ts';
import { allMeetings, normalizeState, type CalendarState, type Meeting } from './state.ts';
import { tools } from './tools.ts';

const norm = (s: string): string => s.trim().toLowerCase();

interface Filters {
  date?: string;
  start_date?: string;
  end_date?: string;
  start_time?: string;
  end_time?: string;
  topic?: string;
  topic_contains?: string;
}

function matches(m: Meeting, f: Filters): boolean {
  if (f.date !== undefined && m.date !== f.date) return false;
  if (f.start_date !== undefined && m.date < f.start_date) return false;
  if (f.end_date !== undefined && m.date > f.end_date) return false;
  if (f.start_time !== undefined && m.time < f.start_time) return false;
  if (f.end_time !== undefined && m.time > f.end_time) return false;
  if (f.topic !== undefined && norm(m.topic) !== norm(f.topic)) return false;
  if (f.topic_contains !== undefined && !norm(m.topic).includes(norm(f.topic_contains))) return false;
  return true;
}

function withinBounds(n: number, b: { equals?: number; min?: number; max?: number }): boolean {
  return (b.equals === undefined || n === b.equals) && (b.min === undefined || n >= b.min) && (b.max === undefined || n <= b.max);
}

const meetingBooked: PredicateFunction<CalendarState> = (args: Filters & { date: string; time: string }, { state }) => {
  const topic = state.meetings[args.date]?.[args.time];
  if (topic === undefined) {
    return { value: false, evidence: { slot: `${args.date} ${args.time}`, booked: null, meetings_that_day: state.meetings[args.date] ?? {} } };
  }
  const meeting = { date: args.date, time: args.time, topic };
  return { value: matches(meeting, { topic: args.topic, topic_contains: args.topic_contains }), evidence: { meeting } };
};

const slotFree: PredicateFunction<CalendarState> = (args: { date: string; time: string }, { state }) => {
  const topic = state.meetings[args.date]?.[args.time];
  return { value: topic === undefined, evidence: { slot: `${args.date} ${args.time}`, booked: topic ?? null } };
};

const meetingScheduled: PredicateFunction<CalendarState> = (args: Filters, { state }) => {
  const all = allMeetings(state);
  const found = all.filter((m) => matches(m, args));
  if (found.length > 0) return { value: true, evidence: { matched: found.slice(0, 5) } };
  // Meetings with the right topic in the wrong place are the likely near misses.
  const sameTopic = all.filter((m) => matches(m, { topic: args.topic, topic_contains: args.topic_contains }));
  return { value: false, evidence: { matched: [], same_topic_elsewhere: sameTopic.slice(0, 5) } };
};

const meetingCount: PredicateFunction<CalendarState> = (args: Filters & { equals?: number; min?: number; max?: number }, { state }) => {
  const found = allMeetings(state).filter((m) => matches(m, args));
  return { value: withinBounds(found.length, args), evidence: { count: found.length, meetings: found.slice(0, 10) } };
};

export default defineNamespace<CalendarState>({
  namespace: 'calendar',
  normalizeState,
  predicates: { meetingBooked, slotFree, meetingScheduled, meetingCount },
  tools,
});
