/**
 * The postgres namespace on a Postgres server the user runs (`MCPBENCH_DATABASE_URL`): against a throw-away
 * cluster started here, every sandbox gets a database of its own that the seed creates and `dispose` drops;
 * seeding and snapshotting give exactly what the embedded PGlite gives; the built CLI serves the same tools
 * with the same results; the server's statement timeout (and the client's deadline behind it) cancel
 * runaways; and every task's reference solutions pass and counterexamples fail, replayed over MCP.
 *
 * Needs PostgreSQL's server binaries (initdb, pg_ctl): the Debian package `postgresql`.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import pg from 'pg';
import { freePort } from '../free-port.ts';
import { checkEach, replay, solutionRuns, type SolutionRun } from './replay.ts';
import { startCluster, type Cluster } from '../postgres-cluster.ts';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { DATABASE_FILE, DATABASE_URL_ENV, readRecord } from '../../server/src/mcp/postgres/external.ts';
import { dispose, network, seed, snapshot } from '../../server/src/mcp/postgres/runtime.ts';
import { normalizeState } from '../../server/src/mcp/postgres/state.ts';
import { evaluate, stateLeafEvaluator } from '../../server/src/predicates/evaluate.ts';
import { parsePredicate } from '../../server/src/predicates/tree.ts';
import { collectTaskFiles } from '../../server/src/tasks/files.ts';
import type { Task } from '../../server/src/tasks/model.ts';

const cli = join(__dirname, '..', '..', 'dist', 'cli.js');
const tasks = collectTaskFiles([join(__dirname, '..', '..', 'test', 'fixtures', 'tasks', 'postgres')]).map((f) => JSON.parse(readFileSync(f, 'utf8')) as Task);
const SHIP_ORDER = () => tasks.find((t) => t.id === 'postgres-ship-order-001')!.initial_state.postgres;

let cluster: Cluster;

before(async () => {
  cluster = await startCluster();
  process.env[DATABASE_URL_ENV] = cluster.url;
});

after(() => {
  delete process.env[DATABASE_URL_ENV];
  cluster?.stop();
});

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: cluster.url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** The sandbox databases on the cluster. */
function databases(): Promise<string[]> {
  return admin(async (c) => (await c.query("SELECT datname FROM pg_database WHERE datname LIKE 'mcpbench\\_%' ORDER BY datname")).rows.map((r: { datname: string }) => r.datname));
}

/** Runs `work` with the embedded PGlite backend (the variable unset) for a comparison. */
async function withPglite<T>(work: () => Promise<T>): Promise<T> {
  delete process.env[DATABASE_URL_ENV];
  try {
    return await work();
  } finally {
    process.env[DATABASE_URL_ENV] = cluster.url;
  }
}

function sandbox(): string {
  return mkdtempSync(join(tmpdir(), 'mcpbench-postgres-url-'));
}

// ------------------------------------------------------------------------------------------------ tests

const MANY_TYPES = normalizeState({
  tables: {
    customers: {
      columns: [
        { name: 'id', type: 'integer', primary_key: true },
        { name: 'email', type: 'varchar(120)', nullable: false, unique: true },
        { name: 'Nick Name', type: 'text' },
        { name: 'vip', type: 'boolean', default: 'false', nullable: false },
      ],
      rows: [
        { id: 2, email: 'bob@example.com', 'Nick Name': 'Bobby "B"', vip: true },
        { id: 1, email: 'ada@example.com', 'Nick Name': null, vip: false },
      ],
    },
    orders: {
      columns: [
        { name: 'id', type: 'bigint', primary_key: true },
        { name: 'customer_id', type: 'integer', references: 'customers(id)' },
        { name: 'total', type: 'numeric(24,2)' },
        { name: 'placed_at', type: 'timestamptz' },
        { name: 'local_at', type: 'timestamp' },
        { name: 'due', type: 'date' },
        { name: 'opens', type: 'time' },
        { name: 'window', type: 'interval' },
        { name: 'meta', type: 'jsonb' },
        { name: 'tags', type: 'text[]' },
        { name: 'days', type: 'date[]' },
        { name: 'big', type: 'bigint[]' },
        { name: 'ratio', type: 'double precision' },
        { name: 'blob', type: 'bytea' },
        { name: 'ref', type: 'uuid' },
      ],
      rows: [
        {
          id: 10, customer_id: 1, total: 19.9, placed_at: '2026-01-05T10:00:00Z', local_at: '2026-01-05T10:00:00', due: '2026-02-01', opens: '09:30:00',
          window: 'P1DT2H', meta: { gift: true, n: [1, 2] }, tags: ['a', 'b,c'], days: ['2026-01-01', '2026-01-02'], big: ['9007199254740993', 1], ratio: 0.25,
          blob: '\\x00ff10', ref: '0f0e0d0c-0b0a-0908-0706-050403020100',
        },
        { id: '9007199254740993', customer_id: 2, total: '12345678901234567890.12', placed_at: null, local_at: null, due: null, opens: null, window: null, meta: 'plain', tags: [], days: null, big: null, ratio: null, blob: null, ref: null },
      ],
    },
    'sales.ledger': {
      columns: [
        { name: 'day', type: 'date', primary_key: true },
        { name: 'seq', type: 'integer', primary_key: true },
        { name: 'amount', type: 'numeric' },
      ],
      rows: [{ day: '2026-01-01', seq: 1, amount: 5 }],
    },
    // Without a key rows are ordered by their text: the C collation on both (capitals first).
    notes: { columns: [{ name: 'body', type: 'text' }], rows: [{ body: 'b' }, { body: 'a' }, { body: 'B' }, { body: 'é' }] },
  },
  indexes: [
    { name: 'orders_customer_idx', table: 'orders', columns: ['customer_id', 'placed_at'] },
    { name: 'customers_email_lower_idx', table: 'customers', columns: ['lower(email::text)'], unique: true },
  ],
  setup_sql: "CREATE VIEW vip_customers AS SELECT * FROM customers WHERE vip; ALTER TABLE orders ADD CONSTRAINT positive CHECK (total >= 0)",
});

test('a seed creates a database of its own per sandbox, named in database.json; dispose drops it', async () => {
  const before = await databases();
  const [a, b] = [sandbox(), sandbox()];
  try {
    const state = normalizeState(SHIP_ORDER());
    await seed(state, a);
    await seed(state, b);
    const [ra, rb] = [readRecord(a)!, readRecord(b)!];
    assert.match(ra.database, /^mcpbench_[0-9a-f]{12}_[0-9a-f]{8}$/);
    assert.notEqual(ra.database, rb.database);
    assert.equal(ra.server, new URL(cluster.url).host);
    assert.ok(!existsSync(join(a, 'pgdata')), 'nothing of PGlite in the sandbox');
    assert.deepEqual(await databases(), [...before, ra.database, rb.database].sort());
    // The record never holds the URL (it may carry a password).
    assert.doesNotMatch(readFileSync(join(a, DATABASE_FILE), 'utf8'), /postgres:\/\//);

    // Seeding a used sandbox again replaces its database.
    await seed(state, a);
    const again = readRecord(a)!;
    assert.notEqual(again.database, ra.database);
    assert.deepEqual(await databases(), [...before, again.database, rb.database].sort());

    // What a sandboxed server needs: the network, and the URL passed on (the sandbox does not hold it).
    assert.deepEqual(network(a), { env: { [DATABASE_URL_ENV]: cluster.url } });

    await dispose(a);
    await dispose(b);
    assert.equal(network(a), undefined);
    assert.deepEqual(await databases(), before);
    assert.ok(!existsSync(join(a, DATABASE_FILE)));
    await dispose(a); // nothing left to drop: a no-op
  } finally {
    rmSync(a, { recursive: true, force: true });
    rmSync(b, { recursive: true, force: true });
  }
});

test('snapshot(seed(state)) on the server is exactly what PGlite gives: every task and a state of many types', async () => {
  const registry = await loadRegistry();
  for (const state of [...tasks.map((t) => normalizeState(t.initial_state.postgres)), MANY_TYPES]) {
    const [external, embedded] = [sandbox(), sandbox()];
    try {
      await seed(state, external);
      const snap = await snapshot(external);
      await dispose(external);
      assert.ok(registry.get('postgres')!.validateState(snap), JSON.stringify(registry.get('postgres')!.validateState.errors));
      const reference = await withPglite(async () => {
        await seed(state, embedded);
        return snapshot(embedded);
      });
      assert.deepEqual(snap, reference);
    } finally {
      rmSync(external, { recursive: true, force: true });
      rmSync(embedded, { recursive: true, force: true });
    }
  }
  assert.deepEqual(await databases(), []);
});

test('a seed that fails leaves no database behind', async () => {
  const box = sandbox();
  try {
    const broken = normalizeState({ tables: { t: { columns: [{ name: 'id', type: 'integer', primary_key: true }], rows: [{ id: 1 }, { id: 1 }] } } });
    await assert.rejects(seed(broken, box), /seeding the rows of t: duplicate key value/);
    assert.equal(readRecord(box), undefined);
    assert.deepEqual(await databases(), []);
  } finally {
    rmSync(box, { recursive: true, force: true });
  }
});

async function serve(initialState: unknown, env: Record<string, string | undefined> = {}) {
  const box = sandbox();
  const stateFile = join(box, 'initial.json');
  writeFileSync(stateFile, JSON.stringify(initialState ?? {}));
  const merged: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, ...env })) if (v !== undefined) merged[k] = v;
  const transport = new StdioClientTransport({ command: process.execPath, args: [cli, 'serve', 'postgres', '--state', stateFile, '--dir', join(box, 'sandbox')], stderr: 'pipe', env: merged });
  const client = new Client({ name: 'mcpbench-test', version: '0' });
  await client.connect(transport);
  return { client, sandbox: join(box, 'sandbox'), remove: () => rmSync(box, { recursive: true, force: true }) };
}

function text(result: Awaited<ReturnType<Client['callTool']>>): string {
  return (result.content as { type: string; text: string }[])[0]!.text;
}

/** Tool calls covering every tool, errors and rollbacks, types and the statement kinds. */
const SCRIPT: { name: string; arguments: Record<string, unknown> }[] = [
  { name: 'query', arguments: { sql: "UPDATE orders SET status = 'lost'" } },
  { name: 'query', arguments: { sql: 'SELECT id, total FROM orders ORDER BY id' } },
  { name: 'query', arguments: { sql: 'SELECT nope FROM orders' } },
  { name: 'query', arguments: { sql: 'SELECT 1; SELECT 2' } },
  { name: 'query', arguments: {} },
  {
    name: 'query',
    arguments: {
      sql: "SELECT 9007199254740993::bigint AS big, 1.50::numeric AS n, '2026-01-05 10:00+02'::timestamptz AS at, '2026-01-05'::date AS d, interval '1 day 2 hours' AS i, ARRAY['2026-01-01'::date] AS ds, '{\"a\": [1]}'::jsonb AS j, '\\x0aff'::bytea AS b, true AS t, 0.5::real AS r",
    },
  },
  { name: 'execute', arguments: { sql: "UPDATE orders SET status = 'held' WHERE status = 'pending'; DELETE FROM orders WHERE id = 1001 RETURNING id" } },
  { name: 'execute', arguments: { sql: 'DELETE FROM orders; INSERT INTO orders (id) VALUES (1)' } },
  { name: 'execute', arguments: { sql: "CREATE TABLE audit (id serial PRIMARY KEY, note text NOT NULL); INSERT INTO audit (note) VALUES ('a'), ('b'); UPDATE audit SET note = 'c'; SELECT count(*)::int AS n FROM audit" } },
  { name: 'execute', arguments: { sql: "CREATE SCHEMA archive; CREATE TABLE archive.orders AS SELECT * FROM orders; CREATE INDEX ON archive.orders (status)" } },
  { name: 'list_tables', arguments: {} },
  { name: 'list_tables', arguments: { schema: 'archive' } },
  { name: 'list_tables', arguments: { schema: 'nope' } },
  { name: 'describe_table', arguments: { table: 'orders' } },
  { name: 'describe_table', arguments: { table: 'archive.orders' } },
  { name: 'describe_table', arguments: { table: 'nope' } },
  { name: 'query', arguments: { sql: 'SELECT generate_series(1, 1005) AS n' } },
];

test('over MCP: tools/list is the namespace file and every tool answers as on PGlite', async () => {
  const registry = await loadRegistry();
  const play = async (env: Record<string, string | undefined>) => {
    const server = await serve(SHIP_ORDER(), env);
    try {
      const { tools } = await server.client.listTools();
      const results = [];
      for (const call of SCRIPT) {
        const result = await server.client.callTool(call);
        results.push({ isError: result.isError ?? false, content: result.content, structuredContent: result.structuredContent });
      }
      await server.client.close();
      return { tools, results, record: readRecord(server.sandbox), state: await withEnv(env, () => snapshot(server.sandbox)), sandbox: server.sandbox, remove: server.remove };
    } catch (error) {
      server.remove();
      throw error;
    }
  };
  const external = await play({});
  try {
    assert.deepEqual(external.tools, JSON.parse(readFileSync(registry.get('postgres')!.file, 'utf8')).tools);
    assert.ok(external.record, 'the server was seeded on the cluster');
    const [refused, read] = external.results;
    assert.equal(refused!.isError, true);
    assert.match(JSON.stringify(refused!.content), /cannot execute UPDATE in a read-only transaction/);
    assert.deepEqual(read!.structuredContent, { rows: [{ id: 1001, total: 25 }, { id: 1002, total: 40.5 }, { id: 1003, total: 12 }], row_count: 3 });
    assert.deepEqual(external.state.tables.orders!.rows.map((r) => [r.id, r.status]), [[1002, 'held'], [1003, 'held']]);

    const embedded = await play({ [DATABASE_URL_ENV]: undefined });
    try {
      assert.equal(embedded.record, undefined);
      assert.deepEqual(external.tools, embedded.tools);
      for (const [i, call] of SCRIPT.entries()) assert.deepEqual(external.results[i], embedded.results[i], `${call.name} ${JSON.stringify(call.arguments)}`);
      assert.deepEqual(external.state, embedded.state);
    } finally {
      embedded.remove();
    }
    await dispose(external.sandbox);
    assert.deepEqual(await databases(), []);
  } finally {
    external.remove();
  }
});

async function withEnv<T>(env: Record<string, string | undefined>, work: () => Promise<T>): Promise<T> {
  return DATABASE_URL_ENV in env && env[DATABASE_URL_ENV] === undefined ? withPglite(work) : work();
}

test('a runaway statement is cancelled by the server (and by the client past its deadline); the database serves on', async () => {
  const server = await serve(SHIP_ORDER(), { MCPBENCH_PG_STATEMENT_TIMEOUT_MS: '1500' });
  try {
    const runaway = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r";
    const loop = await server.client.callTool({ name: 'execute', arguments: { sql: `UPDATE orders SET status = 'lost'; ${runaway}` } });
    assert.equal(loop.isError, true);
    assert.match(text(loop), /canceling statement due to statement timeout \(SQLSTATE 57014\)/);
    const slowRead = await server.client.callTool({ name: 'query', arguments: { sql: 'SELECT pg_sleep(30)' } });
    assert.equal(slowRead.isError, true);
    assert.match(text(slowRead), /statement timeout/);

    // Turned off by the agent, the server's timeout cannot fire: the client ends the session at its deadline
    // (the time limit plus a grace period), the backend is terminated and the transaction rolled back.
    const started = Date.now();
    const unbounded = await server.client.callTool({ name: 'execute', arguments: { sql: `SET statement_timeout = 0; UPDATE orders SET status = 'lost'; ${runaway}` } });
    assert.equal(unbounded.isError, true);
    assert.match(text(unbounded), /canceling statement due to statement timeout/);
    assert.ok(Date.now() - started < 15_000, 'cut off at the client deadline');

    const after = await server.client.callTool({ name: 'query', arguments: { sql: "SELECT count(*)::int AS n FROM orders WHERE status = 'lost'" } });
    assert.deepEqual(after.structuredContent, { rows: [{ n: 0 }], row_count: 1 });
    await server.client.callTool({ name: 'execute', arguments: { sql: "UPDATE orders SET status = 'shipped' WHERE id = 1003" } });
    await server.client.close();
    const state = await snapshot(server.sandbox);
    assert.deepEqual(state.tables.orders!.rows.map((r) => r.status), ['shipped', 'pending', 'shipped']);
    // No session of the terminated statement is left running (a terminated backend may take a moment to
    // leave pg_stat_activity on a loaded machine: bounded wait, then the assertion).
    const record = readRecord(server.sandbox)!;
    const activeSessions = async () => (await admin(async (c) => (await c.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND state = 'active'", [record.database])).rows[0] as { n: number })).n;
    let active = await activeSessions();
    for (const deadline = Date.now() + 10_000; active > 0 && Date.now() < deadline; active = await activeSessions()) await new Promise((r) => setTimeout(r, 100));
    assert.equal(active, 0);
  } finally {
    // Dropped even when an assertion failed, so the next test's "every database dropped" sees only its own.
    await dispose(server.sandbox).catch(() => undefined);
    server.remove();
  }
});

test('a server the URL cannot reach is reported, not waited for', async () => {
  const box = sandbox();
  const port = await freePort();
  process.env[DATABASE_URL_ENV] = `postgres://postgres@127.0.0.1:${port}/postgres`;
  try {
    await assert.rejects(seed(normalizeState(SHIP_ORDER()), box), new RegExp(`cannot reach the Postgres server at 127\\.0\\.0\\.1:${port}`));
    assert.equal(readRecord(box), undefined);
  } finally {
    process.env[DATABASE_URL_ENV] = cluster.url;
    rmSync(box, { recursive: true, force: true });
  }
});

test('a role without CREATEDB is told what it lacks', async () => {
  await admin((c) => c.query('CREATE ROLE mcpbench_limited LOGIN'));
  const box = sandbox();
  const url = new URL(cluster.url);
  url.username = 'mcpbench_limited';
  process.env[DATABASE_URL_ENV] = url.toString();
  try {
    await assert.rejects(seed(normalizeState(SHIP_ORDER()), box), /permission denied to create database \(the role in MCPBENCH_DATABASE_URL needs CREATEDB/);
    assert.equal(readRecord(box), undefined);
  } finally {
    process.env[DATABASE_URL_ENV] = cluster.url;
    rmSync(box, { recursive: true, force: true });
    await admin((c) => c.query('DROP ROLE mcpbench_limited'));
  }
});

test('every postgres task on the server: reference solutions pass and counterexamples fail, replayed over MCP', async () => {
  const registry = await loadRegistry();
  assert.ok(tasks.length > 0);
  const runs = solutionRuns(tasks);
  const seen = new Set<string>();
  const check = async (run: SolutionRun) => {
    const server = await serve(run.task.initial_state.postgres);
    try {
      const { answer, errors } = await replay(server.client, run.steps);
      if (run.expected) assert.equal(errors, 0, `${run.label} had refused calls`);
      await server.client.close();
      const record = readRecord(server.sandbox)!;
      assert.ok((await databases()).includes(record.database), `${run.label}: its database exists until disposed`);
      seen.add(record.database);
      const state = await snapshot(server.sandbox);
      await dispose(server.sandbox);
      const verdict = evaluate(parsePredicate(run.task.success_predicate, ['success_predicate']), stateLeafEvaluator(registry, { postgres: state }, answer));
      assert.equal(verdict.value, run.expected, run.label);
    } finally {
      server.remove();
    }
  };
  await checkEach(runs, 4, check);
  assert.equal(seen.size, runs.length, 'one database per episode');
  assert.deepEqual(await databases(), [], 'every database dropped');
});
