/**
 * Building a state into an empty database: the DDL and DML both backends run (PGlite in the sandbox, a
 * server the user runs), so a state seeds the same tables, constraints, rows and indexes on either.
 */
import { qualified, quoteIdent, splitTableName } from './catalog.ts';
import { PgError, type Queryable } from './database.ts';
import { parseType, type Index, type PostgresState, type Table } from './state.ts';

/** A JSON value as Postgres's text input for a column of `type` (JSON columns take the value as JSON). */
function textInput(value: unknown, type: string): string | null {
  if (value === null || value === undefined) return null;
  const { base, array } = parseType(type);
  if ((base === 'json' || base === 'jsonb') && !array) return JSON.stringify(value);
  if (Array.isArray(value)) return arrayLiteral(value);
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

function arrayLiteral(values: unknown[]): string {
  const element = (v: unknown): string => {
    if (v === null || v === undefined) return 'NULL';
    if (Array.isArray(v)) return arrayLiteral(v);
    const text = typeof v === 'object' ? JSON.stringify(v) : String(v);
    return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  };
  return `{${values.map(element).join(',')}}`;
}

function sameColumns(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** CREATE TABLE with the constraints named as the (normalised) state's indexes name them. */
function createTableSql(name: string, table: Table, indexes: Index[]): { sql: string; implied: Set<Index> } {
  const implied = new Set<Index>();
  const onTable = indexes.filter((i) => i.table === name && i.unique);
  const lines = table.columns.map((c) => {
    let line = `${quoteIdent(c.name)} ${c.type}`;
    if (!c.nullable && !c.primary_key) line += ' NOT NULL';
    if (c.default !== undefined) line += ` DEFAULT ${c.default}`;
    if (c.unique && !c.primary_key) {
      const index = onTable.find((i) => sameColumns(i.columns, [c.name]));
      if (index) implied.add(index);
      line += index ? ` CONSTRAINT ${quoteIdent(index.name)} UNIQUE` : ' UNIQUE';
    }
    return line;
  });
  const pk = table.columns.filter((c) => c.primary_key).map((c) => c.name);
  if (pk.length) {
    const index = onTable.find((i) => sameColumns(i.columns, pk));
    if (index) implied.add(index);
    lines.push(`${index ? `CONSTRAINT ${quoteIdent(index.name)} ` : ''}PRIMARY KEY (${pk.map(quoteIdent).join(', ')})`);
  }
  return { sql: `CREATE TABLE ${qualified(name)} (\n  ${lines.join(',\n  ')}\n)`, implied };
}

async function insertRows(db: Queryable, name: string, table: Table): Promise<void> {
  const types = new Map(table.columns.map((c) => [c.name, c.type]));
  // Consecutive rows with the same columns go in one multi-row INSERT, within Postgres's parameter limit.
  let batch: Record<string, unknown>[] = [];
  let batchColumns: string[] = [];
  const flush = async () => {
    if (!batch.length) return;
    const params: (string | null)[] = [];
    const tuples = batch.map((row) => `(${batchColumns.map((c) => {
      params.push(textInput(row[c], types.get(c) ?? 'text'));
      return `$${params.length}`;
    }).join(', ')})`);
    const columns = batchColumns.length ? `(${batchColumns.map(quoteIdent).join(', ')}) VALUES ${tuples.join(', ')}` : 'DEFAULT VALUES';
    if (batchColumns.length) await db.query(`INSERT INTO ${qualified(name)} ${columns}`, params);
    else for (let i = 0; i < batch.length; i++) await db.query(`INSERT INTO ${qualified(name)} DEFAULT VALUES`);
    batch = [];
  };
  for (const row of table.rows) {
    const columns = Object.keys(row);
    if (!sameColumns(columns, batchColumns) || (batch.length + 1) * Math.max(1, columns.length) > 30_000) {
      await flush();
      batchColumns = columns;
    }
    batch.push(row);
  }
  await flush();
}

/** Builds a state into an open, empty database. */
export async function build(db: Queryable, state: PostgresState): Promise<void> {
  const names = Object.keys(state.tables);
  const schemas = [...new Set(names.map((n) => splitTableName(n)[0]).filter((s) => s !== 'public'))];
  for (const schema of schemas) await db.exec(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
  const implied = new Set<Index>();
  for (const name of names) {
    const created = createTableSql(name, state.tables[name]!, state.indexes);
    for (const index of created.implied) implied.add(index);
    await db.exec(created.sql);
  }
  for (const name of names) {
    try {
      await insertRows(db, name, state.tables[name]!);
    } catch (error) {
      if (error instanceof PgError) throw new PgError({ ...error.info, message: `seeding the rows of ${name}: ${error.info.message}` });
      throw error;
    }
  }
  // Foreign keys after the rows: tables may then be listed and filled in any order, cycles included. The
  // constraint gets the name an inline REFERENCES would (`<table>_<column>_fkey`).
  for (const name of names) {
    for (const c of state.tables[name]!.columns) {
      if (!c.references) continue;
      const match = /^(.*)\((.*)\)$/.exec(c.references);
      if (!match) continue;
      await db.exec(`ALTER TABLE ${qualified(name)} ADD FOREIGN KEY (${quoteIdent(c.name)}) REFERENCES ${qualified(match[1]!)} (${quoteIdent(match[2]!)})`);
    }
  }
  const createIndex = (index: Index) => {
    const table = state.tables[index.table];
    const key = index.columns.map((c) => (table?.columns.some((col) => col.name === c) ? quoteIdent(c) : `(${c})`));
    return db.exec(`CREATE ${index.unique ? 'UNIQUE ' : ''}INDEX ${quoteIdent(index.name)} ON ${qualified(index.table)} (${key.join(', ')})`);
  };
  const explicit = state.indexes.filter((i) => !implied.has(i));
  for (const index of explicit.filter((i) => state.tables[i.table])) await createIndex(index);
  if (state.setup_sql !== undefined && state.setup_sql.trim() !== '') await db.exec(state.setup_sql);
  // Indexes on tables that setup_sql creates.
  for (const index of explicit.filter((i) => !state.tables[i.table])) await createIndex(index);
  // Planner statistics (and list_tables's row estimates) as a long-running database would have them.
  await db.exec('ANALYZE');
}
