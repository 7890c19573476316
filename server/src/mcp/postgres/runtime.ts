/**
 * The `postgres` namespace's real server: Postgres itself (PGlite: Postgres compiled to WebAssembly, no
 * network, no install) with its data directory in the sandbox, `<sandbox>/pgdata`; or, with
 * `MCPBENCH_DATABASE_URL` set, a database of its own on a Postgres server the user runs (external.ts).
 * Both are seeded by the same SQL (seed-sql.ts), read by the same catalog code and served by the same tools.
 *
 * Start-up cost is dominated by initdb, so seeding is done once per distinct state: `seedTemplate` builds a
 * closed data directory, which is cached under the OS temp folder by the canonical hash of the state (and the
 * PGlite version), and every episode gets a plain file copy of it (`cloneSandbox`).
 */
import { copyFile, mkdir, readdir, rm } from 'node:fs/promises';
import { constants, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { NamespaceRuntime } from '../namespace.ts';
import { loadRegistry } from '../registry.ts';
import { serveTools } from '../serve-tools.ts';
import { canonicalHash } from '../../canonical-json.ts';
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
import { Database, PgError, TimeoutError, pglite, type Queryable, type Result } from './database.ts';
import { createDatabase, databaseUrl, DATABASE_FILE, DATABASE_URL_ENV, dropDatabase, ExternalDatabase, readRecord, requireUrl, urlFor, writeRecord } from './external.ts';
import { build } from './seed-sql.ts';
import { applyStyles, readStyles, seededStyles, writeStyles } from './time-format.ts';
import { normalizeState, type PostgresState } from './state.ts';

export const DATA_DIR = 'pgdata';
/** Rows a tool returns at most; the result says when more were cut. */
const MAX_ROWS = 1000;
// Bump when the way a state is built into a data directory changes, so old cached templates are not reused.
const TEMPLATE_FORMAT = 1;

// ---------------------------------------------------------------------------------------------- seeding

/**
 * Copies a data directory (~1,000 files, ~40 MB) without blocking the event loop: the runner serves other
 * episodes' calls meanwhile (a synchronous copy held every gateway of the process for ~150 ms).
 */
async function copyTree(from: string, to: string): Promise<void> {
  await mkdir(to, { recursive: true });
  const entries = await readdir(from, { withFileTypes: true });
  await Promise.all(
    entries.map((entry) => {
      const source = join(from, entry.name);
      const target = join(to, entry.name);
      // A copy-on-write clone where the file system offers one, a plain copy elsewhere.
      return entry.isDirectory() ? copyTree(source, target) : copyFile(source, target, constants.COPYFILE_FICLONE);
    }),
  );
}

/** Copies a closed data directory (a template) into a sandbox as `<sandbox>/pgdata`. */
export async function cloneSandbox(templateDir: string, sandbox: string): Promise<void> {
  const target = join(sandbox, DATA_DIR);
  await rm(target, { recursive: true, force: true });
  await copyTree(templateDir, target);
}

function cacheRoot(): string {
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
  await copyTree(await blankTemplate(), dir);
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

/** A fresh database on the user's server, built from scratch (real Postgres builds a state in moments). */
async function seedExternal(url: string, state: PostgresState, sandbox: string): Promise<void> {
  // Seeding a sandbox again (`serve --state` on a used one) replaces its database.
  await dispose(sandbox);
  rmSync(join(sandbox, DATA_DIR), { recursive: true, force: true });
  const record = await createDatabase(url, sandbox);
  writeRecord(sandbox, record);
  try {
    const db = await ExternalDatabase.connect(urlFor(url, record.database));
    try {
      await build(db, state);
    } finally {
      await db.close();
    }
  } catch (error) {
    await dispose(sandbox).catch(() => undefined);
    throw error;
  }
}

export async function seed(state: PostgresState, sandbox: string): Promise<void> {
  rmSync(join(sandbox, END_STATE_FILE), { force: true });
  writeStyles(sandbox, seededStyles(state));
  const url = databaseUrl();
  if (url) return seedExternal(url, state, sandbox);
  rmSync(join(sandbox, DATABASE_FILE), { force: true });
  await cloneSandbox(await templateFor(state), sandbox);
}

/** The sandbox's database, wherever the seed put it. */
async function openSandbox(sandbox: string): Promise<Queryable> {
  const record = readRecord(sandbox);
  if (record) return ExternalDatabase.connect(urlFor(requireUrl(record), record.database));
  return Database.open(join(sandbox, DATA_DIR));
}

/** Drops the sandbox's database on the user's server (after the snapshot); PGlite's goes with the folder. */
export async function dispose(sandbox: string): Promise<void> {
  const record = readRecord(sandbox);
  if (!record) return;
  await dropDatabase(requireUrl(record), record.database);
  rmSync(join(sandbox, DATABASE_FILE), { force: true });
}

// --------------------------------------------------------------------------------------------- snapshot

/**
 * Where an earlier version's server left the end state it read through the agent's own session: no longer
 * written or read (the judge opens the data directory afresh), removed when a server starts.
 */
export const END_STATE_FILE = 'end-state.json';

/**
 * The database's tables, rows and indexes in the state shape, dates and times in the form they were seeded
 * in. A database that no longer answers a catalog
 * query (PGlite wedged by a statement it cannot run, such as `COPY ... TO PROGRAM`, answers every query
 * with nothing) is an error, never an empty state.
 */
async function readState(db: Queryable, sandbox: string): Promise<PostgresState> {
  const health = await db.query('SELECT count(*)::int AS n FROM pg_catalog.pg_class');
  const classes = (health.rows[0] as { n?: unknown } | undefined)?.n;
  if (typeof classes !== 'number' || classes <= 0) throw new Error('the database no longer answers catalog queries: its end state cannot be read');
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
  return applyStyles({ tables, indexes }, readStyles(sandbox));
}

/**
 * What the judge's session undoes before it reads: whatever the agent left that a new session starts with
 * (`ALTER ROLE ... SET role`, a search_path) and whatever it could set; the session user (the superuser that
 * opened the data directory) with row security off, so a policy can never hide rows from the judge (a table
 * that one still governs is an error, never a smaller state).
 */
export const JUDGE_SESSION_SQL = 'SET SESSION AUTHORIZATION DEFAULT; SET ROLE NONE; RESET ALL; SET row_security = off; SET search_path = pg_catalog, public';

/**
 * The end state, read through a connection the agent never touched: a fresh instance on the data directory
 * after the agent's server stopped (PGlite), or a new connection (the user's server), its session reset
 * (JUDGE_SESSION_SQL). Never the agent's own session, whose settings (a role, row security) would apply to
 * the judge.
 */
export async function snapshot(sandbox: string): Promise<PostgresState> {
  const db = await openSandbox(sandbox);
  try {
    await db.exec(JUDGE_SESSION_SQL);
    return await readState(db, sandbox);
  } finally {
    await db.close();
  }
}

// ----------------------------------------------------------------------------------------------- server

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

async function describeTable(db: Queryable, schema: string, table: string): Promise<unknown> {
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

async function listTables(db: Queryable, schema: string): Promise<unknown> {
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

async function executeSql(db: Queryable, sql: string): Promise<unknown> {
  const results = await db.exec(sql, 'write');
  return {
    statements: results.map((r) => ({
      ...(r.command ? { command: r.command } : {}),
      ...(r.command && COUNTED.has(r.command) ? { rows_affected: r.affectedRows ?? 0 } : {}),
      // RETURNING (or a SELECT among the statements): the rows it produced.
      ...(r.fields.length ? rowsResult(r) : {}),
    })),
  };
}

async function createServer(sandbox: string, version: string): Promise<Server> {
  const info = (await loadRegistry()).get('postgres');
  if (!info) throw new Error('the postgres namespace file is missing');
  // An end state left by an earlier server on this sandbox is stale from the first statement on.
  rmSync(join(sandbox, END_STATE_FILE), { force: true });
  const db = await openSandbox(sandbox);
  const server = new Server({ name: 'mcpbench-postgres', version }, { capabilities: { tools: {} } });

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

  // Every error is the agent's to read (a syntax error, a constraint, a timeout), in Postgres's own wording.
  const served = serveTools(server, info, { handlers, errorText });
  // On a clean shutdown, after the agent's last statement, the server closes the database, which leaves the
  // data directory ready for the judge's own instance (snapshot) to open without recovery. (Pending statements
  // keep the process alive until both are done.)
  server.onclose = () => {
    void served
      .afterCalls(async () => undefined)
      .catch(() => undefined)
      .then(() => db.close())
      .catch(() => undefined);
  };
  return server;
}

/**
 * A server on a sandbox seeded on the user's Postgres reaches it over the network, with the URL (not stored
 * in the sandbox) in its environment; one on PGlite needs neither.
 */
export function network(sandbox: string): { env: Record<string, string> } | undefined {
  const record = readRecord(sandbox);
  return record ? { env: { [DATABASE_URL_ENV]: requireUrl(record) } } : undefined;
}

/** The state a SQL script builds in an empty database (a dump, a schema with its data), read back as a snapshot is. */
async function stateFrom(sql: string, scratch: string): Promise<PostgresState> {
  const dir = join(scratch, DATA_DIR);
  await copyTree(await blankTemplate(), dir);
  const db = await Database.open(dir);
  try {
    await db.exec(sql, 'write');
    return await readState(db, scratch);
  } finally {
    await db.close();
  }
}

export const runtime: NamespaceRuntime<PostgresState> & {
  dispose(sandbox: string): Promise<void>;
  network(sandbox: string): { env: Record<string, string> } | undefined;
} = { seed, snapshot, createServer, dispose, network, stateFrom };
