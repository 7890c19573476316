import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadRegistry, type NamespaceInfo } from '../../server/src/mcp/registry.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { likeToRegExp, parseType, typeMatches } from '../../server/src/mcp/postgres/state.ts';
import type { PostgresState } from '../../server/src/mcp/postgres/state.ts';

let info: NamespaceInfo;
before(async () => {
  info = (await loadRegistry()).get('postgres')!;
});

function check(name: string, args: Record<string, unknown>, state: unknown): boolean {
  const predicate = info.predicates.get(name);
  assert.ok(predicate, `no predicate ${name}`);
  assert.ok(predicate.validateArguments(args), `${name} arguments ${JSON.stringify(args)}: ${JSON.stringify(predicate.validateArguments.errors)}`);
  if (state !== undefined) assert.ok(info.validateState(state), `state: ${JSON.stringify(info.validateState.errors)}`);
  const verdict = info.plugin!.predicates[name]!(args, { state: info.plugin!.normalizeState(state), answer: undefined });
  JSON.stringify(verdict.evidence);
  return verdict.value;
}

const db = {
  tables: {
    customers: {
      columns: [
        { name: 'id', type: 'integer', primary_key: true },
        { name: 'email', type: 'varchar(120)', nullable: false, unique: true },
        { name: 'name', type: 'text' },
      ],
      rows: [
        { id: 1, email: 'ada@example.com', name: 'Ada' },
        { id: 2, email: 'bob@example.com', name: null },
        { id: 3, email: 'ADA@example.com', name: 'Ada' },
      ],
    },
    'public.orders': {
      columns: [
        { name: 'id', type: 'int4', primary_key: true },
        { name: 'customer_id', type: 'integer', references: 'customers(id)' },
        { name: 'status', type: 'text', default: "'pending'" },
        { name: 'total', type: 'numeric(10,2)' },
        { name: 'placed_at', type: 'timestamptz' },
      ],
      rows: [
        { id: 10, customer_id: 1, status: 'shipped', total: '19.90', placed_at: '2024-03-01T10:00:00.000Z' },
        { id: 11, customer_id: 1, status: 'pending', total: 5, placed_at: '2024-03-05T10:00:00.000Z' },
        { id: 12, customer_id: 2, status: 'cancelled', total: 100.5, placed_at: '2024-02-20T09:30:00.000Z' },
        { id: 13, customer_id: 2, status: 'pending', total: null, placed_at: null },
      ],
    },
    'audit.events': { columns: [{ name: 'id', type: 'bigint' }], rows: [] },
  },
  indexes: [{ name: 'orders_customer_idx', table: 'orders', columns: ['customer_id', 'status'] }],
};

describe('postgres state', () => {
  test('schema: example, invalid shapes', () => {
    assert.ok(info.validateState(db));
    for (const example of info.server.state_schema.examples as unknown[]) assert.ok(info.validateState(example), 'state_schema example');
    assert.ok(info.validateState({}));
    assert.equal(info.validateState({ tables: { t: { rows: [] } } }), false, 'columns are required');
    assert.equal(info.validateState({ tables: { 'bad name': { columns: [{ name: 'a', type: 'int' }] } } }), false);
    assert.equal(info.validateState({ tables: { t: { columns: [{ name: 'a', type: 'int', references: 'nope' }] } } }), false);
  });

  test('normalizeState: public prefix, implicit indexes, defaults', () => {
    const s = info.plugin!.normalizeState(db) as PostgresState;
    assert.ok(s.tables.orders);
    assert.ok(s.tables['audit.events']);
    assert.equal(s.tables.customers!.columns[0]!.nullable, false, 'primary key columns are NOT NULL');
    assert.deepEqual(
      s.indexes.map((i) => i.name).sort(),
      ['customers_email_key', 'customers_pkey', 'orders_customer_idx', 'orders_pkey'],
    );
  });

  test('type names compare through aliases', () => {
    assert.ok(typeMatches('int4', 'integer'));
    assert.ok(typeMatches('character varying(120)', 'VARCHAR'));
    assert.ok(typeMatches('varchar(120)', 'varchar(120)'));
    assert.ok(!typeMatches('varchar(120)', 'varchar(50)'));
    assert.ok(typeMatches('timestamp(3) with time zone', 'timestamptz'));
    assert.ok(!typeMatches('timestamp', 'timestamptz'));
    assert.ok(!typeMatches('integer[]', 'integer'));
    assert.deepEqual(parseType('NUMERIC( 10, 2 )'), { base: 'numeric', modifier: '(10,2)', array: false });
  });

  test('LIKE patterns', () => {
    assert.ok(likeToRegExp('a%', false).test('abc'));
    assert.ok(!likeToRegExp('a_', false).test('abc'));
    assert.ok(likeToRegExp('100\\%', false).test('100%'));
    assert.ok(!likeToRegExp('100\\%', false).test('1000'));
    assert.ok(likeToRegExp('A.B', true).test('a.b'));
    assert.ok(!likeToRegExp('A.B', true).test('axb'));
  });
});

describe('postgres predicates', () => {
  test('tableExists', () => {
    assert.equal(check('tableExists', { table: 'orders' }, db), true);
    assert.equal(check('tableExists', { table: 'public.customers' }, db), true);
    assert.equal(check('tableExists', { table: 'ORDERS' }, db), true, 'unquoted identifiers fold case');
    assert.equal(check('tableExists', { table: 'audit.events' }, db), true);
    assert.equal(check('tableExists', { table: 'events' }, db), false, 'other schemas stay qualified');
    assert.equal(check('tableExists', { table: 'orders' }, undefined), false);
  });

  test('columnExists: type and nullability', () => {
    assert.equal(check('columnExists', { table: 'orders', column: 'total' }, db), true);
    assert.equal(check('columnExists', { table: 'orders', column: 'total', type: 'numeric' }, db), true);
    assert.equal(check('columnExists', { table: 'orders', column: 'total', type: 'numeric(12,2)' }, db), false);
    assert.equal(check('columnExists', { table: 'orders', column: 'id', type: 'integer', nullable: false }, db), true);
    assert.equal(check('columnExists', { table: 'customers', column: 'name', nullable: false }, db), false);
    assert.equal(check('columnExists', { table: 'orders', column: 'discount' }, db), false);
  });

  test('rowExists: equality with numeric coercion, null, operators', () => {
    assert.equal(check('rowExists', { table: 'orders', where: { id: 10, status: 'shipped' } }, db), true);
    assert.equal(check('rowExists', { table: 'orders', where: { id: 10, status: 'pending' } }, db), false);
    assert.equal(check('rowExists', { table: 'orders', where: { total: 19.9 } }, db), true, "numeric text '19.90' equals 19.9");
    assert.equal(check('rowExists', { table: 'orders', where: { total: '19.9' } }, db), true);
    assert.equal(check('rowExists', { table: 'orders', where: { id: '10' } }, db), true, 'numeric text and numbers are one value');
    assert.equal(check('rowExists', { table: 'customers', where: { email: 'Ada@example.com' } }, db), false, 'text is case-sensitive');
    assert.equal(check('rowExists', { table: 'customers', where: { email: { ilike: 'Ada@example.com' } } }, db), true);
    assert.equal(check('rowExists', { table: 'customers', where: { name: null, id: 2 } }, db), true, 'null matches null');
    assert.equal(check('rowExists', { table: 'customers', where: { name: null, id: 1 } }, db), false);
    assert.equal(check('rowExists', { table: 'orders', where: { total: { gt: 100 } } }, db), true);
    assert.equal(check('rowExists', { table: 'orders', where: { total: { gt: 100.5 } } }, db), false);
    assert.equal(check('rowExists', { table: 'orders', where: { placed_at: { gte: '2024-03-05', lt: '2024-03-06' } } }, db), true, 'ISO text orders as text');
    assert.equal(check('rowExists', { table: 'orders', where: { status: { in: ['cancelled', 'refunded'] }, customer_id: 2 } }, db), true);
    assert.equal(check('rowExists', { table: 'orders', where: { status: { ne: 'pending' }, customer_id: 1 } }, db), true);
    assert.equal(check('rowExists', { table: 'orders', where: { total: { is_null: true }, status: 'pending' } }, db), true);
    assert.equal(check('rowExists', { table: 'orders', where: { total: { lt: 1000 }, id: 13 } }, db), false, 'null never orders');
    assert.equal(check('rowExists', { table: 'customers', where: { email: { like: '%@example.com' }, id: 3 } }, db), true);
    assert.equal(check('rowExists', { table: 'orders', where: { colour: 'red' } }, db), false, 'an unknown column matches nothing');
    assert.equal(check('rowExists', { table: 'orders', where: {} }, db), true);
    assert.equal(check('rowExists', { table: 'ghost', where: {} }, db), false);
  });

  test('where operators are validated', () => {
    const validate = info.predicates.get('rowExists')!.validateArguments;
    assert.equal(validate({ table: 'orders', where: { total: { greater: 5 } } }), false);
    assert.equal(validate({ table: 'orders', where: { total: {} } }), false);
    assert.equal(validate({ table: 'orders', where: { total: [1, 2] } }), false);
  });

  test('rowCount', () => {
    assert.equal(check('rowCount', { table: 'orders', equals: 4 }, db), true);
    assert.equal(check('rowCount', { table: 'orders', where: { status: 'pending' }, equals: 2 }, db), true);
    assert.equal(check('rowCount', { table: 'orders', where: { customer_id: 1 }, min: 3 }, db), false);
    assert.equal(check('rowCount', { table: 'ghost', equals: 0 }, db), true, 'a missing table has no rows');
    assert.equal(check('rowCount', { table: 'ghost', min: 1 }, db), false);
  });

  test('valueEquals: every matching row, tolerance', () => {
    assert.equal(check('valueEquals', { table: 'orders', where: { id: 10 }, column: 'total', value: 19.9 }, db), true);
    assert.equal(check('valueEquals', { table: 'orders', where: { id: 10 }, column: 'total', value: 19.95 }, db), false);
    assert.equal(check('valueEquals', { table: 'orders', where: { id: 10 }, column: 'total', value: 19.95, tolerance: 0.05 }, db), true);
    assert.equal(check('valueEquals', { table: 'orders', where: { customer_id: 1 }, column: 'status', value: 'shipped' }, db), false, 'one of two rows differs');
    assert.equal(check('valueEquals', { table: 'customers', where: { name: 'Ada' }, column: 'name', value: 'Ada' }, db), true);
    assert.equal(check('valueEquals', { table: 'orders', where: { id: 99 }, column: 'status', value: 'pending' }, db), false, 'no row matches');
    assert.equal(check('valueEquals', { table: 'customers', where: { id: 2 }, column: 'name', value: null }, db), true);
  });

  test('aggregateEquals', () => {
    assert.equal(check('aggregateEquals', { table: 'orders', column: 'total', function: 'sum', value: 125.4 }, db), true, 'nulls skipped, numeric text summed');
    assert.equal(check('aggregateEquals', { table: 'orders', column: 'total', function: 'sum', where: { customer_id: 1 }, value: 24.9, tolerance: 0.001 }, db), true);
    assert.equal(check('aggregateEquals', { table: 'orders', column: 'total', function: 'avg', value: 41.8, tolerance: 0.001 }, db), true);
    assert.equal(check('aggregateEquals', { table: 'orders', column: 'total', function: 'max', value: 100.5 }, db), true);
    assert.equal(check('aggregateEquals', { table: 'orders', column: 'total', function: 'min', value: 5 }, db), true);
    assert.equal(check('aggregateEquals', { table: 'orders', column: 'placed_at', function: 'min', value: '2024-02-20T09:30:00.000Z' }, db), true);
    assert.equal(check('aggregateEquals', { table: 'orders', column: 'status', function: 'count_distinct', value: 3 }, db), true);
    assert.equal(check('aggregateEquals', { table: 'orders', column: 'total', function: 'sum', where: { id: 99 }, value: 0 }, db), false, 'the sum of nothing is null');
  });

  test('noDuplicates', () => {
    assert.equal(check('noDuplicates', { table: 'customers', columns: ['email'] }, db), true, 'case differs');
    assert.equal(check('noDuplicates', { table: 'customers', columns: ['name'] }, db), false);
    assert.equal(check('noDuplicates', { table: 'orders', columns: ['customer_id', 'status'] }, db), true);
    assert.equal(check('noDuplicates', { table: 'orders', columns: ['total'] }, { tables: { orders: { columns: [{ name: 'total', type: 'numeric' }], rows: [{ total: null }, { total: null }] } } }), true, 'nulls are never duplicates');
    assert.equal(check('noDuplicates', { table: 'orders', columns: ['total'] }, { tables: { orders: { columns: [{ name: 'total', type: 'numeric' }], rows: [{ total: '5.0' }, { total: 5 }] } } }), false);
    assert.equal(check('noDuplicates', { table: 'ghost', columns: ['x'] }, db), false);
  });

  test('indexExists: declared and implicit', () => {
    assert.equal(check('indexExists', { table: 'orders', columns: ['customer_id', 'status'] }, db), true);
    assert.equal(check('indexExists', { table: 'orders', columns: ['status', 'customer_id'] }, db), false, 'column order matters');
    assert.equal(check('indexExists', { table: 'orders', columns: ['customer_id'] }, db), false, 'a prefix is not the index');
    assert.equal(check('indexExists', { table: 'customers', columns: ['email'], unique: true }, db), true, 'from the unique column');
    assert.equal(check('indexExists', { table: 'orders', name: 'orders_pkey', unique: true }, db), true);
    assert.equal(check('indexExists', { table: 'orders', name: 'orders_customer_idx', unique: true }, db), false);
  });
});

describe('postgres tasks against hand-made end states', () => {
  function judge(predicate: Record<string, unknown>, state: unknown): boolean {
    if ('all' in predicate) return (predicate.all as Record<string, unknown>[]).every((p) => judge(p, state));
    if ('any' in predicate) return (predicate.any as Record<string, unknown>[]).some((p) => judge(p, state));
    if ('not' in predicate) return !judge(predicate.not as Record<string, unknown>, state);
    const [qualified, args] = Object.entries(predicate)[0]!;
    return check(qualified.slice('postgres.'.length), args as Record<string, unknown>, state);
  }
  const load = (id: string) => JSON.parse(readFileSync(join(__dirname, '..', '..', 'test', 'fixtures', 'tasks', 'postgres', `${id}.json`), 'utf8'));
  type Db = { tables: Record<string, { columns: { name: string }[]; rows: Record<string, unknown>[] }> };
  const withRows = (db: Db, table: string, f: (rows: Record<string, unknown>[]) => Record<string, unknown>[]): Db =>
    ({ tables: { ...db.tables, [table]: { ...db.tables[table]!, rows: f(db.tables[table]!.rows) } } });

  test('postgres-ship-order-001', () => {
    const task = load('postgres-ship-order-001');
    const initial = task.initial_state.postgres as Db;
    assert.equal(judge(task.success_predicate, initial), false);
    // Snapshots read numeric columns back as text: '40.50'.
    const good = withRows(initial, 'orders', (rows) => rows.map((r) => ({ ...r, total: Number(r.total).toFixed(2), ...(r.id === 1002 ? { status: 'shipped' } : {}) })));
    assert.equal(judge(task.success_predicate, good), true);
    const all = withRows(initial, 'orders', (rows) => rows.map((r) => ({ ...r, status: 'shipped' })));
    assert.equal(judge(task.success_predicate, all), false);
  });

  test('postgres-dedupe-customers-001', () => {
    const task = load('postgres-dedupe-customers-001');
    const initial = task.initial_state.postgres as Db;
    assert.equal(judge(task.success_predicate, initial), false);
    assert.equal(judge(task.success_predicate, withRows(initial, 'customers', (rows) => rows.filter((r) => [1, 2, 4].includes(r.id as number)))), true);
    assert.equal(judge(task.success_predicate, withRows(initial, 'customers', (rows) => rows.filter((r) => [3, 4, 5].includes(r.id as number)))), false);
  });

  test('postgres-add-loyalty-column-001', () => {
    const task = load('postgres-add-loyalty-column-001');
    const initial = task.initial_state.postgres as Db;
    assert.equal(judge(task.success_predicate, initial), false);
    const add = (type: string, nullable: boolean): Db => ({
      tables: {
        customers: {
          columns: [...initial.tables.customers!.columns, { name: 'loyalty_points', type, nullable, default: '0' } as { name: string }],
          rows: initial.tables.customers!.rows.map((r) => ({ ...r, loyalty_points: 0 })),
        },
      },
    });
    assert.equal(judge(task.success_predicate, add('integer', false)), true);
    assert.equal(judge(task.success_predicate, add('integer', true)), false);
    assert.equal(judge(task.success_predicate, add('bigint', false)), false);
  });
});
