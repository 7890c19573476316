/**
 * Calendar dates as day numbers (days since 1970-01-01, UTC), and their formatting with a few tokens. Day
 * numbers make windows, `date_add` and `ordered` exact whatever format a template writes its dates in.
 */
import { DATE_FORMAT_TOKENS } from './model.ts';

export const DEFAULT_DATE_FORMAT = 'YYYY-MM-DD';
const DAY_MS = 86_400_000;
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** `YYYY-MM-DD` → day number, or undefined when it is not a real date (2026-02-30). */
export function parseIsoDay(text: string): number | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return undefined;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const ms = Date.UTC(year, month - 1, day);
  const back = new Date(ms);
  if (back.getUTCFullYear() !== year || back.getUTCMonth() !== month - 1 || back.getUTCDate() !== day) return undefined;
  return ms / DAY_MS;
}

const TOKEN_PATTERN = new RegExp(DATE_FORMAT_TOKENS.join('|'), 'g');

export function formatDay(day: number, format: string = DEFAULT_DATE_FORMAT): string {
  const date = new Date(day * DAY_MS);
  const y = date.getUTCFullYear();
  const m = date.getUTCMonth();
  const d = date.getUTCDate();
  return format.replace(TOKEN_PATTERN, (token) => {
    switch (token) {
      case 'YYYY':
        return String(y).padStart(4, '0');
      case 'MMMM':
        return MONTHS[m]!;
      case 'MMM':
        return MONTHS[m]!.slice(0, 3);
      case 'MM':
        return String(m + 1).padStart(2, '0');
      case 'M':
        return String(m + 1);
      case 'DD':
        return String(d).padStart(2, '0');
      case 'D':
        return String(d);
      case 'dddd':
        return WEEKDAYS[date.getUTCDay()]!;
      default: // ddd
        return WEEKDAYS[date.getUTCDay()]!.slice(0, 3);
    }
  });
}

/** Whether a format names year, month and day (a format missing one would make different dates collide). */
export function formatIsComplete(format: string): boolean {
  const tokens: string[] = format.match(TOKEN_PATTERN) ?? [];
  return tokens.includes('YYYY') && tokens.some((t) => t.startsWith('M')) && tokens.some((t) => t === 'DD' || t === 'D');
}
