/**
 * A Kysely dialect over PGlite, written the way Kysely's documentation says a dialect is built: Postgres's own
 * adapter, query compiler and introspector, and a driver of our own. PGlite is one connection: the driver
 * hands it to one user at a time (a transaction keeps it until commit or rollback), so concurrent queries
 * queue instead of interleaving inside somebody else's transaction.
 *
 * (The published PGlite dialects either pin PGlite versions older than ours or pull a code generator and a
 * CLI framework in with them; this is the part we need.)
 */
import type { PGlite } from '@electric-sql/pglite';
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';

class PGliteConnection implements DatabaseConnection {
  constructor(private readonly pglite: PGlite) {}

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    const result = await this.pglite.query<R>(compiledQuery.sql, [...compiledQuery.parameters], { rowMode: 'object' });
    return {
      rows: result.rows,
      ...(result.affectedRows !== undefined ? { numAffectedRows: BigInt(result.affectedRows) } : {}),
    };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('the PGlite dialect does not stream query results');
  }
}

class PGliteDriver implements Driver {
  private readonly connection: PGliteConnection;
  /** The end of the queue of users of the one connection. */
  private tail: Promise<void> = Promise.resolve();
  private readonly releases = new Map<PGliteConnection, () => void>();

  constructor(private readonly pglite: PGlite) {
    this.connection = new PGliteConnection(pglite);
  }

  async init(): Promise<void> {
    await this.pglite.waitReady;
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((resolve) => (release = resolve));
    await previous;
    this.releases.set(this.connection, release);
    return this.connection;
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const modes = [settings.isolationLevel ? `isolation level ${settings.isolationLevel}` : '', settings.accessMode ?? ''].filter(Boolean);
    await connection.executeQuery(CompiledQuery.raw(modes.length ? `begin transaction ${modes.join(', ')}` : 'begin'));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const release = this.releases.get(connection as PGliteConnection);
    this.releases.delete(connection as PGliteConnection);
    release?.();
  }

  async destroy(): Promise<void> {
    await this.tail;
    if (!this.pglite.closed) await this.pglite.close();
  }
}

export class PGliteDialect implements Dialect {
  constructor(private readonly pglite: PGlite) {}

  createAdapter() {
    return new PostgresAdapter();
  }

  createDriver(): Driver {
    return new PGliteDriver(this.pglite);
  }

  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }

  createIntrospector(db: Kysely<any>) {
    return new PostgresIntrospector(db);
  }
}
