/**
 * The postgres namespace's real server (PGlite): seeding and snapshotting round-trip a state, and the built
 * CLI serves the declared tools over MCP, with every task's reference solutions passing and its
 * counterexamples failing on the snapshot taken after the server stops (a fresh instance on its data directory).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { END_STATE_FILE, seed, snapshot } from '../../server/src/mcp/postgres/runtime.ts';
import { normalizeState, typeMatches, type PostgresState } from '../../server/src/mcp/postgres/state.ts';
import { evaluate, stateLeafEvaluator } from '../../server/src/predicates/evaluate.ts';
import { parsePredicate } from '../../server/src/predicates/tree.ts';
import { collectTaskFiles } from '../../server/src/tasks/files.ts';
import type { Task } from '../../server/src/tasks/model.ts';
import { checkEach, replay, solutionRuns, type SolutionRun } from './replay.ts';

const cli = join(__dirname, '..', '..', 'dist', 'cli.js');
const tasks = collectTaskFiles([join(__dirname, '..', '..', 'test', 'fixtures', 'tasks', 'postgres')]).map((f) => JSON.parse(readFileSync(f, 'utf8')) as Task);

function sandbox(): string {
  return mkdtempSync(join(tmpdir(), 'mcpbench-postgres-'));
}

/** Postgres spells defaults with casts (`'pending'::text`) and types canonically (`timestamp with time zone`). */
function sameDefault(a: string | undefined, b: string | undefined): boolean {
  const bare = (s: string | undefined) => s?.replace(/::[a-z ]+(\(\d+(,\d+)?\))?/gi, '').replace(/\s+/g, '').toLowerCase();
  return bare(a) === bare(b);
}

/** The snapshot of a seeded state says what the state says, in Postgres's spelling. */
function assertEquivalent(actual: PostgresState, expected: PostgresState): void {
  assert.deepEqual(Object.keys(actual.tables).sort(), Object.keys(expected.tables).sort());
  for (const [name, table] of Object.entries(expected.tables)) {
    const got = actual.tables[name]!;
    assert.deepEqual(got.columns.map((c) => c.name), table.columns.map((c) => c.name), `${name}: columns`);
    for (const [i, column] of table.columns.entries()) {
      const g = got.columns[i]!;
      assert.ok(typeMatches(g.type, column.type) && typeMatches(column.type, g.type), `${name}.${column.name}: type ${g.type} for ${column.type}`);
      assert.equal(g.primary_key, column.primary_key, `${name}.${column.name}: primary_key`);
      assert.equal(g.nullable, column.nullable, `${name}.${column.name}: nullable`);
      assert.equal(g.unique, column.unique, `${name}.${column.name}: unique`);
      assert.equal(g.references, column.references, `${name}.${column.name}: references`);
      assert.ok(sameDefault(g.default, column.default), `${name}.${column.name}: default ${g.default} for ${column.default}`);
    }
    assert.deepEqual(got.rows, table.rows, `${name}: rows`);
  }
  const byName = (s: PostgresState) => [...s.indexes].sort((a, b) => a.name.localeCompare(b.name));
  assert.deepEqual(byName(actual), byName(expected));
  assert.equal(actual.setup_sql, undefined);
}

const HAND_MADE = normalizeState({
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
        { name: 'due', type: 'date' },
        { name: 'meta', type: 'jsonb' },
        { name: 'tags', type: 'text[]' },
        { name: 'ratio', type: 'double precision' },
      ],
      rows: [
        { id: 10, customer_id: 1, total: 19.9, placed_at: '2026-01-05T10:00:00Z', due: '2026-02-01', meta: { gift: true, n: [1, 2] }, tags: ['a', 'b,c'], ratio: 0.25 },
        { id: '9007199254740993', customer_id: 2, total: '12345678901234567890.12', placed_at: null, due: null, meta: 'plain', tags: [], ratio: null },
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
    notes: { columns: [{ name: 'body', type: 'text' }], rows: [{ body: 'b' }, { body: 'a' }] },
  },
  indexes: [
    { name: 'orders_customer_idx', table: 'orders', columns: ['customer_id', 'placed_at'] },
    { name: 'customers_email_lower_idx', table: 'customers', columns: ['lower(email::text)'], unique: true },
  ],
  setup_sql: "CREATE VIEW vip_customers AS SELECT * FROM customers WHERE vip; ALTER TABLE orders ADD CONSTRAINT positive CHECK (total >= 0)",
});

test('snapshot(seed(state)) says what the state says: every task and a hand-made state', async () => {
  for (const state of [...tasks.map((t) => normalizeState(t.initial_state.postgres)), HAND_MADE]) {
    const box = sandbox();
    try {
      await seed(state, box);
      const snap = await snapshot(box);
      const registry = await loadRegistry();
      assert.ok(registry.get('postgres')!.validateState(snap), JSON.stringify(registry.get('postgres')!.validateState.errors));
      const expected = structuredClone(state);
      // Rows come back in key order (by their text without a key); numbers a double cannot hold stay text.
      if (state === HAND_MADE) {
        expected.tables.customers!.rows.reverse();
        expected.tables.notes!.rows.reverse();
      }
      delete expected.setup_sql;
      assertEquivalent(snap, expected);
    } finally {
      rmSync(box, { recursive: true, force: true });
    }
  }
});

async function serve(initialState: unknown, env: Record<string, string> = {}) {
  const box = sandbox();
  const stateFile = join(box, 'initial.json');
  writeFileSync(stateFile, JSON.stringify(initialState ?? {}));
  const transport = new StdioClientTransport({ command: process.execPath, args: [cli, 'serve', 'postgres', '--state', stateFile, '--dir', join(box, 'sandbox')], stderr: 'pipe', env: { ...(process.env as Record<string, string>), ...env } });
  const client = new Client({ name: 'mcpbench-test', version: '0' });
  await client.connect(transport);
  return { client, sandbox: join(box, 'sandbox'), dispose: () => rmSync(box, { recursive: true, force: true }) };
}

function text(result: Awaited<ReturnType<Client['callTool']>>): string {
  return (result.content as { type: string; text: string }[])[0]!.text;
}

test('over MCP: tools/list is the namespace file; query refuses writes; execute, list_tables, describe_table work', async () => {
  const registry = await loadRegistry();
  const server = await serve(tasks.find((t) => t.id === 'postgres-ship-order-001')!.initial_state.postgres);
  try {
    const { tools } = await server.client.listTools();
    assert.deepEqual(tools, JSON.parse(readFileSync(registry.get('postgres')!.file, 'utf8')).tools);

    const write = await server.client.callTool({ name: 'query', arguments: { sql: "UPDATE orders SET status = 'lost'" } });
    assert.equal(write.isError, true);
    assert.match(text(write), /cannot execute UPDATE in a read-only transaction/);

    const read = await server.client.callTool({ name: 'query', arguments: { sql: 'SELECT id, total FROM orders ORDER BY id' } });
    assert.deepEqual(read.structuredContent, { rows: [{ id: 1001, total: 25 }, { id: 1002, total: 40.5 }, { id: 1003, total: 12 }], row_count: 3 });

    const bad = await server.client.callTool({ name: 'query', arguments: { sql: 'SELECT nope FROM orders' } });
    assert.equal(bad.isError, true);
    assert.match(text(bad), /column "nope" does not exist \(SQLSTATE 42703, at character 8\)/);

    const invalid = await server.client.callTool({ name: 'query', arguments: {} });
    assert.equal(invalid.isError, true);
    assert.match(text(invalid), /^MCP error -32602: Input validation error: Invalid arguments for tool query: /);

    const exec = await server.client.callTool({ name: 'execute', arguments: { sql: "UPDATE orders SET status = 'held' WHERE status = 'pending'; DELETE FROM orders WHERE id = 1001 RETURNING id" } });
    assert.deepEqual(exec.structuredContent, { statements: [{ command: 'UPDATE', rows_affected: 2 }, { command: 'DELETE', rows_affected: 1, rows: [{ id: 1001 }], row_count: 1 }] });

    // A failing statement rolls back the whole call.
    const failed = await server.client.callTool({ name: 'execute', arguments: { sql: 'DELETE FROM orders; INSERT INTO orders (id) VALUES (1)' } });
    assert.equal(failed.isError, true);
    assert.match(text(failed), /null value in column "customer"/);

    const listed = await server.client.callTool({ name: 'list_tables', arguments: {} });
    assert.deepEqual(listed.structuredContent, { schema: 'public', tables: [{ name: 'orders', kind: 'table', rows: 2 }] });

    const described = await server.client.callTool({ name: 'describe_table', arguments: { table: 'orders' } });
    const d = described.structuredContent as { primary_key: string[]; columns: { name: string; type: string }[]; indexes: { name: string }[] };
    assert.deepEqual(d.primary_key, ['id']);
    assert.deepEqual(d.columns.map((c) => `${c.name} ${c.type}`), ['id integer', 'customer text', 'status text', 'total numeric(10,2)']);
    assert.deepEqual(d.indexes.map((i) => i.name), ['orders_pkey']);
    const missing = await server.client.callTool({ name: 'describe_table', arguments: { table: 'nope' } });
    assert.equal(missing.isError, true);

    await server.client.close();
    const state = await snapshot(server.sandbox);
    assert.deepEqual(state.tables.orders!.rows.map((r) => [r.id, r.status]), [[1002, 'held'], [1003, 'held']]);
  } finally {
    server.dispose();
  }
});

test('a runaway statement is cancelled at the time limit; the database rolls it back and serves on', async () => {
  const server = await serve(tasks.find((t) => t.id === 'postgres-ship-order-001')!.initial_state.postgres, { MCPBENCH_PG_STATEMENT_TIMEOUT_MS: '1500' });
  try {
    const loop = await server.client.callTool({
      name: 'execute',
      arguments: { sql: "UPDATE orders SET status = 'lost'; WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r" },
    });
    assert.equal(loop.isError, true);
    assert.match(text(loop), /canceling statement due to statement timeout/);
    const after = await server.client.callTool({ name: 'query', arguments: { sql: "SELECT count(*)::int AS n FROM orders WHERE status = 'lost'" } });
    assert.deepEqual(after.structuredContent, { rows: [{ n: 0 }], row_count: 1 });
    await server.client.callTool({ name: 'execute', arguments: { sql: "UPDATE orders SET status = 'shipped' WHERE id = 1003" } });
    await server.client.close();
    const state = await snapshot(server.sandbox);
    assert.deepEqual(state.tables.orders!.rows.map((r) => r.status), ['shipped', 'pending', 'shipped']);
  } finally {
    server.dispose();
  }
});

test('every postgres task: reference solutions pass and counterexamples fail, replayed over MCP', async () => {
  const registry = await loadRegistry();
  assert.ok(tasks.length > 0);
  const runs = solutionRuns(tasks);
  const check = async (run: SolutionRun) => {
    const server = await serve(run.task.initial_state.postgres);
    try {
      const { answer, errors } = await replay(server.client, run.steps);
      if (run.expected) assert.equal(errors, 0, `${run.label} had refused calls`);
      await server.client.close();
      const state = await snapshot(server.sandbox);
      const verdict = evaluate(parsePredicate(run.task.success_predicate, ['success_predicate']), stateLeafEvaluator(registry, { postgres: state }, answer));
      assert.equal(verdict.value, run.expected, run.label);
    } finally {
      server.dispose();
    }
  };
  // A few servers at a time: each episode is mostly Postgres starting up, twice (serve, snapshot).
  await checkEach(runs, 3, check);
});

test('on a clean shutdown the server leaves no end state of its own: the judge reads the data directory afresh', async () => {
  const server = await serve(tasks.find((t) => t.id === 'postgres-ship-order-001')!.initial_state.postgres);
  try {
    const ship = await server.client.callTool({ name: 'execute', arguments: { sql: "UPDATE orders SET status = 'shipped' WHERE id = 1002" } });
    assert.notEqual(ship.isError, true, text(ship));
    await server.client.close();
    assert.equal(existsSync(join(server.sandbox, END_STATE_FILE)), false, 'nothing read through the agent\'s session');
    const end = await snapshot(server.sandbox);
    assert.equal(end.tables.orders!.rows.find((r) => r.id === 1002)!.status, 'shipped');
  } finally {
    server.dispose();
  }
});
