/**
 * The broader catalog, as real ported tasks need it: travel with cancellation, several passengers, cabin
 * class and baggage; shop and support customers looked up by name or e-mail, a customer's orders, exchanges
 * between product variants; filesystem binary files (base64) that round-trip through a real sandbox; Postgres
 * timestamps that read back in the form they were seeded in.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ToolError, type ToolOutcome } from '../../server/src/mcp/namespace.ts';
import { loadRegistry, type Registry } from '../../server/src/mcp/registry.ts';
import { evaluate, stateLeafEvaluator } from '../../server/src/predicates/evaluate.ts';
import { parsePredicate } from '../../server/src/predicates/tree.ts';
import { createAjv } from '../../server/src/ajv.ts';

const ajv = createAjv();
let registry: Registry;
before(async () => {
  registry = await loadRegistry();
});

/** A simulated tool called as the server calls it: arguments valid against the declaration, the new state valid against the state schema. */
function call<S>(namespace: string, name: string, args: Record<string, unknown>, state: S): ToolOutcome<S> {
  const info = registry.get(namespace)!;
  const declared = info.tools.get(name);
  assert.ok(declared, `${namespace}.${name} is declared`);
  assert.ok(declared.validateInput(args), `${name} ${JSON.stringify(args)}: ${ajv.errorsText(declared.validateInput.errors)}`);
  const outcome = info.plugin!.tools![name]!(args, state) as ToolOutcome<S>;
  if (outcome.state !== undefined) assert.ok(info.validateState(outcome.state), `${name}: ${ajv.errorsText(info.validateState.errors)}`);
  return outcome;
}

function holds(namespace: string, predicate: unknown, state: unknown): boolean | undefined {
  return evaluate(parsePredicate(predicate, ['p']), stateLeafEvaluator(registry, { [namespace]: state }, undefined)).value;
}

test('travel: business seats for two passengers with bags, then a cancellation that gives the seats back', () => {
  const info = registry.get('travel')!;
  const initial = { flights: [{ id: 'AF-12', origin: 'PAR', dest: 'NYC', date: '2026-05-02', price: 300, seats_left: 9, business: { price: 1200, seats_left: 2 }, baggage_fee: 40 }] };
  assert.ok(info.validateState(initial), ajv.errorsText(info.validateState.errors));
  let state = info.plugin!.normalizeState(initial);
  assert.throws(() => call('travel', 'hold_flight', { flight_id: 'AF-12', cabin: 'business', seats: 3 }, state), /only 2 business seat/);
  state = call('travel', 'hold_flight', { flight_id: 'AF-12', cabin: 'business', seats: 2 }, state).state!;
  assert.throws(() => call('travel', 'confirm_booking', { flight_id: 'AF-12', passenger: 'Ana Silva', payment_info: 'card 4242' }, state), /for 2 seats: give every passenger/);
  state = call('travel', 'confirm_booking', { flight_id: 'AF-12', passenger: 'Ana Silva', passengers: ['Ana Silva', 'Rui Silva'], payment_info: 'card 4242', bags: 3 }, state).state!;
  const reservation = (state as { reservations: Record<string, { total?: number }> }).reservations['AF-12']!;
  assert.equal(reservation.total, 2 * 1200 + 3 * 40);
  assert.equal(holds('travel', { 'travel.reservationExists': { passenger: 'rui silva', cabin: 'business', seats: 2, bags: 3, status: 'confirmed' } }, state), true);
  assert.equal(holds('travel', { 'travel.seatsLeft': { flight_id: 'AF-12', cabin: 'business', equals: 0 } }, state), true);
  state = call('travel', 'cancel_reservation', { flight_id: 'AF-12' }, state).state!;
  assert.equal(holds('travel', { 'travel.reservationStatus': { flight_id: 'AF-12', status: 'cancelled' } }, state), true);
  assert.equal(holds('travel', { 'travel.seatsLeft': { flight_id: 'AF-12', cabin: 'business', equals: 2 } }, state), true);
  assert.equal(holds('travel', { 'travel.seatsLeft': { flight_id: 'AF-12', equals: 9 } }, state), true, 'economy untouched');
  assert.throws(() => call('travel', 'cancel_reservation', { flight_id: 'AF-12' }, state), ToolError);
});

test('shop: a customer found by e-mail, her orders, and a delivered shirt exchanged for another size', () => {
  const info = registry.get('shop')!;
  const initial = {
    today: '2026-02-10',
    products: [
      { sku: 'TEE-M', name: 'Tee', category: 'shirts', price: 20, stock: 4, variant_of: 'TEE', options: { size: 'M' } },
      { sku: 'TEE-L', name: 'Tee', category: 'shirts', price: 20, stock: 1, variant_of: 'TEE', options: { size: 'L' } },
      { sku: 'CAP', name: 'Cap', category: 'hats', price: 20, stock: 5 },
    ],
    customers: [{ id: 'C-7', name: 'Mia Wong', email: 'mia@example.com' }, { id: 'C-8', name: 'Mia Park' }],
    orders: [{ id: 'ORD-1001', customer_id: 'C-7', items: [{ sku: 'TEE-M', quantity: 1, unit_price: 20 }], shipping_address: '1 Main St', subtotal: 20, total: 20, status: 'delivered', date: '2026-02-01' }],
  };
  assert.ok(info.validateState(initial), ajv.errorsText(info.validateState.errors));
  let state = info.plugin!.normalizeState(initial);
  assert.deepEqual((call('shop', 'find_customer', { name: 'mia' }, state).result as { customers: { id: string }[] }).customers.map((c) => c.id), ['C-7', 'C-8']);
  assert.deepEqual((call('shop', 'find_customer', { email: 'MIA@example.com' }, state).result as { customers: { id: string }[] }).customers.map((c) => c.id), ['C-7']);
  assert.throws(() => call('shop', 'find_customer', {}, state), /name or an e-mail/);
  const orders = call('shop', 'list_customer_orders', { customer_id: 'C-7' }, state).result as { orders: { id: string }[] };
  assert.deepEqual(orders.orders.map((o) => o.id), ['ORD-1001']);
  const inventory = call('shop', 'check_inventory', { sku: 'TEE-M' }, state).result as { product: { other_variants: { sku: string }[] } };
  assert.deepEqual(inventory.product.other_variants.map((v) => v.sku), ['TEE-L']);
  assert.throws(() => call('shop', 'exchange_item', { order_id: 'ORD-1001', sku: 'TEE-M', new_sku: 'CAP', reason: 'wrong item' }, state), /not a variant of TEE-M/);
  state = call('shop', 'exchange_item', { order_id: 'ORD-1001', sku: 'TEE-M', new_sku: 'TEE-L', reason: 'too small' }, state).state!;
  assert.equal(holds('shop', { 'shop.exchangeProcessed': { order_id: 'ORD-1001', sku: 'TEE-M', new_sku: 'TEE-L' } }, state), true);
  assert.equal(holds('shop', { all: [{ 'shop.stockLevel': { sku: 'TEE-L', equals: 0 } }, { 'shop.stockLevel': { sku: 'TEE-M', equals: 5 } }] }, state), true);
  assert.equal(holds('shop', { 'shop.orderExists': { order_id: 'ORD-1001', items: [{ sku: 'TEE-L', quantity: 1 }], exact_items: true } }, state), true);
});

test('support: a customer found by name, with her open tickets', () => {
  const info = registry.get('support')!;
  const state = info.plugin!.normalizeState({
    customers: [{ id: 'C-201', name: 'Dana Lee', email: 'dana@example.com', plan: 'premium' }],
    tickets: [{ id: 'TCK-1', customer_id: 'C-201', subject: 'Login', description: 'Cannot log in', priority: 'high' }],
  });
  const found = call('support', 'find_customer', { name: 'dana' }, state).result as { customers: { id: string; open_tickets: string[] }[] };
  assert.deepEqual(found.customers, [{ id: 'C-201', name: 'Dana Lee', email: 'dana@example.com', plan: 'premium', open_tickets: ['TCK-1'] }]);
});

test('filesystem: a binary file round-trips through a sandbox as base64; text stays text', async () => {
  const info = registry.get('filesystem')!;
  const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff]);
  const initial = { files: { 'img/logo.png': { base64: png.toString('base64') }, 'notes.txt': 'hello\n' } };
  assert.ok(info.validateState(initial), ajv.errorsText(info.validateState.errors));
  const sandbox = mkdtempSync(join(tmpdir(), 'mcpbench-fs-binary-'));
  try {
    const runtime = info.plugin!.runtime!;
    await runtime.seed(info.plugin!.normalizeState(initial), sandbox);
    assert.deepEqual(readFileSync(join(sandbox, 'img', 'logo.png')), png);
    writeFileSync(join(sandbox, 'img', 'copy.bin'), png);
    const end = await runtime.snapshot(sandbox);
    assert.ok(info.validateState(end), ajv.errorsText(info.validateState.errors));
    assert.deepEqual(end, { files: { 'img/copy.bin': { base64: png.toString('base64') }, 'img/logo.png': { base64: png.toString('base64') }, 'notes.txt': 'hello\n' } });
    assert.equal(holds('filesystem', { all: [{ 'filesystem.fileExists': { path: 'img/copy.bin' } }, { 'filesystem.filesIdentical': { path: 'img/copy.bin', other: 'img/logo.png' } }] }, end), true);
    assert.equal(holds('filesystem', { 'filesystem.stateEquals': { pointer: '/files/img~1logo.png', value: { base64: png.toString('base64') } } }, end), true);
  } finally {
    rmSync(sandbox, { recursive: true, force: true });
  }
});

test('postgres: timestamps and dates read back in the form they were seeded in', { timeout: 120_000 }, async () => {
  const info = registry.get('postgres')!;
  const initial = {
    tables: {
      people: {
        columns: [
          { name: 'id', type: 'integer', primary_key: true },
          { name: 'born', type: 'timestamptz' },
          { name: 'seen', type: 'timestamp' },
          { name: 'day', type: 'date' },
        ],
        rows: [{ id: 1, born: '1962-02-18T00:00:00.000Z', seen: '2026-01-05 10:30:00', day: '2026-01-05' }],
      },
    },
  };
  const sandbox = mkdtempSync(join(tmpdir(), 'mcpbench-pg-times-'));
  try {
    const runtime = info.plugin!.runtime!;
    await runtime.seed(info.plugin!.normalizeState(initial), sandbox);
    const end = (await runtime.snapshot(sandbox)) as { tables: { people: { rows: unknown[] } } };
    assert.deepEqual(end.tables.people.rows, initial.tables.people.rows);
    // Nothing changed, and the generic predicate says so; a predicate in the seed's form holds.
    const evaluateLeaf = stateLeafEvaluator(registry, { postgres: end }, undefined, { initial: { postgres: initial } });
    assert.equal(evaluate(parsePredicate({ 'postgres.unchanged': { pointer: '/tables/people/rows' } }, ['p']), evaluateLeaf).value, true);
    assert.equal(evaluate(parsePredicate({ 'postgres.rowExists': { table: 'people', where: { born: '1962-02-18T00:00:00.000Z' } } }, ['p']), evaluateLeaf).value, true);
    // Another writing of the same instant matches too.
    assert.equal(evaluate(parsePredicate({ 'postgres.rowExists': { table: 'people', where: { born: '1962-02-18 00:00:00+00' } } }, ['p']), evaluateLeaf).value, true);
  } finally {
    rmSync(sandbox, { recursive: true, force: true });
  }
});

test('postgres: a state built from a SQL script (mcpbench state postgres --from) seeds back to itself', { timeout: 120_000 }, async () => {
  const info = registry.get('postgres')!;
  const runtime = info.plugin!.runtime!;
  const scratch = mkdtempSync(join(tmpdir(), 'mcpbench-pg-from-sql-'));
  const sandbox = mkdtempSync(join(tmpdir(), 'mcpbench-pg-from-sql-seed-'));
  try {
    const sql = `CREATE TABLE artists (id integer PRIMARY KEY, name text NOT NULL UNIQUE);
      CREATE TABLE albums (id integer PRIMARY KEY, artist_id integer REFERENCES artists(id), title text, released date);
      INSERT INTO artists VALUES (1, 'Nina Simone'), (2, 'Miles Davis');
      INSERT INTO albums VALUES (10, 2, 'Kind of Blue', '1959-08-17');`;
    const state = await runtime.stateFrom!(sql, scratch);
    assert.ok(info.validateState(state), ajv.errorsText(info.validateState.errors));
    const tables = (state as { tables: Record<string, { rows: unknown[] }> }).tables;
    assert.deepEqual(tables.albums!.rows, [{ id: 10, artist_id: 2, title: 'Kind of Blue', released: '1959-08-17' }]);
    await runtime.seed(info.plugin!.normalizeState(state), sandbox);
    assert.deepEqual(await runtime.snapshot(sandbox), state);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
    rmSync(sandbox, { recursive: true, force: true });
  }
});
