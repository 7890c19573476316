/**
 * Dates and timestamps read back in the form they were seeded in. Postgres prints a `timestamptz` seeded as
 * `"1962-02-18T00:00:00.000Z"` as `1962-02-18 00:00:00+00`; the snapshot would say `"1962-02-18T00:00:00Z"`,
 * and a predicate (or `<ns>.unchanged`) written against the seed's form would be silently false. So the seed
 * records, per date and timestamp column, the form of its first seeded value (separator, fraction digits,
 * zone), and the snapshot writes every value of that column, old or new, in that form. A column seeded with
 * no value keeps the form the snapshot has always used (ISO 8601, `T`, `Z` in UTC).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { parseType, type PostgresState } from './state.ts';

/** Where the seed leaves the forms, next to the data directory (the agent's SQL cannot reach it). */
const TIME_FORMATS_FILE = 'time-formats.json';

const TimeStyleSchema = z.object({
  /** Between date and time. */
  separator: z.enum(['T', ' ']),
  /** Digits of the fraction of a second (0: none). */
  fraction: z.int().min(0).max(6),
  /** How UTC is written: `Z`, `+00:00`, `+00`, or nothing (a timestamp without time zone). */
  zone: z.enum(['Z', '+00:00', '+00', '']),
});
type TimeStyle = z.infer<typeof TimeStyleSchema>;

/** Table → column → the form its values are written in. */
const TimeStylesSchema = z.record(z.string(), z.record(z.string(), TimeStyleSchema));
type TimeStyles = z.infer<typeof TimeStylesSchema>;

const TIMESTAMP = /^(\d{4}-\d{2}-\d{2})([T ])(\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?(Z|[+-]\d{2}(?::?\d{2})?)?$/;
const TIME_TYPES = new Set(['timestamp with time zone', 'timestamp without time zone', 'date']);

/** The form of a written timestamp, or undefined when the text is not an ISO 8601 timestamp (a bare date). */
function styleOf(text: string): TimeStyle | undefined {
  const m = TIMESTAMP.exec(text);
  if (!m) return undefined;
  const zone = m[5] === undefined ? '' : m[5] === 'Z' ? 'Z' : m[5].includes(':') ? '+00:00' : '+00';
  return { separator: m[2] as 'T' | ' ', fraction: m[4]?.length ?? 0, zone };
}

/** The forms of the date and timestamp columns of a state, from their first seeded string value. */
export function seededStyles(state: PostgresState): TimeStyles {
  const styles: TimeStyles = {};
  for (const [table, { columns, rows }] of Object.entries(state.tables)) {
    for (const column of columns) {
      const { base, array } = parseType(column.type);
      if (array || !TIME_TYPES.has(base)) continue;
      const first = rows.map((r) => r[column.name]).find((v): v is string => typeof v === 'string');
      const style = first === undefined ? undefined : styleOf(first);
      if (style) (styles[table] ??= {})[column.name] = style;
    }
  }
  return styles;
}

/**
 * A value as the snapshot reads it (`1962-02-18T00:00:00Z`, `1962-02-18T00:00:00.5`, `1962-02-18`), in
 * `style`. Values that are not times in UTC (another zone, infinity, a BC date) are left as they are.
 */
function restyle(value: unknown, style: TimeStyle): unknown {
  if (typeof value !== 'string') return value;
  const date = /^\d{4}-\d{2}-\d{2}$/.test(value) ? value : undefined;
  const m = date ? undefined : TIMESTAMP.exec(value);
  if (!date && (!m || (m[5] !== undefined && m[5] !== 'Z' && !/^\+00(:?00)?$/.test(m[5])))) return value;
  const [day, time, digits] = date ? [date, '00:00:00', ''] : [m![1]!, m![3]!, m![4] ?? ''];
  // As many fraction digits as the seeded form has, more when the value needs them (nothing is cut off).
  const width = Math.max(style.fraction, digits.replace(/0+$/, '').length);
  const fraction = width > 0 ? `.${digits.padEnd(width, '0').slice(0, width)}` : '';
  return `${day}${style.separator}${time}${fraction}${style.zone}`;
}

export function writeStyles(sandbox: string, styles: TimeStyles): void {
  if (Object.keys(styles).length) writeFileSync(join(sandbox, TIME_FORMATS_FILE), JSON.stringify(styles));
}

export function readStyles(sandbox: string): TimeStyles {
  const file = join(sandbox, TIME_FORMATS_FILE);
  return existsSync(file) ? TimeStylesSchema.parse(JSON.parse(readFileSync(file, 'utf8'))) : {};
}

/** The state with every value of a styled column written in its seeded form (in place). */
export function applyStyles(state: PostgresState, styles: TimeStyles): PostgresState {
  for (const [table, columns] of Object.entries(styles)) {
    const rows = state.tables[table]?.rows ?? [];
    for (const [column, style] of Object.entries(columns)) for (const row of rows) if (column in row) row[column] = restyle(row[column], style);
  }
  return state;
}
