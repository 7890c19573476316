/**
 * Opening the results database: embedded PGlite by default (a data folder under the project, no server), or
 * a PostgreSQL server with `postgres://...`: one dialect, the same migrations, the same queries. Opening
 * migrates to the latest schema.
 */
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import { FolderLockError, lockFolder, type FolderLock } from '../folder-lock.ts';
import pg from 'pg';
import { migrationProvider } from './migrations.ts';
import { PGliteDialect } from './pglite-dialect.ts';
import type { ResultsDatabase } from './schema.ts';
import { McpbenchError } from '../errors.ts';

/** Where `--db` points when it is not given: a PGlite data folder beside the run folders. */
export const DEFAULT_DB_PATH = 'runs/results.pglite';
export const DB_ENV = 'MCPBENCH_RESULTS_DB';

export type ResultsDb = Kysely<ResultsDatabase>;

export interface OpenedDb {
  db: ResultsDb;
  kind: 'pglite' | 'postgres';
  /** What was opened, with any password hidden. */
  location: string;
  close(): Promise<void>;
  /** The lock held on a PGlite folder while it is open (released by close). */
  lock?: FolderLock;
}

/** An error's message, whatever was thrown (PGlite and pg may throw plain objects). */
export function errorText(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (error && typeof error === 'object' && 'message' in error && typeof error.message === 'string') return error.message;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}

export class ResultsDbError extends McpbenchError {
  static override readonly code: string = 'results-db';
  constructor(
    message: string,
    readonly kind: 'target' | 'locked' | 'open' | 'migrate' = 'open',
  ) {
    super(message);
  }
}

export interface OpenDbOptions {
  /** What the opener does, for the message a second opener of the same PGlite folder gets. */
  purpose?: string;
  /** How long to wait for another process to let go of a PGlite folder (default 120 s, MCPBENCH_DB_WAIT_MS). */
  waitMs?: number;
}

/** Why `target` cannot name a results database (a folder, postgres:// or postgresql://, memory://), or undefined. */
export function dbTargetProblem(target: string, cwd = process.cwd()): string | undefined {
  if (isPostgresUrl(target) || target === 'memory://') return undefined;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(target)) return `--db ${target.replace(/\/\/[^@/]*@/, '//***@')}: not a database this tool opens: use a folder (PGlite) or postgres:// / postgresql://`;
  const path = resolve(cwd, target);
  if (existsSync(path) && !statSync(path).isDirectory()) return `--db ${path}: a file, not a PGlite folder: name a folder (it is created) or a postgres:// URL`;
  return undefined;
}

export const isPostgresUrl = (target: string) => /^postgres(ql)?:\/\//i.test(target);

function hidePassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://(unparsable url)';
  }
}

/** int8 and numeric as JS numbers (counts and seeds fit), as PGlite returns them. */
const pgTypes = {
  getTypeParser: ((oid: number, format?: string) => {
    if (oid === pg.types.builtins.INT8 || oid === pg.types.builtins.NUMERIC) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format as 'text');
  }) as typeof pg.types.getTypeParser,
};

/**
 * Opens (creating and migrating as needed) the database at `target`: a `postgres://` URL, `memory://` (an
 * in-memory PGlite, for tests and one-off comparisons), or a folder for PGlite (default runs/results.pglite,
 * or MCPBENCH_RESULTS_DB), relative to `cwd`.
 */
export async function openResultsDb(target: string | undefined, cwd = process.cwd(), options: OpenDbOptions = {}): Promise<OpenedDb> {
  const chosen = target ?? process.env[DB_ENV] ?? DEFAULT_DB_PATH;
  const problem = dbTargetProblem(chosen, cwd);
  if (problem) throw new ResultsDbError(problem, 'target');
  let lock: FolderLock | undefined;
  let db: ResultsDb;
  let kind: OpenedDb['kind'];
  let location: string;
  if (isPostgresUrl(chosen)) {
    const pool = new pg.Pool({ connectionString: chosen, max: 4, types: pgTypes, connectionTimeoutMillis: 15_000 });
    // A connection that dies while idle must not take the process down.
    pool.on('error', () => undefined);
    db = new Kysely<ResultsDatabase>({ dialect: new PostgresDialect({ pool }) });
    kind = 'postgres';
    location = hidePassword(chosen);
  } else {
    const { PGlite } = await import('@electric-sql/pglite');
    let pglite;
    if (chosen === 'memory://') {
      pglite = new PGlite();
      location = 'memory://';
    } else {
      location = resolve(cwd, chosen);
      // PGlite is one process's database: two processes on one folder corrupt it, so one opener at a time.
      const envWait = Number(process.env.MCPBENCH_DB_WAIT_MS);
      const waitMs = options.waitMs ?? (Number.isFinite(envWait) && envWait >= 0 ? envWait : 120_000);
      try {
        lock = await lockFolder(location, { purpose: options.purpose ?? 'mcpbench results', waitMs });
      } catch (error) {
        if (error instanceof FolderLockError) throw new ResultsDbError(`the results database ${error.message}`, 'locked');
        throw error;
      }
      try {
        mkdirSync(location, { recursive: true });
        pglite = new PGlite(location);
        await pglite.waitReady;
      } catch (error) {
        await lock.release();
        throw new ResultsDbError(`${location}: cannot open the results database: ${errorText(error)}`, 'open');
      }
    }
    db = new Kysely<ResultsDatabase>({ dialect: new PGliteDialect(pglite) });
    kind = 'pglite';
  }
  try {
    const { error, results } = await new Migrator({ db, provider: migrationProvider }).migrateToLatest();
    if (error) {
      const failed = results?.find((r) => r.status === 'Error')?.migrationName;
      throw new ResultsDbError(`${location}: migrating the results database failed${failed ? ` at ${failed}` : ''}: ${errorText(error)}`, 'migrate');
    }
  } catch (error) {
    await db.destroy().catch(() => undefined);
    await lock?.release();
    if (error instanceof ResultsDbError) throw error;
    throw new ResultsDbError(`${location}: cannot open the results database: ${errorText(error)}`, 'open');
  }
  let closed: Promise<void> | undefined;
  const close = () =>
    (closed ??= (async () => {
      try {
        await db.destroy();
      } finally {
        await lock?.release();
      }
    })());
  return { db, kind, location, close, ...(lock ? { lock } : {}) };
}

/** The database's size on disk as PostgreSQL counts it (pg_database_size), in bytes. */
export async function databaseSize(db: ResultsDb): Promise<number> {
  const { rows } = await sql<{ size: number }>`select pg_database_size(current_database())::float8 as size`.execute(db);
  return rows[0]!.size;
}

/**
 * The schema as Markdown, from the database's own catalog: every table and column with its type and its
 * COMMENT ON text (docs/results-database.md is this, for the latest migration).
 */
export async function schemaMarkdown(db: ResultsDb): Promise<string> {
  const { rows: tables } = await sql<{ name: string; doc: string | null }>`
    select c.relname as name, obj_description(c.oid, 'pg_class') as doc from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = current_schema() and c.relkind = 'r' and c.relname not like 'kysely\\_%' order by c.oid`.execute(db);
  const { rows: columns } = await sql<{ table_name: string; column_name: string; type: string; nullable: string; doc: string | null }>`
    select c.table_name, c.column_name, format_type(a.atttypid, a.atttypmod) as type, c.is_nullable as nullable,
           col_description(format('%I.%I', c.table_schema, c.table_name)::regclass, c.ordinal_position) as doc
      from information_schema.columns c
      join pg_attribute a on a.attrelid = format('%I.%I', c.table_schema, c.table_name)::regclass and a.attname = c.column_name
     where c.table_schema = current_schema() order by c.table_name, c.ordinal_position`.execute(db);
  const { rows: migrations } = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db);
  const out = [
    '# The results database',
    '',
    'Generated by `npm run results:docs` from the COMMENT ON text of the migrations in `server/src/results/migrations.ts`',
    `(applied: ${migrations.map((m) => `\`${m.name}\``).join(', ')}). Do not edit by hand: change a migration's comments, or add a migration.`,
    '',
    'The database is embedded PGlite by default (`runs/results.pglite`, or `--db DIR`), or a PostgreSQL server (`--db postgres://...`);',
    'both get the same schema through the same numbered migrations (Kysely\'s migrator, recorded in `kysely_migration`).',
    'It holds traces and, where the task files were found, the tasks themselves: treat it like `runs/` (private for a sealed set).',
  ];
  for (const table of tables) {
    out.push('', `## \`${table.name}\``, '', table.doc ?? '', '', '| column | type | null | meaning |', '| --- | --- | --- | --- |');
    for (const c of columns.filter((c) => c.table_name === table.name)) {
      out.push(`| \`${c.column_name}\` | ${c.type} | ${c.nullable === 'YES' ? 'yes' : 'no'} | ${(c.doc ?? '').replace(/\|/g, '\\|')} |`);
    }
  }
  return out.join('\n') + '\n';
}

/** Opens the database, runs `work`, closes it (also when `work` throws). */
export async function withResultsDb<T>(target: string | undefined, cwd: string, work: (opened: OpenedDb) => Promise<T>): Promise<T> {
  let opened: OpenedDb | undefined;
  try {
    opened = await openResultsDb(target, cwd);
    return await work(opened);
  } finally {
    await opened?.close();
  }
}
