/**
 * The `postgres` namespace on a Postgres server the user runs (`MCPBENCH_DATABASE_URL`, set by
 * `--database-url`) instead of PGlite. Every sandbox gets a fresh database of its own on that server: the
 * seed creates it and names it in `<sandbox>/database.json`, the server and the snapshot connect to it, and
 * `dispose` drops it after the snapshot. The URL's own database is only used to create and drop them, so
 * its role needs CREATEDB; the agent's SQL runs with that role's rights.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { PgError, STATEMENT_TIMEOUT_MS, TimeoutError, type Field, type Queryable, type Result } from './database.ts';

export const DATABASE_URL_ENV = 'MCPBENCH_DATABASE_URL';
/** Names the sandbox's database (never the URL: it may carry a password). */
export const DATABASE_FILE = 'database.json';
/** Reaching the server and logging in. */
const CONNECT_TIMEOUT_MS = 10_000;
// The server cancels a statement at statement_timeout; the client gives up a little later, for a statement
// that turned the timeout off (`SET statement_timeout = 0`) or a server that stopped answering.
const CLIENT_GRACE_MS = 5_000;

interface DatabaseRecord {
  /** The database on the server. */
  database: string;
  /** host:port (or socket folder) of the server, for messages. */
  server: string;
}

/** The user's server from the environment; undefined: the embedded default (PGlite). */
export function databaseUrl(): string | undefined {
  const url = process.env[DATABASE_URL_ENV]?.trim();
  return url ? url : undefined;
}

function parseUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`${DATABASE_URL_ENV} is not a URL (postgres://user:password@host:port/database)`);
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new Error(`${DATABASE_URL_ENV} must be a postgres:// or postgresql:// URL, not ${parsed.protocol}`);
  }
  return parsed;
}

/** The same server and credentials, another database. */
export function urlFor(url: string, database: string): string {
  const parsed = parseUrl(url);
  parsed.pathname = `/${encodeURIComponent(database)}`;
  return parsed.toString();
}

/** Where the URL points, without credentials. */
function serverLabel(url: string): string {
  const parsed = parseUrl(url);
  const host = parsed.searchParams.get('host') ?? (parsed.hostname || 'localhost');
  return `${host}:${parsed.port || '5432'}`;
}

export function readRecord(sandbox: string): DatabaseRecord | undefined {
  const file = join(sandbox, DATABASE_FILE);
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8')) as DatabaseRecord;
}

export function writeRecord(sandbox: string, record: DatabaseRecord): void {
  writeFileSync(join(sandbox, DATABASE_FILE), `${JSON.stringify(record, null, 2)}\n`);
}

/** The URL a sandbox seeded on an external server needs; it is not stored, so it must still be set. */
export function requireUrl(record: DatabaseRecord): string {
  const url = databaseUrl();
  if (!url) throw new Error(`the sandbox's database ${record.database} is on ${record.server}, but ${DATABASE_URL_ENV} is not set`);
  return url;
}

// ------------------------------------------------------------------------------------------ value types

// Values arrive as PGlite (with the worker's parsers) hands them over, so catalog.ts turns both into the
// same JSON: dates, times, intervals and 64-bit integers as Postgres prints them, small numbers as numbers,
// booleans, parsed JSON, bytea as bytes, arrays element by element, everything else as text.
// (int8, date, time, timestamp, timestamptz, interval and timetz are among the rest: the worker's parsers.)
const AS_NUMBER = new Set([21, 23, 26, 700, 701]);

function elementParser(oid: number): ((text: string) => unknown) | undefined {
  if (AS_NUMBER.has(oid)) return (text) => +text;
  if (oid === 16) return (text) => text === 't';
  if (oid === 114 || oid === 3802) return (text) => JSON.parse(text) as unknown;
  if (oid === 17) {
    return (text) => {
      const hex = text.slice(2);
      return Uint8Array.from({ length: hex.length / 2 }, (_, i) => parseInt(hex.substring(i * 2, i * 2 + 2), 16));
    };
  }
  return undefined;
}

const identity = (text: string): string => text;
const arrayParser = (pg.types as unknown as { arrayParser: { create(source: string, transform: (entry: string) => unknown): { parse(): unknown[] } } }).arrayParser;

function typeParsers(arrays: Map<number, number>): pg.CustomTypesConfig {
  const getTypeParser = (oid: number): ((text: string) => unknown) => {
    const element = arrays.get(oid);
    if (element !== undefined) {
      const parse = elementParser(element) ?? identity;
      return (text) => arrayParser.create(text, parse).parse();
    }
    return elementParser(oid) ?? identity;
  };
  return { getTypeParser } as unknown as pg.CustomTypesConfig;
}

// ------------------------------------------------------------------------------------------- connection

function pgError(error: unknown): Error {
  if (error instanceof pg.DatabaseError) {
    const { message, code, position, detail, hint } = error;
    return new PgError({ message, code, position, detail, hint });
  }
  return error instanceof Error ? error : new Error(String(error));
}

async function connect(url: string, arrays = new Map<number, number>()): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, types: typeParsers(arrays) });
  // A connection lost while idle is reported as an event; unheard, it would crash the server process.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    const e = pgError(error);
    throw e instanceof PgError ? e : new Error(`cannot reach the Postgres server at ${serverLabel(url)}: ${e.message}`);
  }
  return client;
}

/** One session on a sandbox's database, reopened after a statement the client had to give up on. */
export class ExternalDatabase implements Queryable {
  private client: pg.Client | undefined;
  private pid = 0;
  private connecting: Promise<pg.Client> | undefined;
  private readonly arrays = new Map<number, number>();

  private constructor(readonly url: string) {}

  static async connect(url: string): Promise<ExternalDatabase> {
    const database = new ExternalDatabase(url);
    await database.session();
    return database;
  }

  private session(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= (async () => {
      const client = await connect(this.url, this.arrays);
      try {
        // The session PGlite's worker sets up, so times print alike; and the server's own statement timeout.
        await client.query(`SET TimeZone = 'UTC'; SET DateStyle = 'ISO, MDY'; SET IntervalStyle = 'iso_8601'; SET statement_timeout = ${STATEMENT_TIMEOUT_MS}`);
        const pid = await client.query('SELECT pg_backend_pid() AS pid');
        this.pid = (pid.rows[0] as { pid: number }).pid;
        // Array columns are parsed element by element, as PGlite does for the array types it finds on open.
        const types = await client.query("SELECT a.oid::int AS array, a.typelem::int AS element FROM pg_type a WHERE a.typcategory = 'A' AND a.typelem <> 0");
        for (const row of types.rows as { array: number; element: number }[]) this.arrays.set(row.array, row.element);
      } catch (error) {
        await client.end().catch(() => undefined);
        throw pgError(error);
      }
      this.client = client;
      return client;
    })().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  /** Runs `work` on the session; past the client's deadline the session is ended and the statement killed. */
  private async run<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
    const client = await this.session();
    const timeoutMs = STATEMENT_TIMEOUT_MS + CLIENT_GRACE_MS;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new TimeoutError(`canceling statement due to statement timeout (${STATEMENT_TIMEOUT_MS / 1000} s)`)), timeoutMs);
    });
    try {
      return await Promise.race([work(client), deadline]);
    } catch (error) {
      // A timeout or a lost connection leaves the session in an unknown state; the next call reconnects.
      if (!(error instanceof pg.DatabaseError)) this.abandon(client);
      throw pgError(error);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Drops a session in an unknown state; the server rolls its transaction back when the backend ends. */
  private abandon(client: pg.Client): void {
    if (this.client === client) this.client = undefined;
    const pid = this.pid;
    void client.end().catch(() => undefined);
    void (async () => {
      const killer = await connect(this.url);
      try {
        await killer.query('SELECT pg_terminate_backend($1::int)', [pid]);
      } finally {
        await killer.end();
      }
    })().catch(() => undefined);
  }

  private static result(r: pg.QueryResult): Result {
    const fields: Field[] = r.fields.map((f) => ({ name: f.name, dataTypeID: f.dataTypeID }));
    return { rows: r.rows as Record<string, unknown>[], fields, ...(r.rowCount !== null ? { affectedRows: r.rowCount } : {}), ...(r.command ? { command: r.command } : {}) };
  }

  private static async transaction<T>(client: pg.Client, begin: string, work: () => Promise<T>, end: 'COMMIT' | 'ROLLBACK'): Promise<T> {
    await client.query(begin);
    let result: T;
    try {
      result = await work();
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
    await client.query(end);
    return result;
  }

  query(sql: string, params: (string | null)[] = [], mode: 'plain' | 'read-only' | 'write' = 'plain'): Promise<Result> {
    return this.run(async (client) => {
      // The extended protocol even without parameters: one statement, as PGlite's query takes.
      const once = async () => ExternalDatabase.result(await client.query({ text: sql, values: params, queryMode: 'extended' } as pg.QueryConfig));
      if (mode === 'plain') return once();
      if (mode === 'read-only') return ExternalDatabase.transaction(client, 'BEGIN READ ONLY', once, 'ROLLBACK');
      return ExternalDatabase.transaction(client, 'BEGIN', once, 'COMMIT');
    });
  }

  exec(sql: string, mode: 'plain' | 'write' = 'plain'): Promise<Result[]> {
    return this.run(async (client) => {
      const all = async () => {
        const results = (await client.query(sql)) as pg.QueryResult | pg.QueryResult[];
        return (Array.isArray(results) ? results : [results]).map((r) => ExternalDatabase.result(r));
      };
      return mode === 'plain' ? all() : ExternalDatabase.transaction(client, 'BEGIN', all, 'COMMIT');
    });
  }

  async close(): Promise<void> {
    if (this.connecting) await this.connecting.catch(() => undefined);
    const client = this.client;
    this.client = undefined;
    if (client) await client.end().catch(() => undefined);
  }
}

// --------------------------------------------------------------------------------------- the databases

async function withAdmin<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = await connect(url);
  try {
    await client.query(`SET statement_timeout = ${STATEMENT_TIMEOUT_MS}`);
    return await work(client);
  } catch (error) {
    throw pgError(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * A fresh, empty database for a sandbox: named after the sandbox (so a leftover one says where it came
 * from) with a random suffix (sandboxes at the same path in runs at once, or one after the other, never
 * share one). From template0 with the C locale, as PGlite's: the same collation orders text the same.
 */
export async function createDatabase(url: string, sandbox: string): Promise<DatabaseRecord> {
  const hash = createHash('sha256').update(resolve(sandbox)).digest('hex').slice(0, 12);
  const database = `mcpbench_${hash}_${randomBytes(4).toString('hex')}`;
  try {
    await withAdmin(url, (client) => client.query(`CREATE DATABASE "${database}" TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'`));
  } catch (error) {
    if (error instanceof PgError && error.info.code === '42501') {
      throw new PgError({ ...error.info, message: `${error.info.message} (the role in ${DATABASE_URL_ENV} needs CREATEDB: every sandbox gets a database of its own)` });
    }
    throw error;
  }
  return { database, server: serverLabel(url) };
}

/** Drops a sandbox's database, ending any session still on it. */
export async function dropDatabase(url: string, database: string): Promise<void> {
  const quoted = `"${database.replace(/"/g, '""')}"`;
  await withAdmin(url, async (client) => {
    try {
      await client.query(`DROP DATABASE IF EXISTS ${quoted} WITH (FORCE)`);
    } catch (error) {
      // Before Postgres 13 there is no FORCE: end the sessions first.
      if (!(error instanceof pg.DatabaseError) || error.code !== '42601') throw error;
      await client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database]);
      await client.query(`DROP DATABASE IF EXISTS ${quoted}`);
    }
  });
}
