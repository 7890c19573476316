/**
 * The Postgres state as predicates read it, and the value semantics shared by the predicates: how a `where`
 * condition matches a row, how SQL type names compare. Rows are JSON, so numeric columns may arrive as
 * numbers (authored) or numeric text (a driver's `numeric`); both compare numerically.
 */
import { deepEqual } from '../../json-values.ts';

export interface Column {
  name: string;
  type: string;
  primary_key: boolean;
  nullable: boolean;
  default?: string;
  unique: boolean;
  references?: string;
}

export interface Table {
  columns: Column[];
  rows: Record<string, unknown>[];
}

export interface Index {
  name: string;
  table: string;
  columns: string[];
  unique: boolean;
}

export interface PostgresState {
  tables: Record<string, Table>;
  indexes: Index[];
  setup_sql?: string;
}

interface RawColumn extends Partial<Column> {
  name: string;
  type: string;
}

interface RawState {
  tables?: Record<string, { columns: RawColumn[]; rows?: Record<string, unknown>[] }>;
  indexes?: Partial<Index>[];
  setup_sql?: string;
}

/** `public.orders` and `orders` are one table; other schemas stay qualified. */
export function tableKey(name: string): string {
  return name.startsWith('public.') ? name.slice('public.'.length) : name;
}

export function normalizeState(state: unknown): PostgresState {
  const raw = (state ?? {}) as RawState;
  const tables: Record<string, Table> = {};
  const indexes: Index[] = (raw.indexes ?? []).map((i) => ({
    name: i.name ?? '',
    table: tableKey(i.table ?? ''),
    columns: [...(i.columns ?? [])],
    unique: i.unique ?? false,
  }));
  const has = (name: string): boolean => indexes.some((i) => i.name === name);
  for (const [rawName, t] of Object.entries(raw.tables ?? {})) {
    const name = tableKey(rawName);
    const columns = (t.columns ?? []).map((c) => ({
      ...c,
      name: c.name,
      type: c.type,
      primary_key: c.primary_key ?? false,
      nullable: c.primary_key ? false : (c.nullable ?? true),
      unique: c.unique ?? false,
    }));
    tables[name] = { columns, rows: (t.rows ?? []).map((r) => ({ ...r })) };
    // The indexes Postgres creates implicitly, under its own names, so authored and snapshotted states agree.
    const bare = name.slice(name.lastIndexOf('.') + 1);
    const pk = columns.filter((c) => c.primary_key).map((c) => c.name);
    if (pk.length && !indexes.some((i) => i.table === name && i.unique && sameList(i.columns, pk)) && !has(`${bare}_pkey`)) {
      indexes.push({ name: `${bare}_pkey`, table: name, columns: pk, unique: true });
    }
    for (const c of columns.filter((c) => c.unique && !c.primary_key)) {
      if (!indexes.some((i) => i.table === name && i.unique && sameList(i.columns, [c.name]))) {
        indexes.push({ name: `${bare}_${c.name}_key`, table: name, columns: [c.name], unique: true });
      }
    }
  }
  return { tables, indexes, ...(raw.setup_sql !== undefined ? { setup_sql: raw.setup_sql } : {}) };
}

function sameList(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Exact name first, then case-insensitively (unquoted SQL identifiers are case-insensitive). */
export function findTable(state: PostgresState, name: string): [string, Table] | undefined {
  const key = tableKey(name);
  const exact = state.tables[key];
  if (exact) return [key, exact];
  const lower = key.toLowerCase();
  const hit = Object.entries(state.tables).find(([k]) => k.toLowerCase() === lower);
  return hit;
}

export function findColumn(table: Table, name: string): Column | undefined {
  return table.columns.find((c) => c.name === name) ?? table.columns.find((c) => c.name.toLowerCase() === name.toLowerCase());
}

/** A row's value for a column, tolerating a differently-cased key. */
export function cell(row: Record<string, unknown>, column: string): unknown {
  if (Object.prototype.hasOwnProperty.call(row, column)) return row[column];
  const key = Object.keys(row).find((k) => k.toLowerCase() === column.toLowerCase());
  return key === undefined ? null : row[key];
}

const NUMERIC_TEXT = /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/;

export function asNumber(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && NUMERIC_TEXT.test(v)) return Number(v);
  if (typeof v === 'bigint') return Number(v);
  return undefined;
}


/** Within tolerance, plus a relative epsilon so that 19.95 vs 19.9 with tolerance 0.05 is not lost to binary floats. */
function near(a: number, e: number, tolerance: number): boolean {
  return Math.abs(a - e) <= tolerance + 1e-9 * Math.max(1, Math.abs(a), Math.abs(e));
}

const INSTANT = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?)(Z|[+-]\d{2}(?::?\d{2})?)?$/;

/** Microseconds since the epoch of an ISO 8601 timestamp (no zone: UTC), or undefined when it is not one. */
function instant(text: string): number | undefined {
  const m = INSTANT.exec(text);
  if (!m) return undefined;
  const [seconds, micro = ''] = m[2]!.split('.');
  const zone = m[3] === undefined || m[3] === 'Z' ? 'Z' : m[3].length === 3 ? `${m[3]}:00` : m[3].includes(':') ? m[3] : `${m[3].slice(0, 3)}:${m[3].slice(3)}`;
  const ms = Date.parse(`${m[1]}T${seconds}${zone}`);
  return Number.isNaN(ms) ? undefined : ms * 1000 + Number(micro.padEnd(6, '0'));
}

/** SQL-ish equality for JSON values: null = null here (a predicate asks "is it null"), numbers numerically. */
export function valuesEqual(actual: unknown, expected: unknown, tolerance = 0): boolean {
  if (actual === null || actual === undefined || expected === null || expected === undefined) {
    return (actual ?? null) === (expected ?? null);
  }
  if (typeof actual === 'number' || typeof expected === 'number') {
    const a = asNumber(actual);
    const e = asNumber(expected);
    return a !== undefined && e !== undefined && near(a, e, tolerance);
  }
  if (typeof actual === 'boolean' || typeof expected === 'boolean') return actual === expected;
  if (typeof actual === 'string' && typeof expected === 'string') {
    if (actual === expected) return true;
    // One instant written two ways ("1962-02-18T00:00:00.000Z", "1962-02-18 00:00:00+00") is one value.
    const [at, expectedAt] = [instant(actual), instant(expected)];
    if (at !== undefined && expectedAt !== undefined) return at === expectedAt;
    // numeric(10,2) text '19.90' against '19.9'
    const a = asNumber(actual);
    const e = asNumber(expected);
    return a !== undefined && e !== undefined && near(a, e, tolerance);
  }
  return deepEqual(actual, expected);
}

/** -1, 0, 1, or undefined when the values do not order (null, mixed kinds). */
export function compare(actual: unknown, expected: unknown): number | undefined {
  if (actual === null || actual === undefined) return undefined;
  const a = asNumber(actual);
  const e = asNumber(expected);
  if (a !== undefined && e !== undefined) return Math.sign(a - e);
  if (typeof actual === 'string' && typeof expected === 'string') return actual < expected ? -1 : actual > expected ? 1 : 0;
  return undefined;
}

export function likeToRegExp(pattern: string, caseInsensitive: boolean): RegExp {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\' && i + 1 < pattern.length) {
      out += pattern[++i]!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    } else if (c === '%') out += '[\\s\\S]*';
    else if (c === '_') out += '[\\s\\S]';
    else out += c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${out}$`, caseInsensitive ? 'i' : '');
}

export type Condition =
  | string
  | number
  | boolean
  | null
  | {
      eq?: unknown;
      ne?: unknown;
      gt?: number | string;
      gte?: number | string;
      lt?: number | string;
      lte?: number | string;
      in?: unknown[];
      like?: string;
      ilike?: string;
      is_null?: boolean;
    };

function conditionHolds(value: unknown, condition: Condition): boolean {
  if (condition === null || typeof condition !== 'object') return valuesEqual(value, condition);
  const c = condition;
  const isNull = value === null || value === undefined;
  if (c.is_null !== undefined && c.is_null !== isNull) return false;
  if ('eq' in c && !valuesEqual(value, c.eq)) return false;
  if ('ne' in c && valuesEqual(value, c.ne)) return false;
  const ordered = (bound: unknown, ok: (sign: number) => boolean): boolean => {
    const sign = compare(value, bound);
    return sign !== undefined && ok(sign);
  };
  if (c.gt !== undefined && !ordered(c.gt, (s) => s > 0)) return false;
  if (c.gte !== undefined && !ordered(c.gte, (s) => s >= 0)) return false;
  if (c.lt !== undefined && !ordered(c.lt, (s) => s < 0)) return false;
  if (c.lte !== undefined && !ordered(c.lte, (s) => s <= 0)) return false;
  if (c.in !== undefined && !c.in.some((x) => valuesEqual(value, x))) return false;
  if (c.like !== undefined && (typeof value !== 'string' || !likeToRegExp(c.like, false).test(value))) return false;
  if (c.ilike !== undefined && (typeof value !== 'string' || !likeToRegExp(c.ilike, true).test(value))) return false;
  return true;
}

export function rowMatches(row: Record<string, unknown>, where: Record<string, Condition> | undefined): boolean {
  return Object.entries(where ?? {}).every(([column, condition]) => conditionHolds(cell(row, column), condition));
}

const TYPE_ALIASES: Record<string, string> = {
  int: 'integer',
  int4: 'integer',
  serial: 'integer',
  serial4: 'integer',
  int8: 'bigint',
  bigserial: 'bigint',
  serial8: 'bigint',
  int2: 'smallint',
  smallserial: 'smallint',
  float8: 'double precision',
  double: 'double precision',
  float4: 'real',
  float: 'double precision',
  bool: 'boolean',
  varchar: 'character varying',
  char: 'character',
  bpchar: 'character',
  decimal: 'numeric',
  timestamptz: 'timestamp with time zone',
  timestamp: 'timestamp without time zone',
  timetz: 'time with time zone',
  time: 'time without time zone',
};

/** `VARCHAR(50)` → { base: 'character varying', modifier: '(50)' }. */
export function parseType(type: string): { base: string; modifier: string; array: boolean } {
  let t = type.trim().toLowerCase().replace(/\s+/g, ' ');
  const array = t.endsWith('[]');
  if (array) t = t.slice(0, -2).trim();
  const m = /^(.*?)\s*(\(\s*[\d\s,]*\))?((?: with(?:out)? time zone)?)$/.exec(t);
  let base = ((m?.[1] ?? t) + (m?.[3] ?? '')).trim();
  const modifier = (m?.[2] ?? '').replace(/\s+/g, '');
  base = TYPE_ALIASES[base] ?? base;
  return { base, modifier, array };
}

/** Whether a column's declared type satisfies an expected type; a modifier is checked only when expected has one. */
export function typeMatches(actual: string, expected: string): boolean {
  const a = parseType(actual);
  const e = parseType(expected);
  return a.base === e.base && a.array === e.array && (e.modifier === '' || a.modifier === e.modifier);
}
