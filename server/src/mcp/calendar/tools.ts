/**
 * The calendar's tools as pure functions of the state (ReliabilityBench scheduling domain, Appendix A.1).
 * The rules are the ones the tool descriptions in schemas/servers/calendar.json promise an agent.
 */
import { ToolError, type ToolHandler } from '../namespace.ts';
import type { CalendarState, Meeting } from './state.ts';

/** A YYYY-MM-DD string naming a real day: the input pattern lets 2026-02-30 through, the state schema does not. */
function isCalendarDate(date: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const t = new Date(Date.UTC(y, mo - 1, d));
  return t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d;
}

/** The meetings of one day, in time order, as `{ time, topic }`. */
function dayView(state: CalendarState, date: string): { time: string; topic: string }[] {
  const slots = state.meetings[date] ?? {};
  return Object.keys(slots)
    .sort()
    .map((time) => ({ time, topic: slots[time] ?? '' }));
}

/** Rebuilds the meetings map with dates and times in order, so snapshots read the same whatever the call order. */
function withDay(state: CalendarState, date: string, slots: Record<string, string>): CalendarState {
  const meetings: Record<string, Record<string, string>> = {};
  const dates = new Set([...Object.keys(state.meetings), date]);
  for (const d of [...dates].sort()) {
    const source = d === date ? slots : (state.meetings[d] ?? {});
    const times = Object.keys(source).sort();
    // An empty day is dropped, as normalizeState does, so a cancelled last meeting leaves no trace.
    if (times.length === 0) continue;
    meetings[d] = Object.fromEntries(times.map((t) => [t, source[t] ?? '']));
  }
  return state.working_hours ? { meetings, working_hours: { ...state.working_hours } } : { meetings };
}

const book_meeting: ToolHandler<CalendarState> = (args: { date: string; time: string; topic: string }, state) => {
  const { date, time, topic } = args;
  if (!isCalendarDate(date)) throw new ToolError(`${date} is not a calendar date; use YYYY-MM-DD, e.g. 2026-01-05.`);
  if (topic.trim() === '') throw new ToolError('The topic must not be empty.');
  const taken = state.meetings[date]?.[time];
  if (taken !== undefined) {
    throw new ToolError(`${date} ${time} is already taken by "${taken}". Nothing was changed: cancel that meeting first or choose another time.`);
  }
  const hours = state.working_hours;
  if (hours && (time < hours.start || time >= hours.end)) {
    throw new ToolError(`${time} is outside the working hours: meetings can start at or after ${hours.start} and before ${hours.end}.`);
  }
  const next = withDay(state, date, { ...(state.meetings[date] ?? {}), [time]: topic });
  const meeting: Meeting = { date, time, topic };
  return { state: next, result: { status: 'booked', meeting } };
};

const check_calendar: ToolHandler<CalendarState> = (args: { date: string }, state) => {
  const result: Record<string, unknown> = { date: args.date, meetings: dayView(state, args.date) };
  if (state.working_hours) result.working_hours = { start: state.working_hours.start, end: state.working_hours.end };
  return { result };
};

const cancel_meeting: ToolHandler<CalendarState> = (args: { date: string; time: string }, state) => {
  const { date, time } = args;
  const topic = state.meetings[date]?.[time];
  if (topic === undefined) {
    const day = dayView(state, date);
    const booked = day.length > 0 ? `Booked that day: ${day.map((m) => `${m.time} "${m.topic}"`).join(', ')}.` : 'Nothing is booked that day.';
    throw new ToolError(`No meeting is booked on ${date} at ${time}. ${booked}`);
  }
  const { [time]: _cancelled, ...rest } = state.meetings[date] ?? {};
  const meeting: Meeting = { date, time, topic };
  return { state: withDay(state, date, rest), result: { status: 'cancelled', meeting } };
};

const list_meetings: ToolHandler<CalendarState> = (args: { start_date: string; end_date: string }, state) => {
  const { start_date, end_date } = args;
  if (start_date > end_date) throw new ToolError(`start_date ${start_date} is after end_date ${end_date}; give the earlier date first.`);
  const meetings: Meeting[] = Object.keys(state.meetings)
    .filter((date) => date >= start_date && date <= end_date)
    .sort()
    .flatMap((date) => dayView(state, date).map((m) => ({ date, ...m })));
  return { result: { start_date, end_date, meetings } };
};

export const tools: Record<string, ToolHandler<CalendarState>> = { book_meeting, check_calendar, cancel_meeting, list_meetings };
