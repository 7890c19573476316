/**
 * A PGlite database on a data directory, run in a worker thread. PGlite executes Postgres as WebAssembly on
 * the thread that calls it, and `statement_timeout` never fires there (the wasm build has no timer signals):
 * a runaway statement would freeze the MCP server itself. In a worker, a call that overruns its time limit
 * is cut off by terminating the thread; the next call reopens the data directory, where Postgres's own crash
 * recovery rolls the interrupted transaction back, as a real server does after a cancelled statement.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';

/** How long a statement (a tool call, a seeding step) may run before it is cancelled. */
export const STATEMENT_TIMEOUT_MS = Number(process.env.MCPBENCH_PG_STATEMENT_TIMEOUT_MS) || 15_000;
/** Opening a data directory; a first open of an empty directory runs initdb, which takes seconds. */
const OPEN_TIMEOUT_MS = 120_000;

export interface Field {
  name: string;
  dataTypeID: number;
}

export interface Result {
  rows: Record<string, unknown>[];
  fields: Field[];
  affectedRows?: number;
  command?: string;
}

/** A Postgres error as the client library reports it; `position` is 1-based in the statement text. */
interface PgErrorInfo {
  message: string;
  code?: string;
  position?: string;
  detail?: string;
  hint?: string;
}

/**
 * What the seeding, the snapshot and the tools need of a database, whichever Postgres serves it: PGlite in
 * the sandbox (`Database`) or a server the user runs (`ExternalDatabase`, external.ts). `mode` as in `Request`.
 */
export interface Queryable {
  /** One statement through the extended protocol (parameters, always as Postgres's text form). */
  query(sql: string, params?: (string | null)[], mode?: 'plain' | 'read-only' | 'write'): Promise<Result>;
  /** Any number of `;`-separated statements through the simple protocol: one result per statement, each
   * with its own `affectedRows`. */
  exec(sql: string, mode?: 'plain' | 'write'): Promise<Result[]>;
  close(): Promise<void>;
}

export class PgError extends Error {
  constructor(readonly info: PgErrorInfo) {
    super(info.message);
  }
}

/**
 * What the worker can do. `mode`: `read-only` runs the statement in a READ ONLY transaction that is rolled
 * back; `write` runs it in a transaction and then checkpoints, so the files on disk hold every committed
 * change even if the process is killed afterwards; `plain` runs it as it is.
 */
type Request =
  | { op: 'query'; sql: string; params?: (string | null)[]; mode: 'plain' | 'read-only' | 'write'; textParams?: boolean }
  | { op: 'exec'; sql: string; mode: 'plain' | 'write' };

// Runs in the worker (CommonJS, evaluated): PGlite is required from the path the parent resolved, so the
// code works the same from the sources (tsx) and from the esbuild bundle, where PGlite's wasm and data files
// must stay in node_modules next to its own code.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { PGlite } = require(workerData.pglite);
const text = (v) => v;
// Dates, times and 64-bit integers stay as Postgres prints them; the parent turns them into JSON values.
const parsers = { 20: text, 1082: text, 1083: text, 1114: text, 1184: text, 1186: text, 1266: text };
let db;
let passThrough;
function plain(error) {
  const { message, code, position, detail, hint } = error ?? {};
  return { message: String(message ?? error), code, position, detail, hint };
}
async function handle(m) {
  if (m.op === 'open') {
    db = await PGlite.create(workerData.dir, { parsers, startParams: [...PGlite.defaultStartParams, ...workerData.settings] });
    await db.exec("SET TimeZone = 'UTC'; SET DateStyle = 'ISO, MDY'; SET IntervalStyle = 'iso_8601'");
    return true;
  }
  if (m.op === 'close') {
    if (db && !db.closed) await db.close();
    return true;
  }
  let options;
  if (m.textParams) {
    // Every parameter arrives as Postgres's text form: no client-side conversion by inferred type.
    passThrough ??= Object.fromEntries(Object.keys(db.serializers).map((k) => [k, (v) => (typeof v === 'string' ? v : String(v))]));
    options = { serializers: passThrough };
  }
  const run = (q) => (m.op === 'query' ? q.query(m.sql, m.params ?? [], options) : q.exec(m.sql));
  if (m.mode === 'plain') return run(db);
  if (m.mode === 'read-only') {
    await db.exec('BEGIN READ ONLY');
    try {
      return await run(db);
    } finally {
      await db.exec('ROLLBACK');
    }
  }
  const result = await db.transaction((tx) => run(tx));
  await db.exec('CHECKPOINT');
  return result;
}
parentPort.on('message', (m) => {
  handle(m).then(
    (ok) => parentPort.postMessage({ id: m.id, ok }),
    (error) => parentPort.postMessage({ id: m.id, error: plain(error) }),
  );
});
`;

/**
 * Server settings on top of PGlite's own start parameters. Postgres's default 128 MB of shared buffers is
 * zeroed page by page at every start in WebAssembly (a third of a start's time: 365 -> 260 ms, and ~140 ms
 * less CPU, with 16 MB) and held for the server's life; a sandbox's database is a few megabytes at most,
 * and 16 MB still caches it whole. Query results do not depend on it.
 */
const PGLITE_SETTINGS = ['-c', 'shared_buffers=16MB'];

let pgliteEntry: { path: string; version: string } | undefined;

/** PGlite's CommonJS entry and version (the version keys the seed cache: a new build may change the files). */
export function pglite(): { path: string; version: string } {
  if (!pgliteEntry) {
    // Resolved at run time, not bundled: from dist/cli.js this finds the installed package.
    const path = createRequire(__filename).resolve('@electric-sql/pglite');
    const manifest = JSON.parse(readFileSync(join(dirname(path), '..', 'package.json'), 'utf8')) as { version: string };
    pgliteEntry = { path, version: manifest.version };
  }
  return pgliteEntry;
}

export class TimeoutError extends Error {}

export class Database implements Queryable {
  private worker: Worker | undefined;
  private opening: Promise<void> | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();

  private constructor(readonly dataDir: string) {}

  /** Opens (or, for an empty directory, initialises) the database in `dataDir`. */
  static async open(dataDir: string): Promise<Database> {
    const database = new Database(dataDir);
    await database.ensureOpen();
    return database;
  }

  private ensureOpen(): Promise<void> {
    if (this.worker) return Promise.resolve();
    this.opening ??= (async () => {
      const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { pglite: pglite().path, dir: this.dataDir, settings: PGLITE_SETTINGS } });
      worker.on('message', (m: { id: number; ok?: unknown; error?: PgErrorInfo }) => {
        const waiter = this.pending.get(m.id);
        if (!waiter) return;
        this.pending.delete(m.id);
        if (m.error) waiter.reject(new PgError(m.error));
        else waiter.resolve(m.ok);
      });
      worker.on('error', (error) => this.fail(worker, error));
      worker.on('exit', (code) => this.fail(worker, new Error(`the database worker exited (code ${code})`)));
      // An idle database must not keep the process alive once its client has gone: every write is
      // checkpointed, so exiting without a clean close loses nothing. (After the listeners: they re-ref.)
      worker.unref();
      this.worker = worker;
      try {
        await this.send({ op: 'open' }, OPEN_TIMEOUT_MS);
      } catch (error) {
        await this.discard();
        throw error;
      }
    })().finally(() => {
      this.opening = undefined;
    });
    return this.opening;
  }

  private fail(worker: Worker, error: Error): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    for (const waiter of this.pending.values()) waiter.reject(error);
    this.pending.clear();
  }

  private async discard(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    this.fail(worker, new TimeoutError('the database was stopped'));
    await worker.terminate();
  }

  private send(message: Request | { op: 'open' | 'close' }, timeoutMs: number): Promise<unknown> {
    const worker = this.worker;
    if (!worker) return Promise.reject(new Error('the database is not open'));
    const id = ++this.nextId;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        if (!this.pending.has(id)) return;
        this.pending.delete(id);
        reject(new TimeoutError(`canceling statement due to statement timeout (${timeoutMs / 1000} s)`));
        // Cutting the thread off is the only way to stop running wasm; the next call reopens.
        if (this.worker === worker) {
          this.worker = undefined;
          void worker.terminate();
          for (const waiter of this.pending.values()) waiter.reject(new TimeoutError('the database was restarted after a statement timeout'));
          this.pending.clear();
        }
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      worker.postMessage({ ...message, id });
    });
  }

  /** One statement through the extended protocol (parameters allowed). */
  async query(sql: string, params: (string | null)[] = [], mode: 'plain' | 'read-only' | 'write' = 'plain', timeoutMs = STATEMENT_TIMEOUT_MS): Promise<Result> {
    await this.ensureOpen();
    return (await this.send({ op: 'query', sql, params, mode, textParams: params.length > 0 }, timeoutMs)) as Result;
  }

  /** Any number of `;`-separated statements through the simple protocol: one result per statement. */
  async exec(sql: string, mode: 'plain' | 'write' = 'plain', timeoutMs = STATEMENT_TIMEOUT_MS): Promise<Result[]> {
    await this.ensureOpen();
    const results = (await this.send({ op: 'exec', sql, mode }, timeoutMs)) as Result[];
    // PGlite reports affectedRows summed over the statements so far; each statement's own count is the step.
    let before = 0;
    return results.map((r) => {
      const total = r.affectedRows ?? 0;
      const own = total >= before ? total - before : total;
      before = total;
      return { ...r, affectedRows: own };
    });
  }

  /** Shuts Postgres down cleanly (a shutdown checkpoint), so the directory can be copied or snapshotted. */
  async close(): Promise<void> {
    if (this.opening) await this.opening.catch(() => undefined);
    const worker = this.worker;
    if (!worker) return;
    try {
      await this.send({ op: 'close' }, STATEMENT_TIMEOUT_MS);
    } finally {
      this.worker = undefined;
      await worker.terminate();
    }
  }
}
