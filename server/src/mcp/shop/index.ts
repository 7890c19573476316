/**
 * The shop namespace: the ReliabilityBench e-commerce domain. Orders placed during a run have ids the task
 * author cannot know, so `orderExists` takes every order field as a filter: conditions on one new order must
 * sit in one leaf to apply to the same order.
 */
import { defineNamespace, type PredicateFunction } from '../namespace.ts';
import { normalizeState, type Order, type OrderStatus, type RefundMethod, type ShopState } from './state.ts';
import { tools } from './tools.ts';

const sameCode = (a: string | undefined, b: string): boolean => a !== undefined && a.trim().toUpperCase() === b.trim().toUpperCase();
const contains = (haystack: string, needle: string): boolean => haystack.toLowerCase().includes(needle.trim().toLowerCase());
const hasSku = (o: Order, sku: string): boolean => o.items.some((i) => i.sku === sku);

interface Bounds {
  equals?: number;
  min?: number;
  max?: number;
}
const withinBounds = (n: number, b: Bounds): boolean =>
  (b.equals === undefined || n === b.equals) && (b.min === undefined || n >= b.min) && (b.max === undefined || n <= b.max);

// Money is compared with a tolerance; the epsilon keeps a tolerance of 0.01 from failing on 8.09 vs 8.0900000001.
const near = (a: number, b: number, tolerance: number): boolean => Math.abs(a - b) <= tolerance + 1e-9;

interface OrderFilters {
  order_id?: string;
  customer_id?: string;
  items?: { sku: string; quantity?: number }[];
  exact_items?: boolean;
  coupon_code?: string;
  status?: OrderStatus;
  shipping_address_contains?: string;
  total?: number;
  tolerance?: number;
}

function orderMatches(o: Order, f: OrderFilters): boolean {
  if (f.order_id !== undefined && o.id !== f.order_id) return false;
  if (f.customer_id !== undefined && o.customer_id !== f.customer_id) return false;
  if (f.items !== undefined) {
    for (const want of f.items) {
      const line = o.items.find((i) => i.sku === want.sku);
      if (!line || (want.quantity !== undefined && line.quantity !== want.quantity)) return false;
    }
    if (f.exact_items && o.items.some((i) => !f.items!.some((w) => w.sku === i.sku))) return false;
  }
  if (f.coupon_code !== undefined && !sameCode(o.coupon_code, f.coupon_code)) return false;
  if (f.status !== undefined && o.status !== f.status) return false;
  if (f.shipping_address_contains !== undefined && !contains(o.shipping_address, f.shipping_address_contains)) return false;
  if (f.total !== undefined && !near(o.total, f.total, f.tolerance ?? 0.01)) return false;
  return true;
}

/** The orders most like the ones asked for, shown as evidence when nothing matched. */
function candidates(state: ShopState, customer_id: string | undefined): Order[] {
  const pool = customer_id !== undefined ? state.orders.filter((o) => o.customer_id === customer_id) : state.orders;
  return pool.slice(-5);
}

const orderExists: PredicateFunction<ShopState> = (args: OrderFilters, { state }) => {
  const found = state.orders.filter((o) => orderMatches(o, args));
  return found.length > 0
    ? { value: true, evidence: { matched: found.slice(0, 5) } }
    : { value: false, evidence: { matched: [], candidates: candidates(state, args.customer_id) } };
};

const orderTotal: PredicateFunction<ShopState> = (
  args: { order_id?: string; customer_id?: string; sku?: string; value: number; tolerance?: number },
  { state },
) => {
  const selected = state.orders.filter(
    (o) =>
      (args.order_id === undefined || o.id === args.order_id) &&
      (args.customer_id === undefined || o.customer_id === args.customer_id) &&
      (args.sku === undefined || hasSku(o, args.sku)),
  );
  const tolerance = args.tolerance ?? 0.01;
  const hit = selected.find((o) => near(o.total, args.value, tolerance));
  return {
    value: hit !== undefined,
    evidence: { expected: args.value, tolerance, totals: selected.slice(0, 10).map((o) => ({ id: o.id, total: o.total })) },
  };
};

const orderStatus: PredicateFunction<ShopState> = (args: { order_id: string; status: OrderStatus }, { state }) => {
  const order = state.orders.find((o) => o.id === args.order_id);
  return { value: order?.status === args.status, evidence: { order_id: args.order_id, status: order?.status ?? null } };
};

const orderCount: PredicateFunction<ShopState> = (
  args: { customer_id?: string; sku?: string; coupon_code?: string; status?: OrderStatus } & Bounds,
  { state },
) => {
  const found = state.orders.filter(
    (o) =>
      (args.customer_id === undefined || o.customer_id === args.customer_id) &&
      (args.sku === undefined || hasSku(o, args.sku)) &&
      (args.coupon_code === undefined || sameCode(o.coupon_code, args.coupon_code)) &&
      (args.status === undefined || o.status === args.status),
  );
  return { value: withinBounds(found.length, args), evidence: { count: found.length, order_ids: found.map((o) => o.id).slice(0, 20) } };
};

const returnProcessed: PredicateFunction<ShopState> = (
  args: { order_id: string; sku?: string; refund_method?: RefundMethod },
  { state },
) => {
  const forOrder = state.returns.filter((r) => r.order_id === args.order_id);
  const hit = forOrder.find(
    (r) => (args.sku === undefined || r.items.includes(args.sku)) && (args.refund_method === undefined || r.refund_method === args.refund_method),
  );
  return { value: hit !== undefined, evidence: hit ? { return: hit } : { order_id: args.order_id, returns_for_order: forOrder } };
};

const stockLevel: PredicateFunction<ShopState> = (args: { sku: string } & Bounds, { state }) => {
  const product = state.products.find((p) => p.sku === args.sku);
  if (!product) return { value: false, evidence: { sku: args.sku, product: null } };
  return { value: withinBounds(product.stock, args), evidence: { sku: product.sku, stock: product.stock } };
};

const couponApplied: PredicateFunction<ShopState> = (args: { coupon_code: string; order_id?: string; customer_id?: string }, { state }) => {
  const selected = state.orders.filter(
    (o) => (args.order_id === undefined || o.id === args.order_id) && (args.customer_id === undefined || o.customer_id === args.customer_id),
  );
  const hit = selected.find((o) => sameCode(o.coupon_code, args.coupon_code) && o.discount > 0);
  return {
    value: hit !== undefined,
    evidence: hit
      ? { order_id: hit.id, coupon_code: hit.coupon_code, discount: hit.discount }
      : { orders: selected.slice(0, 10).map((o) => ({ id: o.id, coupon_code: o.coupon_code ?? null, discount: o.discount })) },
  };
};

const exchangeProcessed: PredicateFunction<ShopState> = (args: { order_id: string; sku?: string; new_sku?: string }, { state }) => {
  const forOrder = state.exchanges.filter((e) => e.order_id === args.order_id);
  const hit = forOrder.find((e) => (args.sku === undefined || e.sku === args.sku) && (args.new_sku === undefined || e.new_sku === args.new_sku));
  return { value: hit !== undefined, evidence: hit ? { exchange: hit } : { order_id: args.order_id, exchanges_for_order: forOrder } };
};

export default defineNamespace<ShopState>({
  namespace: 'shop',
  normalizeState,
  predicates: { orderExists, orderTotal, orderStatus, orderCount, returnProcessed, exchangeProcessed, stockLevel, couponApplied },
  tools,
});
