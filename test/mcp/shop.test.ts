import { test } from 'node:test';
import assert from 'node:assert/strict';
import shop from '../../server/src/mcp/shop/index.ts';
import { normalizeState, DEFAULT_TODAY } from '../../server/src/mcp/shop/state.ts';

const state = normalizeState({
  today: '2026-01-20',
  products: [
    { sku: 'CAB-2', name: 'USB-C cable 2m', category: 'cables', price: 8.99, stock: 11 },
    { sku: 'HP-7', name: 'Wireless headphones', category: 'audio', price: 79, stock: 0 },
  ],
  customers: [{ id: 'C-1', name: 'Lena' }, { id: 'C-2', name: 'Sam' }],
  coupons: [{ code: 'SAVE10', type: 'percent', value: 10 }],
  orders: [
    {
      id: 'ORD-1001',
      customer_id: 'C-1',
      items: [{ sku: 'CAB-2', quantity: 1, unit_price: 8.99 }],
      shipping_address: '12 Rose St, Leeds',
      coupon_code: 'save10',
      subtotal: 8.99,
      discount: 0.9,
      total: 8.09,
      status: 'placed',
      date: '2026-01-20',
    },
    {
      id: 'ORD-1002',
      customer_id: 'C-2',
      items: [
        { sku: 'HP-7', quantity: 1, unit_price: 79 },
        { sku: 'CAB-2', quantity: 2, unit_price: 8.99 },
      ],
      shipping_address: '3 Mill Lane, Bath',
      subtotal: 96.98,
      total: 96.98,
      status: 'partially_returned',
      date: '2026-01-05',
    },
    // A coupon recorded with no discount does not count as applied.
    {
      id: 'ORD-1003',
      customer_id: 'C-2',
      items: [{ sku: 'CAB-2', quantity: 1, unit_price: 8.99 }],
      shipping_address: '3 Mill Lane, Bath',
      coupon_code: 'ZERO',
      subtotal: 8.99,
      discount: 0,
      total: 8.99,
      status: 'delivered',
      date: '2026-01-06',
    },
  ],
  returns: [
    { id: 'RET-1001', order_id: 'ORD-1002', items: ['HP-7'], reason: 'Faulty', refund_method: 'store_credit', refund_amount: 79, date: '2026-01-20' },
  ],
});
const check = (name: string, args: Record<string, unknown>, s = state): boolean => {
  const predicate = shop.predicates[name];
  assert.ok(predicate, name);
  const verdict = predicate(args, { state: s, answer: undefined });
  JSON.stringify(verdict.evidence);
  return verdict.value;
};
const empty = normalizeState(undefined);

test('normalizeState fills defaults', () => {
  assert.equal(empty.today, DEFAULT_TODAY);
  assert.equal(empty.return_window_days, 30);
  assert.deepEqual([empty.products, empty.customers, empty.coupons, empty.orders, empty.returns], [[], [], [], [], []]);
  assert.equal(state.coupons[0]?.times_used, 0);
  assert.equal(state.coupons[0]?.min_subtotal, 0);
  assert.equal(state.orders[1]?.discount, 0);
});

test('orderExists: items, exact_items, coupon (case-insensitive), address, total', () => {
  assert.equal(check('orderExists', { customer_id: 'C-1', items: [{ sku: 'CAB-2', quantity: 1 }], exact_items: true, coupon_code: 'SAVE10' }), true);
  assert.equal(check('orderExists', { customer_id: 'C-1', items: [{ sku: 'CAB-2', quantity: 2 }] }), false);
  assert.equal(check('orderExists', { customer_id: 'C-2', items: [{ sku: 'CAB-2' }] }), true);
  assert.equal(check('orderExists', { order_id: 'ORD-1002', items: [{ sku: 'CAB-2' }], exact_items: true }), false, 'ORD-1002 also has HP-7');
  assert.equal(check('orderExists', { order_id: 'ORD-1002', items: [{ sku: 'CAB-2' }, { sku: 'HP-7' }], exact_items: true }), true);
  assert.equal(check('orderExists', { customer_id: 'C-2', coupon_code: 'SAVE10' }), false);
  assert.equal(check('orderExists', { shipping_address_contains: 'rose st, LEEDS', status: 'placed' }), true);
  assert.equal(check('orderExists', { shipping_address_contains: 'York' }), false);
  assert.equal(check('orderExists', { customer_id: 'C-1', total: 8.09 }), true);
  assert.equal(check('orderExists', { customer_id: 'C-1', total: 8.99 }), false);
  assert.equal(check('orderExists', { customer_id: 'C-1', total: 8.99, tolerance: 1 }), true);
  assert.equal(check('orderExists', {}, empty), false);
});

test('orderTotal: selectors and tolerance', () => {
  assert.equal(check('orderTotal', { customer_id: 'C-1', value: 8.09 }), true);
  assert.equal(check('orderTotal', { customer_id: 'C-1', value: 8.1 }), true, 'within the default 0.01');
  assert.equal(check('orderTotal', { customer_id: 'C-1', value: 8.11 }), false);
  assert.equal(check('orderTotal', { order_id: 'ORD-1002', value: 96.98 }), true);
  assert.equal(check('orderTotal', { order_id: 'ORD-1002', value: 97, tolerance: 0 }), false);
  assert.equal(check('orderTotal', { customer_id: 'C-2', sku: 'HP-7', value: 8.99 }), false, 'the 8.99 order has no HP-7');
  assert.equal(check('orderTotal', { customer_id: 'C-2', value: 8.99 }), true);
  assert.equal(check('orderTotal', { order_id: 'ORD-9999', value: 0, tolerance: 100 }), false);
});

test('orderStatus', () => {
  assert.equal(check('orderStatus', { order_id: 'ORD-1002', status: 'partially_returned' }), true);
  assert.equal(check('orderStatus', { order_id: 'ORD-1002', status: 'returned' }), false);
  assert.equal(check('orderStatus', { order_id: 'ORD-9999', status: 'placed' }), false);
});

test('orderCount', () => {
  assert.equal(check('orderCount', { customer_id: 'C-2', equals: 2 }), true);
  assert.equal(check('orderCount', { customer_id: 'C-1', equals: 2 }), false);
  assert.equal(check('orderCount', { sku: 'CAB-2', min: 3 }), true);
  assert.equal(check('orderCount', { coupon_code: 'Save10', equals: 1 }), true);
  assert.equal(check('orderCount', { status: 'delivered', max: 0 }), false);
  assert.equal(check('orderCount', { equals: 0 }, empty), true);
});

test('returnProcessed: sku and refund method', () => {
  assert.equal(check('returnProcessed', { order_id: 'ORD-1002' }), true);
  assert.equal(check('returnProcessed', { order_id: 'ORD-1002', sku: 'HP-7', refund_method: 'store_credit' }), true);
  assert.equal(check('returnProcessed', { order_id: 'ORD-1002', sku: 'HP-7', refund_method: 'original_payment' }), false);
  assert.equal(check('returnProcessed', { order_id: 'ORD-1002', sku: 'CAB-2' }), false);
  assert.equal(check('returnProcessed', { order_id: 'ORD-1001' }), false);
});

test('stockLevel: bounds, zero stock, unknown sku', () => {
  assert.equal(check('stockLevel', { sku: 'CAB-2', equals: 11 }), true);
  assert.equal(check('stockLevel', { sku: 'CAB-2', max: 10 }), false);
  assert.equal(check('stockLevel', { sku: 'HP-7', equals: 0 }), true);
  assert.equal(check('stockLevel', { sku: 'HP-7', min: 1 }), false);
  assert.equal(check('stockLevel', { sku: 'NOPE', min: 0 }), false);
});

test('couponApplied: code case-insensitive, discount must be above zero', () => {
  assert.equal(check('couponApplied', { coupon_code: 'SAVE10' }), true);
  assert.equal(check('couponApplied', { coupon_code: 'save10', customer_id: 'C-1' }), true);
  assert.equal(check('couponApplied', { coupon_code: 'SAVE10', customer_id: 'C-2' }), false);
  assert.equal(check('couponApplied', { coupon_code: 'SAVE10', order_id: 'ORD-1002' }), false);
  assert.equal(check('couponApplied', { coupon_code: 'ZERO' }), false);
});

test('state schema: accepts {} and its examples, rejects a malformed state', async () => {
  const { loadRegistry } = await import('../../server/src/mcp/registry.ts');
  const info = (await loadRegistry()).get('shop');
  assert.ok(info);
  assert.equal(info.validateState({}), true);
  for (const example of (info.server.state_schema.examples as unknown[]) ?? []) assert.equal(info.validateState(example), true, JSON.stringify(example));
  assert.equal(info.validateState({ today: "20 Jan 2026" }), false);
});
