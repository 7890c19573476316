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
