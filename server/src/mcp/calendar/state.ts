/**
 * The calendar state (schemas/servers/calendar.json `state_schema`): date → time → topic under `meetings`, so a
 * slot can hold one meeting by construction.
 */

export interface CalendarState {
  /** date (YYYY-MM-DD) → time (HH:MM) → topic */
  meetings: Record<string, Record<string, string>>;
  working_hours?: { start: string; end: string };
}

export interface Meeting {
  date: string;
  time: string;
  topic: string;
}

export function normalizeState(state: unknown): CalendarState {
  const raw = (state ?? {}) as Partial<CalendarState>;
  const meetings: Record<string, Record<string, string>> = {};
  for (const [date, slots] of Object.entries(raw.meetings ?? {})) {
    // An empty day carries no information; dropping it makes `{}` and `{ "2026-01-01": {} }` read alike.
    if (slots && Object.keys(slots).length > 0) meetings[date] = { ...slots };
  }
  return raw.working_hours ? { meetings, working_hours: { ...raw.working_hours } } : { meetings };
}

/** Every meeting, in date and time order (ISO dates and zero-padded times sort as strings). */
export function allMeetings(state: CalendarState): Meeting[] {
  const out: Meeting[] = [];
  for (const date of Object.keys(state.meetings).sort()) {
    const slots = state.meetings[date] ?? {};
    for (const time of Object.keys(slots).sort()) out.push({ date, time, topic: slots[time] ?? '' });
  }
  return out;
}
