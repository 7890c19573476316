/**
 * Reading a database back out of pg_catalog: the tables with their columns and constraints (shared by the
 * snapshot and `describe_table`), the indexes, and the rows as JSON values of the state schema.
 */
import type { Field, Queryable } from './database.ts';
import type { Column, Index } from './state.ts';

const SYSTEM_SCHEMAS = "n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp\\_%'";

export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** `sales.orders` → ['sales', 'orders']; a bare name is in public. */
export function splitTableName(name: string): [string, string] {
  const dot = name.indexOf('.');
  return dot < 0 ? ['public', name] : [name.slice(0, dot), name.slice(dot + 1)];
}

export function qualified(name: string): string {
  const [schema, table] = splitTableName(name);
  return `${quoteIdent(schema)}.${quoteIdent(table)}`;
}

/** How the state names a table: bare in public, `schema.table` elsewhere. */
export function stateTableName(schema: string, table: string): string {
  return schema === 'public' ? table : `${schema}.${table}`;
}

interface Relation {
  oid: number;
  schema: string;
  name: string;
  kind: string;
}

interface ColumnInfo extends Column {
  attnum: number;
}

interface Constraint {
  name: string;
  type: 'p' | 'u' | 'f' | 'c' | 'x';
  columns: string[];
  definition: string;
  /** Foreign keys: the referenced table (state naming) and columns. */
  target?: { table: string; columns: string[] };
}

export async function listRelations(db: Queryable, kinds: string[], schema?: string): Promise<Relation[]> {
  const params = [kinds.join('')];
  if (schema !== undefined) params.push(schema);
  const { rows } = await db.query(
    `SELECT c.oid::int AS oid, n.nspname AS schema, c.relname AS name, c.relkind::text AS kind
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE position(c.relkind::text IN $1) > 0 AND ${SYSTEM_SCHEMAS}${schema !== undefined ? ' AND n.nspname = $2' : ''}
      ORDER BY c.oid`,
    params,
  );
  return rows as unknown as Relation[];
}

export async function findRelation(db: Queryable, schema: string, name: string): Promise<Relation | undefined> {
  const { rows } = await db.query(
    `SELECT c.oid::int AS oid, n.nspname AS schema, c.relname AS name, c.relkind::text AS kind
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind IN ('r', 'p', 'v', 'm', 'f')`,
    [schema, name],
  );
  return rows[0] as unknown as Relation | undefined;
}

export async function readConstraints(db: Queryable, oid: number): Promise<Constraint[]> {
  const { rows } = await db.query(
    `SELECT con.conname AS name, con.contype::text AS type, pg_get_constraintdef(con.oid, true) AS definition,
            ARRAY(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY k(num, ord)
                    JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.num ORDER BY k.ord) AS columns,
            fn.nspname AS target_schema, ft.relname AS target_table,
            ARRAY(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY k(num, ord)
                    JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.num ORDER BY k.ord) AS target_columns
       FROM pg_constraint con
       LEFT JOIN pg_class ft ON ft.oid = con.confrelid
       LEFT JOIN pg_namespace fn ON fn.oid = ft.relnamespace
      WHERE con.conrelid = $1::text::oid AND con.contype IN ('p', 'u', 'f', 'c', 'x')
      ORDER BY con.contype, con.conname`,
    [String(oid)],
  );
  return rows.map((r) => {
    const row = r as { name: string; type: Constraint['type']; definition: string; columns: string[]; target_schema: string | null; target_table: string | null; target_columns: string[] };
    return {
      name: row.name,
      type: row.type,
      columns: row.columns,
      definition: row.definition,
      ...(row.type === 'f' && row.target_schema !== null && row.target_table !== null
        ? { target: { table: stateTableName(row.target_schema, row.target_table), columns: row.target_columns } }
        : {}),
    };
  });
}

/** Columns in order with the state's attributes; `unique` and `references` only for single-column constraints. */
export async function readColumns(db: Queryable, oid: number, constraints: Constraint[]): Promise<ColumnInfo[]> {
  const { rows } = await db.query(
    `SELECT a.attnum::int AS attnum, a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS not_null,
            pg_get_expr(d.adbin, d.adrelid) AS default
       FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE a.attrelid = $1::text::oid AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY a.attnum`,
    [String(oid)],
  );
  const primary = constraints.find((c) => c.type === 'p')?.columns ?? [];
  return rows.map((r) => {
    const row = r as { attnum: number; name: string; type: string; not_null: boolean; default: string | null };
    const single = (type: Constraint['type']) => constraints.find((c) => c.type === type && c.columns.length === 1 && c.columns[0] === row.name);
    const fk = single('f');
    const column: ColumnInfo = {
      attnum: row.attnum,
      name: row.name,
      type: row.type,
      primary_key: primary.includes(row.name),
      nullable: !row.not_null,
      unique: single('u') !== undefined,
    };
    if (row.default !== null) column.default = row.default;
    if (fk?.target && fk.target.columns.length === 1) column.references = `${fk.target.table}(${fk.target.columns[0]})`;
    return column;
  });
}

interface IndexInfo extends Index {
  definition: string;
}

export async function readIndexes(db: Queryable, oid?: number): Promise<IndexInfo[]> {
  const { rows } = await db.query(
    `SELECT ci.relname AS name, n.nspname AS schema, ct.relname AS table, ix.indisunique AS unique,
            pg_get_indexdef(ix.indexrelid) AS definition,
            ARRAY(SELECT pg_get_indexdef(ix.indexrelid, k, true) FROM generate_series(1, ix.indnkeyatts) AS k ORDER BY k) AS columns
       FROM pg_index ix
       JOIN pg_class ci ON ci.oid = ix.indexrelid
       JOIN pg_class ct ON ct.oid = ix.indrelid
       JOIN pg_namespace n ON n.oid = ct.relnamespace
      WHERE ct.relkind IN ('r', 'p', 'm') AND ${SYSTEM_SCHEMAS}${oid !== undefined ? ' AND ct.oid = $1::text::oid' : ''}
      ORDER BY ct.oid, ci.relname`,
    oid !== undefined ? [String(oid)] : [],
  );
  return rows.map((r) => {
    const row = r as { name: string; schema: string; table: string; unique: boolean; definition: string; columns: string[] };
    return { name: row.name, table: stateTableName(row.schema, row.table), columns: row.columns, unique: row.unique, definition: row.definition };
  });
}

// Type OIDs whose text the worker passes through unparsed.
const INT8 = 20;
const NUMERIC = 1700;
const TIMESTAMP = 1114;
const TIMESTAMPTZ = 1184;

/** `19.90` and 19.9 are one value; text only when a double would lose digits. */
function exactNumber(text: string): number | string {
  const n = Number(text);
  if (!Number.isFinite(n)) return text;
  if (n === 0) return 0;
  const canonical = (s: string) => {
    let [int = '', frac = ''] = s.replace(/^([+-]?)0+(?=\d)/, '$1').split('.');
    frac = frac.replace(/0+$/, '');
    return frac ? `${int}.${frac}` : int;
  };
  const printed = String(n);
  return !/e/i.test(printed) && !/e/i.test(text) && canonical(printed) === canonical(text) ? n : text;
}

/** A value as the state schema writes it: numbers, ISO 8601 times in UTC, JSON, booleans, text. */
function jsonValue(value: unknown, typeId?: number): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') {
    if (typeId === INT8 || typeId === NUMERIC) return exactNumber(value);
    if (typeId === TIMESTAMPTZ) return value.replace(' ', 'T').replace(/\+00$/, 'Z');
    if (typeId === TIMESTAMP) return value.replace(' ', 'T');
    return value;
  }
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (value instanceof Uint8Array) return `\\x${Buffer.from(value).toString('hex')}`;
  if (Array.isArray(value)) return value.map((v) => jsonValue(v));
  if (typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, jsonValue(v)]));
  return value;
}

export function jsonRows(rows: Record<string, unknown>[], fields: Field[]): Record<string, unknown>[] {
  return rows.map((row) => Object.fromEntries(fields.map((f) => [f.name, jsonValue(row[f.name], f.dataTypeID)])));
}
