/**
 * The `postgres` namespace's real server: Postgres itself (PGlite: Postgres compiled to WebAssembly, no
 * network, no install) with its data directory in the sandbox, `<sandbox>/pgdata`.
 *
 * Start-up cost is dominated by initdb, so seeding is done once per distinct state: `seedTemplate` builds a
 * closed data directory, which is cached under the OS temp folder by the canonical hash of the state (and the
 * PGlite version), and every episode gets a plain file copy of it (`cloneSandbox`).
 */
import { copyFileSync, constants, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { NamespaceRuntime } from '../namespace.ts';
import { loadRegistry } from '../registry.ts';
import { declaredTools } from '../simulation.ts';
import { canonicalHash } from '../../tasks/hash.ts';
import {
  findRelation,
  jsonRows,
  listRelations,
  qualified,
  quoteIdent,
  readColumns,
  readConstraints,
  readIndexes,
  splitTableName,
  stateTableName,
} from './catalog.ts';
import { Database, PgError, TimeoutError, pglite, type Result } from './database.ts';
import { normalizeState, parseType, type Index, type PostgresState, type Table } from './state.ts';

export const DATA_DIR = 'pgdata';
/** Rows a tool returns at most; the result says when more were cut. */
export const MAX_ROWS = 1000;
// Bump when the way a state is built into a data directory changes, so old cached templates are not reused.
const TEMPLATE_FORMAT = 1;

// ---------------------------------------------------------------------------------------------- seeding

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

async function insertRows(db: Database, name: string, table: Table): Promise<void> {
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
async function build(db: Database, state: PostgresState): Promise<void> {
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

function copyTree(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    // A copy-on-write clone where the file system offers one, a plain copy elsewhere.
    if (entry.isDirectory()) copyTree(source, target);
    else copyFileSync(source, target, constants.COPYFILE_FICLONE);
  }
}

/** Copies a closed data directory (a template) into a sandbox as `<sandbox>/pgdata`. */
export function cloneSandbox(templateDir: string, sandbox: string): void {
  const target = join(sandbox, DATA_DIR);
  rmSync(target, { recursive: true, force: true });
  copyTree(templateDir, target);
}

export function cacheRoot(): string {
  return process.env.MCPBENCH_PGLITE_CACHE ?? join(tmpdir(), 'mcpbench-pglite', pglite().version);
}

/**
 * Puts a data directory at `final` built by `make` in a private folder first: processes seeding the same
 * state at once each build, the first rename wins and the others' copies are dropped.
 */
async function cached(final: string, make: (dir: string) => Promise<void>): Promise<string> {
  if (existsSync(join(final, 'PG_VERSION'))) return final;
  mkdirSync(cacheRoot(), { recursive: true });
  const work = mkdtempSync(join(cacheRoot(), 'build-'));
  try {
    await make(join(work, DATA_DIR));
    mkdirSync(join(final, '..'), { recursive: true });
    try {
      renameSync(join(work, DATA_DIR), final);
    } catch (error) {
      if (!existsSync(join(final, 'PG_VERSION'))) throw error;
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return final;
}

/** An initialised, empty data directory (initdb is the slow part of any seed). */
function blankTemplate(): Promise<string> {
  return cached(join(cacheRoot(), 'blank', DATA_DIR), async (dir) => {
    const db = await Database.open(dir);
    await db.close();
  });
}

/** Builds `state` into a closed data directory `dir` (which must not exist yet). */
export async function seedTemplate(state: PostgresState, dir: string): Promise<void> {
  copyTree(await blankTemplate(), dir);
  const db = await Database.open(dir);
  try {
    await build(db, state);
  } finally {
    await db.close();
  }
}

/** The cached template of a state: built on first use, then reused by every episode with that state. */
export function templateFor(state: PostgresState): Promise<string> {
  const key = canonicalHash({ format: TEMPLATE_FORMAT, state: normalizeState(state) });
  return cached(join(cacheRoot(), key, DATA_DIR), (dir) => seedTemplate(state, dir));
}

export async function seed(state: PostgresState, sandbox: string): Promise<void> {
  cloneSandbox(await templateFor(state), sandbox);
}

// --------------------------------------------------------------------------------------------- snapshot

export async function snapshot(sandbox: string): Promise<PostgresState> {
  const db = await Database.open(join(sandbox, DATA_DIR));
  try {
    const tables: PostgresState['tables'] = {};
    for (const relation of await listRelations(db, ['r', 'p'])) {
      const constraints = await readConstraints(db, relation.oid);
      const columns = (await readColumns(db, relation.oid, constraints)).map(({ attnum: _attnum, ...column }) => column);
      const pk = constraints.find((c) => c.type === 'p')?.columns ?? [];
      const name = stateTableName(relation.schema, relation.name);
      // Without a key, rows are ordered by their whole text, which is as deterministic as a key.
      const order = pk.length ? pk.map(quoteIdent).join(', ') : '"mcpbench row"::text';
      const result = await db.query(`SELECT "mcpbench row".* FROM ${qualified(name)} AS "mcpbench row" ORDER BY ${order}`);
      tables[name] = { columns, rows: jsonRows(result.rows, result.fields) };
    }
    const indexes = (await readIndexes(db)).map(({ definition: _definition, ...index }) => index);
    return { tables, indexes };
  } finally {
    await db.close();
  }
}

// ----------------------------------------------------------------------------------------------- server

function textResult(result: unknown, isError = false): CallToolResult {
  const content: CallToolResult['content'] = [{ type: 'text', text: typeof result === 'string' ? result : JSON.stringify(result, null, 2) }];
  if (isError) return { content, isError };
  return typeof result === 'object' && result !== null && !Array.isArray(result) ? { content, structuredContent: result as Record<string, unknown> } : { content };
}

/** Postgres's own wording, with the SQLSTATE and the 1-based character position it points at. */
function errorText(error: unknown): string {
  if (error instanceof PgError) {
    const { message, code, position, detail, hint } = error.info;
    const where = [code ? `SQLSTATE ${code}` : '', position ? `at character ${position}` : ''].filter(Boolean).join(', ');
    return [`ERROR: ${message}${where ? ` (${where})` : ''}`, detail ? `DETAIL: ${detail}` : '', hint ? `HINT: ${hint}` : ''].filter(Boolean).join('\n');
  }
  if (error instanceof TimeoutError) return `ERROR: ${error.message} (SQLSTATE 57014); the transaction was rolled back`;
  return `ERROR: ${(error as Error).message ?? String(error)}`;
}

function rowsResult(result: Result): { rows: Record<string, unknown>[]; row_count: number; truncated?: true } {
  const rows = jsonRows(result.rows.slice(0, MAX_ROWS), result.fields);
  return { rows, row_count: result.rows.length, ...(result.rows.length > MAX_ROWS ? { truncated: true as const } : {}) };
}

async function describeTable(db: Database, schema: string, table: string): Promise<unknown> {
  const relation = await findRelation(db, schema, table);
  if (!relation) throw new PgError({ message: `relation "${schema}.${table}" does not exist`, code: '42P01' });
  const constraints = await readConstraints(db, relation.oid);
  const columns = await readColumns(db, relation.oid, constraints);
  const indexes = await readIndexes(db, relation.oid);
  const kinds: Record<string, string> = { r: 'table', p: 'partitioned table', v: 'view', m: 'materialized view', f: 'foreign table' };
  return {
    schema: relation.schema,
    table: relation.name,
    kind: kinds[relation.kind] ?? relation.kind,
    columns: columns.map((c) => ({ name: c.name, type: c.type, nullable: c.nullable, default: c.default ?? null })),
    primary_key: constraints.find((c) => c.type === 'p')?.columns ?? [],
    foreign_keys: constraints
      .filter((c) => c.type === 'f')
      .map((c) => ({ name: c.name, columns: c.columns, references: c.target ? `${c.target.table}(${c.target.columns.join(', ')})` : null, definition: c.definition })),
    unique_constraints: constraints.filter((c) => c.type === 'u').map((c) => ({ name: c.name, columns: c.columns })),
    check_constraints: constraints.filter((c) => c.type === 'c').map((c) => ({ name: c.name, definition: c.definition })),
    indexes: indexes.map((i) => ({ name: i.name, columns: i.columns, unique: i.unique, definition: i.definition })),
  };
}

async function listTables(db: Database, schema: string): Promise<unknown> {
  const relations = await listRelations(db, ['r', 'p', 'v', 'm', 'f'], schema);
  if (!relations.length) {
    const { rows } = await db.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    if (!rows.length) throw new PgError({ message: `schema "${schema}" does not exist`, code: '3F000' });
  }
  const kinds: Record<string, string> = { r: 'table', p: 'table', v: 'view', m: 'materialized view', f: 'foreign table' };
  const tables = [];
  for (const r of [...relations].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    let rows: number | null = null;
    if (r.kind === 'r' || r.kind === 'p' || r.kind === 'm') {
      const count = await db.query(`SELECT count(*)::int AS n FROM ${quoteIdent(r.schema)}.${quoteIdent(r.name)}`);
      rows = (count.rows[0] as { n: number } | undefined)?.n ?? null;
    }
    tables.push({ name: r.name, kind: kinds[r.kind] ?? r.kind, rows });
  }
  return { schema, tables };
}

const COUNTED = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE', 'COPY']);

async function executeSql(db: Database, sql: string): Promise<unknown> {
  const results = await db.exec(sql, 'write');
  // PGlite reports affectedRows summed over the statements so far; each statement's own count is the step.
  let before = 0;
  return {
    statements: results.map((r) => {
      const total = r.affectedRows ?? 0;
      const own = total >= before ? total - before : total;
      before = total;
      return {
        ...(r.command ? { command: r.command } : {}),
        ...(r.command && COUNTED.has(r.command) ? { rows_affected: own } : {}),
        // RETURNING (or a SELECT among the statements): the rows it produced.
        ...(r.fields.length ? rowsResult(r) : {}),
      };
    }),
  };
}

export async function createServer(sandbox: string, version: string): Promise<Server> {
  const info = (await loadRegistry()).get('postgres');
  if (!info) throw new Error('the postgres namespace file is missing');
  const db = await Database.open(join(sandbox, DATA_DIR));
  const server = new Server({ name: 'mcpbench-postgres', version }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: declaredTools(info) }));

  const handlers: Record<string, (args: Record<string, string>) => Promise<unknown>> = {
    query: async ({ sql }) => rowsResult(await db.query(sql!, [], 'read-only')),
    execute: ({ sql }) => executeSql(db, sql!),
    list_tables: ({ schema }) => listTables(db, schema ?? 'public'),
    describe_table: ({ table, schema }) => {
      // `sales.orders` without a schema argument names the schema too.
      const [s, t] = schema === undefined && table!.includes('.') ? splitTableName(table!) : [schema ?? 'public', table!];
      return describeTable(db, s, t);
    },
  };

  // One call at a time, as one database session serves them.
  let queue: Promise<unknown> = Promise.resolve();
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    const run = async (): Promise<CallToolResult> => {
      const { name, arguments: args = {} } = request.params;
      const tool = info.tools.get(name);
      const handler = handlers[name];
      if (!tool || !handler) throw new McpError(ErrorCode.InvalidParams, `unknown tool: ${name}`);
      if (!tool.validateInput(args)) {
        const problems = (tool.validateInput.errors ?? []).map((e) => `${e.instancePath || 'arguments'} ${e.message}`).join('; ');
        return textResult(`invalid arguments for ${name}: ${problems}`, true);
      }
      try {
        return textResult(await handler(args as Record<string, string>));
      } catch (error) {
        return textResult(errorText(error), true);
      }
    };
    const result = queue.then(run, run);
    queue = result.catch(() => undefined);
    return result;
  });
  // A clean shutdown leaves the data directory ready to snapshot without recovery.
  server.onclose = () => {
    queue = queue.then(() => db.close()).catch(() => undefined);
  };
  return server;
}

export const runtime: NamespaceRuntime<PostgresState> = { seed, snapshot, createServer };
