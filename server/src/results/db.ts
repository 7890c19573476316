/**
 * Opening the results database: embedded PGlite by default (a data folder under the project, no server), or
 * a PostgreSQL server with `postgres://...`: one dialect, the same migrations, the same queries. Opening
 * migrates to the latest schema.
 */
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import pg from 'pg';
import { migrationProvider } from './migrations.ts';
import { PGliteDialect } from './pglite-dialect.ts';
import type { ResultsDatabase } from './schema.ts';

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
}

export class ResultsDbError extends Error {}

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
export async function openResultsDb(target: string | undefined, cwd = process.cwd()): Promise<OpenedDb> {
  const chosen = target ?? process.env[DB_ENV] ?? DEFAULT_DB_PATH;
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
      mkdirSync(location, { recursive: true });
      pglite = new PGlite(location);
    }
    db = new Kysely<ResultsDatabase>({ dialect: new PGliteDialect(pglite) });
    kind = 'pglite';
  }
  try {
    const { error, results } = await new Migrator({ db, provider: migrationProvider }).migrateToLatest();
    if (error) {
      const failed = results?.find((r) => r.status === 'Error')?.migrationName;
      throw new ResultsDbError(`${location}: migrating the results database failed${failed ? ` at ${failed}` : ''}: ${(error as Error).message ?? error}`);
    }
  } catch (error) {
    await db.destroy().catch(() => undefined);
    if (error instanceof ResultsDbError) throw error;
    throw new ResultsDbError(`${location}: cannot open the results database: ${(error as Error).message}`);
  }
  return { db, kind, location, close: () => db.destroy() };
}

/** The database's size on disk as PostgreSQL counts it (pg_database_size), in bytes. */
export async function databaseSize(db: ResultsDb): Promise<number> {
  const { rows } = await sql<{ size: number }>`select pg_database_size(current_database())::float8 as size`.execute(db);
  return rows[0]!.size;
}
