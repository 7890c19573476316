import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeState, type ShopState } from '../../server/src/mcp/shop/state.ts';
import { cents, tools } from '../../server/src/mcp/shop/tools.ts';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { assertRefuses, callOnce, testFixtureTasks } from './harness.ts';

const NS = 'shop';
type State = ShopState;

/** A call that must succeed, on the shop server seeded with `state`: its reply and the state it leaves. */
const call = (name: string, args: Record<string, unknown>, state: State) => callOnce<State>(NS, state, name, args);
const refuses = (name: string, args: Record<string, unknown>, state: State, message: RegExp) => assertRefuses(NS, state, name, args, message);

const seed = (): State =>
  normalizeState({
    today: '2026-01-20',
    products: [
      { sku: 'CAB-1', name: 'USB-C cable 1m', category: 'cables', price: 6.49, stock: 0 },
      { sku: 'CAB-2', name: 'USB-C cable 2m', category: 'cables', price: 8.99, stock: 12 },
      { sku: 'MUG-BLU', name: 'Blue Mug', category: 'Kitchen', description: 'Stoneware mug, 350 ml', price: 9.5, stock: 5 },
      { sku: 'HP-7', name: 'Wireless headphones', category: 'audio', price: 79, stock: 4 },
      { sku: 'CASE-1', name: 'Headphone case', category: 'audio', price: 15, stock: 10 },
    ],
    customers: [
      { id: 'C-1', name: 'Lena Fischer' },
      { id: 'C-2', name: 'Sam Patel' },
    ],
    coupons: [
      { code: 'SAVE10', type: 'percent', value: 10, min_subtotal: 5, expires: '2026-01-20' },
      { code: 'FIVE', type: 'fixed', value: 5 },
      { code: 'OLD20', type: 'percent', value: 20, expires: '2026-01-19' },
      { code: 'BIG', type: 'fixed', value: 10, min_subtotal: 50 },
      { code: 'ONCE', type: 'percent', value: 50, usage_limit: 1, times_used: 0 },
      { code: 'GONE', type: 'fixed', value: 1, usage_limit: 2, times_used: 2 },
    ],
    orders: [
      {
        id: 'ORD-1002',
        customer_id: 'C-2',
        items: [
          { sku: 'HP-7', quantity: 1, unit_price: 79 },
          { sku: 'CASE-1', quantity: 2, unit_price: 15 },
        ],
        shipping_address: '3 Mill Lane, Bath',
        coupon_code: 'SAVE10',
        subtotal: 109,
        discount: 10.9,
        total: 98.1,
        status: 'delivered',
        date: '2025-12-21',
      },
      {
        id: 'ORD-1005',
        customer_id: 'C-1',
        items: [{ sku: 'CAB-2', quantity: 1, unit_price: 8.99 }],
        shipping_address: '12 Rose St, Leeds',
        subtotal: 8.99,
        total: 8.99,
        status: 'shipped',
        date: '2026-01-18',
      },
      {
        id: 'ORD-1001',
        customer_id: 'C-1',
        items: [{ sku: 'MUG-BLU', quantity: 1, unit_price: 9.5 }],
        shipping_address: '12 Rose St, Leeds',
        subtotal: 9.5,
        total: 9.5,
        status: 'delivered',
        date: '2025-12-20',
      },
    ],
  });

const product = (s: State, sku: string) => s.products.find((p) => p.sku === sku);
const coupon = (s: State, code: string) => s.coupons.find((c) => c.code === code);

test('there is one handler per declared tool', async () => {
  assert.deepEqual(Object.keys(tools).sort(), [...(await loadRegistry()).get(NS)!.tools.keys()].sort());
});

test('cents rounds half up to the cent, also where binary floats sit just below the half', () => {
  assert.equal(cents(0.899), 0.9);
  assert.equal(cents(1.005), 1.01);
  assert.equal(cents(8.99 * 3), 26.97);
  assert.equal(cents(1.004), 1);
  assert.equal(cents(0), 0);
});

test('search_products matches any query word in name, category or description, with category and price filters', async () => {
  const out = await call('search_products', { query: 'usb-c cable' }, seed());
  assert.equal(out.changed, false);
  assert.deepEqual(out.result, {
    products: [
      { sku: 'CAB-1', name: 'USB-C cable 1m', category: 'cables', price: 6.49 },
      { sku: 'CAB-2', name: 'USB-C cable 2m', category: 'cables', price: 8.99 },
    ],
  });
  const skus = async (args: Record<string, unknown>) => ((await call('search_products', args, seed())).result as { products: { sku: string }[] }).products.map((p) => p.sku);
  assert.deepEqual(await skus({ query: 'STONEWARE' }), ['MUG-BLU']);
  assert.deepEqual(await skus({ query: '"stoneware," mug?' }), ['MUG-BLU']);
  assert.deepEqual(await skus({ query: ' ... ' }), ['CAB-1', 'CAB-2', 'MUG-BLU', 'HP-7', 'CASE-1']);
  assert.deepEqual(await skus({ query: 'audio' }), ['HP-7', 'CASE-1']);
  assert.deepEqual(await skus({ query: '', category: 'kitchen' }), ['MUG-BLU']);
  assert.deepEqual(await skus({ query: '' }), ['CAB-1', 'CAB-2', 'MUG-BLU', 'HP-7', 'CASE-1']);
  assert.deepEqual(await skus({ query: '', min_price: 8.99, max_price: 15 }), ['CAB-2', 'MUG-BLU', 'CASE-1']);
  assert.deepEqual(await skus({ query: 'cable', max_price: 5 }), []);
});

test('check_inventory gives sku, name, price and stock, and refuses an unknown sku', async () => {
  const out = await call('check_inventory', { sku: 'CAB-1' }, seed());
  assert.equal(out.changed, false);
  assert.deepEqual(out.result, { product: { sku: 'CAB-1', name: 'USB-C cable 1m', price: 6.49, stock: 0 } });
  await refuses('check_inventory', { sku: 'NOPE' }, seed(), /Unknown sku "NOPE"/);
});

test('apply_coupon computes the discount without using the coupon up', async () => {
  const out = await call('apply_coupon', { code: 'save10', order_subtotal: 8.99 }, seed());
  assert.equal(out.changed, false);
  assert.deepEqual(out.result, {
    valid: true,
    coupon: { code: 'SAVE10', type: 'percent', value: 10, min_subtotal: 5, expires: '2026-01-20' },
    subtotal: 8.99,
    discount: 0.9,
    total: 8.09,
  });
  // A fixed coupon takes its value, at most the subtotal.
  assert.deepEqual(pick((await call('apply_coupon', { code: 'FIVE', order_subtotal: 20 }, seed())).result), { discount: 5, total: 15 });
  assert.deepEqual(pick((await call('apply_coupon', { code: 'FIVE', order_subtotal: 3.5 }, seed())).result), { discount: 3.5, total: 0 });
  // The expiry day itself is still valid, and the minimum subtotal is inclusive.
  assert.deepEqual(pick((await call('apply_coupon', { code: 'SAVE10', order_subtotal: 5 }, seed())).result), { discount: 0.5, total: 4.5 });
  assert.deepEqual(pick((await call('apply_coupon', { code: 'BIG', order_subtotal: 50 }, seed())).result), { discount: 10, total: 40 });
});

function pick(result: unknown): { discount: number; total: number } {
  const { discount, total } = result as { discount: number; total: number };
  return { discount, total };
}

test('apply_coupon says why a coupon is rejected', async () => {
  await refuses('apply_coupon', { code: 'NOPE', order_subtotal: 10 }, seed(), /Coupon "NOPE" does not exist/);
  await refuses('apply_coupon', { code: 'OLD20', order_subtotal: 10 }, seed(), /OLD20 expired on 2026-01-19 \(today is 2026-01-20\)/);
  await refuses('apply_coupon', { code: 'BIG', order_subtotal: 49.99 }, seed(), /BIG needs a subtotal of at least 50.00; this subtotal is 49.99/);
  await refuses('apply_coupon', { code: 'GONE', order_subtotal: 10 }, seed(), /GONE has reached its usage limit \(2 uses\)/);
});

test('create_order places an order dated today, merges lines, takes stock and uses the coupon', async () => {
  const out = await call(
    'create_order',
    {
      customer_id: 'C-1',
      items: [
        { sku: 'CAB-2', quantity: 1 },
        { sku: 'MUG-BLU', quantity: 2 },
        { sku: 'CAB-2', quantity: 2 },
      ],
      shipping_address: '12 Rose St, Leeds',
      coupon_code: ' save10 ',
    },
    seed(),
  );
  const order = {
    id: 'ORD-1006',
    customer_id: 'C-1',
    items: [
      { sku: 'CAB-2', quantity: 3, unit_price: 8.99 },
      { sku: 'MUG-BLU', quantity: 2, unit_price: 9.5 },
    ],
    shipping_address: '12 Rose St, Leeds',
    coupon_code: 'SAVE10',
    subtotal: 45.97,
    discount: 4.6,
    total: 41.37,
    status: 'placed',
    date: '2026-01-20',
  };
  assert.deepEqual(out.state!.orders.at(-1), order);
  assert.deepEqual(out.result, {
    order: {
      id: 'ORD-1006',
      customer_id: 'C-1',
      date: '2026-01-20',
      status: 'placed',
      items: order.items,
      shipping_address: '12 Rose St, Leeds',
      coupon_code: 'SAVE10',
      subtotal: 45.97,
      discount: 4.6,
      total: 41.37,
    },
  });
  assert.equal(product(out.state!, 'CAB-2')!.stock, 9);
  assert.equal(product(out.state!, 'MUG-BLU')!.stock, 3);
  assert.equal(coupon(out.state!, 'SAVE10')!.times_used, 1);
});

test('create_order without a coupon has no discount, and the first order of a store is ORD-1001', async () => {
  const store = normalizeState({ products: [{ sku: 'A', name: 'A', category: 'x', price: 2.5, stock: 1 }], customers: [{ id: 'C-1', name: 'Lena' }] });
  const out = await call('create_order', { customer_id: 'C-1', items: [{ sku: 'A', quantity: 1 }], shipping_address: 'Here' }, store);
  assert.deepEqual(out.state!.orders, [
    {
      id: 'ORD-1001',
      customer_id: 'C-1',
      items: [{ sku: 'A', quantity: 1, unit_price: 2.5 }],
      shipping_address: 'Here',
      subtotal: 2.5,
      discount: 0,
      total: 2.5,
      status: 'placed',
      date: '2026-01-01',
    },
  ]);
  assert.equal(product(out.state!, 'A')!.stock, 0);
});

test('create_order fails changing nothing: unknown customer or sku, short stock, blank address, invalid coupon', async () => {
  const line = [{ sku: 'CAB-2', quantity: 1 }];
  await refuses('create_order', { customer_id: 'C-9', items: line, shipping_address: 'X' }, seed(), /Unknown customer id "C-9"/);
  await refuses('create_order', { customer_id: 'C-1', items: line, shipping_address: '  ' }, seed(), /shipping_address must not be empty/);
  await refuses(
    'create_order',
    { customer_id: 'C-1', items: [{ sku: 'CAB-2', quantity: 1 }, { sku: 'ZZZ', quantity: 1 }, { sku: 'CAB-1', quantity: 1 }], shipping_address: 'X' },
    seed(),
    /nothing changed.*unknown sku "ZZZ".*out of stock: CAB-1 has 0 in stock, 1 ordered/,
  );
  // Lines of one sku are merged before the stock check: 3 + 3 > 5.
  await refuses(
    'create_order',
    { customer_id: 'C-1', items: [{ sku: 'MUG-BLU', quantity: 3 }, { sku: 'MUG-BLU', quantity: 3 }], shipping_address: 'X' },
    seed(),
    /out of stock: MUG-BLU has 5 in stock, 6 ordered/,
  );
  await refuses('create_order', { customer_id: 'C-1', items: line, shipping_address: 'X', coupon_code: 'OLD20' }, seed(), /OLD20 expired.*Order not placed/);
  await refuses('create_order', { customer_id: 'C-1', items: line, shipping_address: 'X', coupon_code: 'BIG' }, seed(), /at least 50.00; this subtotal is 8.99/);
  await refuses('create_order', { customer_id: 'C-1', items: line, shipping_address: 'X', coupon_code: 'NOPE' }, seed(), /"NOPE" does not exist/);
});

test('a coupon with a usage limit is used up by the orders that use it', async () => {
  const args = { customer_id: 'C-1', items: [{ sku: 'CAB-2', quantity: 1 }], shipping_address: 'X', coupon_code: 'ONCE' };
  const first = await call('create_order', args, seed());
  assert.equal((first.result as { order: { discount: number } }).order.discount, 4.5);
  assert.equal(coupon(first.state!, 'ONCE')!.times_used, 1);
  await refuses('create_order', args, first.state!, /ONCE has reached its usage limit \(1 use\)/);
  await refuses('apply_coupon', { code: 'once', order_subtotal: 10 }, first.state!, /usage limit/);
});

test('check_order_status shows the order with its returns, and refuses an unknown order', async () => {
  const returned = (await call('process_return', { order_id: 'ORD-1002', items: ['HP-7'], reason: 'Faulty', refund_method: 'store_credit' }, seed())).state!;
  const out = await call('check_order_status', { order_id: 'ORD-1002' }, returned);
  assert.equal(out.changed, false);
  const order = (out.result as { order: Record<string, unknown> }).order;
  assert.equal(order.status, 'partially_returned');
  assert.equal(order.total, 98.1);
  assert.deepEqual(order.returns, [
    { id: 'RET-1001', order_id: 'ORD-1002', items: ['HP-7'], reason: 'Faulty', refund_method: 'store_credit', refund_amount: 71.1, date: '2026-01-20' },
  ]);
  assert.deepEqual(((await call('check_order_status', { order_id: 'ORD-1005' }, seed())).result as { order: { returns: unknown[] } }).order.returns, []);
  await refuses('check_order_status', { order_id: 'ORD-9' }, seed(), /Unknown order id "ORD-9"/);
});

test('process_return refunds the lines less their share of the discount, restocks them, and tracks the order status', async () => {
  const first = await call('process_return', { order_id: 'ORD-1002', items: ['HP-7'], reason: 'Faulty', refund_method: 'store_credit' }, seed());
  // 79 less 79/109 of the 10.90 discount = 79 - 7.90.
  assert.deepEqual(first.result, {
    return: { id: 'RET-1001', order_id: 'ORD-1002', items: ['HP-7'], reason: 'Faulty', refund_method: 'store_credit', refund_amount: 71.1, date: '2026-01-20' },
    order_status: 'partially_returned',
  });
  assert.equal(product(first.state!, 'HP-7')!.stock, 5);
  assert.equal(product(first.state!, 'CASE-1')!.stock, 10);
  const second = await call('process_return', { order_id: 'ORD-1002', items: ['CASE-1'], reason: 'Not needed', refund_method: 'original_payment' }, first.state!);
  assert.equal((second.result as { return: { id: string; refund_amount: number } }).return.id, 'RET-1002');
  assert.equal((second.result as { return: { refund_amount: number } }).return.refund_amount, 27);
  assert.equal(second.state!.orders.find((o) => o.id === 'ORD-1002')!.status, 'returned');
  assert.equal(product(second.state!, 'CASE-1')!.stock, 12);
  await refuses('process_return', { order_id: 'ORD-1002', items: ['HP-7'], reason: 'x', refund_method: 'store_credit' }, second.state!, /ORD-1002 is returned/);
});

test('process_return keeps to the return window, inclusive of its last day', async () => {
  // ORD-1002 is 30 days old (the default window), ORD-1001 31 days.
  assert.ok((await call('process_return', { order_id: 'ORD-1002', items: ['HP-7'], reason: 'x', refund_method: 'store_credit' }, seed())).changed);
  await refuses(
    'process_return',
    { order_id: 'ORD-1001', items: ['MUG-BLU'], reason: 'x', refund_method: 'store_credit' },
    seed(),
    /outside the return window: ordered 2025-12-20, 31 days before today \(2026-01-20\); returns are accepted for 30 days/,
  );
  const generous = normalizeState({ ...structuredClone(seed()), return_window_days: 45 });
  assert.ok((await call('process_return', { order_id: 'ORD-1001', items: ['MUG-BLU'], reason: 'x', refund_method: 'store_credit' }, generous)).changed);
});

test('process_return refuses unknown or undelivered orders, foreign or returned skus, and a blank reason', async () => {
  const ret = (order_id: string, items: string[], reason = 'Faulty') => ({ order_id, items, reason, refund_method: 'store_credit' });
  await refuses('process_return', ret('ORD-9', ['HP-7']), seed(), /Unknown order id "ORD-9"/);
  await refuses('process_return', ret('ORD-1005', ['CAB-2']), seed(), /ORD-1005 is shipped: only delivered/);
  await refuses('process_return', ret('ORD-1002', ['HP-7', 'CAB-2']), seed(), /nothing changed.*not in order ORD-1002: CAB-2 \(it has HP-7, CASE-1\)/);
  await refuses('process_return', ret('ORD-1002', ['HP-7'], ' '), seed(), /reason must not be empty/);
  const once = (await call('process_return', ret('ORD-1002', ['HP-7']), seed())).state!;
  await refuses('process_return', ret('ORD-1002', ['CASE-1', 'HP-7']), once, /already returned: HP-7/);
});

// Every task of the namespace: its reference solutions, replayed through its server, pass; its counterexamples
// fail. A refused call is recorded and the sequence goes on, as an agent's would.
testFixtureTasks(NS);
