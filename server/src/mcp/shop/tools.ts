/**
 * The store's tools as pure functions of the state (ReliabilityBench e-commerce domain, Appendix A.4). The
 * rules are the ones the tool descriptions in schemas/servers/shop.json promise an agent. "Today" is the
 * state's `today`, never the clock, so a run replays identically.
 */
import { findCustomers } from '../customers.ts';
import { ToolError, type ToolHandler } from '../namespace.ts';
import type { Coupon, Customer, Exchange, Order, OrderItem, Product, RefundMethod, Return, ShopState } from './state.ts';

/**
 * Rounds money to the cent, half up. The nudge makes amounts whose binary form sits just below a half cent
 * (1.005 is 1.00499999...) round as their decimal form does; it is far below any real sub-cent amount.
 */
export function cents(x: number): number {
  const n = Number(x.toPrecision(15));
  return Math.round(n * 100 + 1e-6) / 100;
}

const money = (x: number): string => x.toFixed(2);
const blank = (s: string): boolean => s.trim() === '';
const sameCode = (a: string, b: string): boolean => a.trim().toUpperCase() === b.trim().toUpperCase();

/** `<prefix>-<n>` with n one above the highest existing number under that prefix; the first is `<prefix>-1001`. */
function nextId(prefix: string, ids: readonly string[]): string {
  const pattern = new RegExp(`^${prefix}-(\\d+)$`);
  let max = 1000;
  for (const id of ids) {
    const m = pattern.exec(id);
    if (m) max = Math.max(max, Number(m[1]));
  }
  return `${prefix}-${max + 1}`;
}

/** Whole days from `from` to `to` (both YYYY-MM-DD); both parse as UTC midnight, so no DST drift. */
function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(to) - Date.parse(from)) / 86_400_000);
}

interface CouponCheck {
  coupon: Coupon;
  discount: number;
}

/** Validates a coupon against a subtotal as both apply_coupon and create_order describe it, or says why not. */
function checkCoupon(state: ShopState, code: string, subtotal: number): CouponCheck {
  const coupon = state.coupons.find((c) => sameCode(c.code, code));
  if (!coupon) throw new ToolError(`Coupon "${code}" does not exist.`);
  if (coupon.expires !== undefined && state.today > coupon.expires) {
    throw new ToolError(`Coupon ${coupon.code} expired on ${coupon.expires} (today is ${state.today}).`);
  }
  if (subtotal < coupon.min_subtotal) {
    throw new ToolError(`Coupon ${coupon.code} needs a subtotal of at least ${money(coupon.min_subtotal)}; this subtotal is ${money(subtotal)}.`);
  }
  if (coupon.usage_limit !== undefined && coupon.times_used >= coupon.usage_limit) {
    throw new ToolError(`Coupon ${coupon.code} has reached its usage limit (${coupon.usage_limit} use${coupon.usage_limit === 1 ? '' : 's'}).`);
  }
  const raw = coupon.type === 'percent' ? (subtotal * coupon.value) / 100 : coupon.value;
  // Capped at the subtotal for both types, so a total is never negative (a percent over 100 is a data error).
  return { coupon, discount: Math.min(cents(raw), cents(subtotal)) };
}

function couponView(c: Coupon): Record<string, unknown> {
  const view: Record<string, unknown> = { code: c.code, type: c.type, value: c.value, min_subtotal: c.min_subtotal };
  if (c.expires !== undefined) view.expires = c.expires;
  return view;
}

function returnView(r: Return): Record<string, unknown> {
  return {
    id: r.id,
    order_id: r.order_id,
    items: [...r.items],
    reason: r.reason,
    refund_method: r.refund_method,
    refund_amount: r.refund_amount,
    date: r.date,
  };
}

function orderView(o: Order, returns?: readonly Return[]): Record<string, unknown> {
  const view: Record<string, unknown> = {
    id: o.id,
    customer_id: o.customer_id,
    date: o.date,
    status: o.status,
    items: o.items.map((i) => ({ sku: i.sku, quantity: i.quantity, unit_price: i.unit_price })),
    shipping_address: o.shipping_address,
  };
  if (o.coupon_code !== undefined) view.coupon_code = o.coupon_code;
  view.subtotal = o.subtotal;
  view.discount = o.discount;
  view.total = o.total;
  if (returns) view.returns = returns.map(returnView);
  return view;
}

/** Query words, lower-cased, without the punctuation around them ("cable," finds "cable"; "usb-c" stays whole). */
function queryWords(query: string): string[] {
  const words = query
    .toLowerCase()
    .split(/\s+/)
    .map((w) => w.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, ''))
    .filter((w) => w !== '');
  return [...new Set(words)];
}

const search_products: ToolHandler<ShopState> = (
  args: { query: string; category?: string; min_price?: number; max_price?: number },
  state,
) => {
  const words = queryWords(args.query);
  const category = args.category?.trim().toLowerCase();
  const products = state.products
    .filter((p) => {
      if (category && p.category.trim().toLowerCase() !== category) return false;
      if (args.min_price !== undefined && p.price < args.min_price) return false;
      if (args.max_price !== undefined && p.price > args.max_price) return false;
      if (words.length === 0) return true;
      const text = `${p.name}\n${p.category}\n${p.description ?? ''}`.toLowerCase();
      return words.some((w) => text.includes(w));
    })
    .map((p) => ({ sku: p.sku, name: p.name, category: p.category, price: p.price, ...variantView(p) }));
  return { result: { products } };
};

/** A variant's group and options, when the product has them. */
function variantView(p: Product): Record<string, unknown> {
  return { ...(p.variant_of !== undefined ? { variant_of: p.variant_of } : {}), ...(p.options ? { options: { ...p.options } } : {}) };
}

/** The group a product belongs to: what it is a variant of, or itself. */
const groupOf = (p: Product): string => p.variant_of ?? p.sku;

const check_inventory: ToolHandler<ShopState> = (args: { sku: string }, state) => {
  const p = state.products.find((x) => x.sku === args.sku);
  if (!p) throw new ToolError(`Unknown sku "${args.sku}". Use search_products to find skus.`);
  const variants = state.products.filter((x) => x.sku !== p.sku && groupOf(x) === groupOf(p)).map((x) => ({ sku: x.sku, ...variantView(x), price: x.price, stock: x.stock }));
  return { result: { product: { sku: p.sku, name: p.name, price: p.price, stock: p.stock, ...variantView(p), ...(variants.length ? { other_variants: variants } : {}) } } };
};

function customerView(c: Customer): Record<string, unknown> {
  return { id: c.id, name: c.name, ...(c.email !== undefined ? { email: c.email } : {}), ...(c.address !== undefined ? { address: c.address } : {}) };
}

const find_customer: ToolHandler<ShopState> = (args: { name?: string; email?: string }, state) => ({ result: { customers: findCustomers(state.customers, args).map(customerView) } });

const list_customer_orders: ToolHandler<ShopState> = (args: { customer_id: string }, state) => {
  if (!state.customers.some((c) => c.id === args.customer_id)) throw new ToolError(`Unknown customer id "${args.customer_id}". Use find_customer to find it.`);
  const orders = state.orders.filter((o) => o.customer_id === args.customer_id).map((o) => orderView(o, state.returns.filter((r) => r.order_id === o.id)));
  return { result: { customer_id: args.customer_id, orders } };
};

const apply_coupon: ToolHandler<ShopState> = (args: { code: string; order_subtotal: number }, state) => {
  const subtotal = cents(args.order_subtotal);
  const { coupon, discount } = checkCoupon(state, args.code, subtotal);
  return { result: { valid: true, coupon: couponView(coupon), subtotal, discount, total: cents(subtotal - discount) } };
};

const create_order: ToolHandler<ShopState> = (
  args: { customer_id: string; items: { sku: string; quantity: number }[]; shipping_address: string; coupon_code?: string },
  state,
) => {
  if (!state.customers.some((c) => c.id === args.customer_id)) {
    throw new ToolError(`Unknown customer id "${args.customer_id}". Nothing was ordered.`);
  }
  if (blank(args.shipping_address)) throw new ToolError('shipping_address must not be empty. Nothing was ordered.');
  const merged = new Map<string, number>();
  for (const line of args.items) merged.set(line.sku, (merged.get(line.sku) ?? 0) + line.quantity);
  // Every problem with the lines at once, so one retry can fix them all.
  const problems: string[] = [];
  const items: OrderItem[] = [];
  for (const [sku, quantity] of merged) {
    const p = state.products.find((x) => x.sku === sku);
    if (!p) problems.push(`unknown sku "${sku}"`);
    else if (quantity > p.stock) problems.push(`out of stock: ${sku} has ${p.stock} in stock, ${quantity} ordered`);
    else items.push({ sku, quantity, unit_price: p.price });
  }
  if (problems.length > 0) throw new ToolError(`Order not placed (nothing changed): ${problems.join('; ')}.`);
  const subtotal = cents(items.reduce((sum, i) => sum + i.quantity * i.unit_price, 0));
  let applied: CouponCheck | undefined;
  if (args.coupon_code !== undefined) {
    try {
      applied = checkCoupon(state, args.coupon_code, subtotal);
    } catch (error) {
      if (error instanceof ToolError) throw new ToolError(`${error.message} Order not placed (nothing changed); order without the coupon or with a valid one.`);
      throw error;
    }
  }
  const discount = applied?.discount ?? 0;
  const couponCode = applied?.coupon.code;
  // Schema key order, so a snapshot lists every order's fields alike.
  const order: Order = {
    id: nextId('ORD', state.orders.map((o) => o.id)),
    customer_id: args.customer_id,
    items,
    shipping_address: args.shipping_address,
    ...(couponCode !== undefined ? { coupon_code: couponCode } : {}),
    subtotal,
    discount,
    total: cents(subtotal - discount),
    status: 'placed',
    date: state.today,
  };
  const next = structuredClone(state);
  for (const i of items) next.products.find((p) => p.sku === i.sku)!.stock -= i.quantity;
  if (couponCode !== undefined) next.coupons.find((c) => c.code === couponCode)!.times_used += 1;
  next.orders.push(structuredClone(order));
  return { state: next, result: { order: orderView(order) } };
};

const check_order_status: ToolHandler<ShopState> = (args: { order_id: string }, state) => {
  const o = state.orders.find((x) => x.id === args.order_id);
  if (!o) throw new ToolError(`Unknown order id "${args.order_id}".`);
  return { result: { order: orderView(o, state.returns.filter((r) => r.order_id === o.id)) } };
};

const RETURNABLE = new Set(['delivered', 'partially_returned']);
const REFUND_METHODS: readonly RefundMethod[] = ['original_payment', 'store_credit'];

const process_return: ToolHandler<ShopState> = (
  args: { order_id: string; items: string[]; reason: string; refund_method: RefundMethod },
  state,
) => {
  const index = state.orders.findIndex((x) => x.id === args.order_id);
  const order = state.orders[index];
  if (!order) throw new ToolError(`Unknown order id "${args.order_id}".`);
  if (!RETURNABLE.has(order.status)) {
    throw new ToolError(`Order ${order.id} is ${order.status}: only delivered (or partially returned) orders can be returned.`);
  }
  const age = daysBetween(order.date, state.today);
  if (age > state.return_window_days) {
    throw new ToolError(
      `Order ${order.id} is outside the return window: ordered ${order.date}, ${age} days before today (${state.today}); returns are accepted for ${state.return_window_days} days.`,
    );
  }
  if (blank(args.reason)) throw new ToolError('reason must not be empty: say why the items are returned.');
  if (!REFUND_METHODS.includes(args.refund_method)) throw new ToolError(`refund_method must be one of ${REFUND_METHODS.join(', ')}.`);
  const skus = [...new Set(args.items)];
  const done = new Set(state.returns.filter((r) => r.order_id === order.id).flatMap((r) => r.items));
  const notInOrder = skus.filter((s) => !order.items.some((i) => i.sku === s));
  const already = skus.filter((s) => done.has(s));
  if (notInOrder.length > 0 || already.length > 0) {
    const parts: string[] = [];
    if (notInOrder.length > 0) parts.push(`not in order ${order.id}: ${notInOrder.join(', ')} (it has ${order.items.map((i) => i.sku).join(', ')})`);
    if (already.length > 0) parts.push(`already returned: ${already.join(', ')}`);
    throw new ToolError(`Return not processed (nothing changed): ${parts.join('; ')}.`);
  }
  const lines = order.items.filter((i) => skus.includes(i.sku));
  const value = lines.reduce((sum, i) => sum + i.quantity * i.unit_price, 0);
  const share = order.subtotal > 0 ? (order.discount * value) / order.subtotal : 0;
  const record: Return = {
    id: nextId('RET', state.returns.map((r) => r.id)),
    order_id: order.id,
    items: skus,
    reason: args.reason,
    refund_method: args.refund_method,
    refund_amount: Math.max(0, cents(value - share)),
    date: state.today,
  };
  const next = structuredClone(state);
  for (const line of lines) {
    // A product dropped from the catalog since the order has no stock to return to.
    const product: Product | undefined = next.products.find((p) => p.sku === line.sku);
    if (product) product.stock += line.quantity;
  }
  skus.forEach((s) => done.add(s));
  const nextOrder = next.orders[index]!;
  nextOrder.status = order.items.every((i) => done.has(i.sku)) ? 'returned' : 'partially_returned';
  next.returns.push(record);
  return { state: next, result: { return: returnView(record), order_status: nextOrder.status } };
};

const exchange_item: ToolHandler<ShopState> = (args: { order_id: string; sku: string; new_sku: string; reason: string }, state) => {
  const order = state.orders.find((x) => x.id === args.order_id);
  if (!order) throw new ToolError(`Unknown order id "${args.order_id}".`);
  if (!RETURNABLE.has(order.status)) throw new ToolError(`Order ${order.id} is ${order.status}: only delivered (or partially returned) orders can be exchanged.`);
  const age = daysBetween(order.date, state.today);
  if (age > state.return_window_days) {
    throw new ToolError(`Order ${order.id} is outside the exchange window: ordered ${order.date}, ${age} days before today (${state.today}); exchanges are accepted for ${state.return_window_days} days.`);
  }
  if (blank(args.reason)) throw new ToolError('reason must not be empty: say why the item is exchanged.');
  const line = order.items.find((i) => i.sku === args.sku);
  if (!line) throw new ToolError(`${args.sku} is not in order ${order.id} (it has ${order.items.map((i) => i.sku).join(', ')}).`);
  if (state.returns.some((r) => r.order_id === order.id && r.items.includes(args.sku))) throw new ToolError(`${args.sku} of order ${order.id} was returned; it cannot be exchanged.`);
  const current = state.products.find((p) => p.sku === args.sku);
  const wanted = state.products.find((p) => p.sku === args.new_sku);
  if (!wanted) throw new ToolError(`Unknown sku "${args.new_sku}". check_inventory lists a product's other variants.`);
  if (args.new_sku === args.sku) throw new ToolError('new_sku is the sku already ordered: nothing to exchange.');
  if (order.items.some((i) => i.sku === args.new_sku)) throw new ToolError(`Order ${order.id} already has a line of ${args.new_sku}; exchange into a variant it does not have.`);
  if (!current || groupOf(current) !== groupOf(wanted)) throw new ToolError(`${args.new_sku} is not a variant of ${args.sku}: an exchange swaps an item for another variant of the same product (return it and order the other product instead).`);
  if (cents(wanted.price) !== cents(line.unit_price)) {
    throw new ToolError(`${args.new_sku} costs ${money(wanted.price)} and ${args.sku} was bought at ${money(line.unit_price)}: exchanges are for variants at the same price.`);
  }
  if (wanted.stock < line.quantity) throw new ToolError(`Out of stock: ${args.new_sku} has ${wanted.stock} in stock, the exchange needs ${line.quantity}.`);
  const record: Exchange = {
    id: nextId('EXC', state.exchanges.map((e) => e.id)),
    order_id: order.id,
    sku: args.sku,
    new_sku: args.new_sku,
    quantity: line.quantity,
    reason: args.reason,
    date: state.today,
  };
  const next = structuredClone(state);
  next.products.find((p) => p.sku === args.sku)!.stock += line.quantity;
  next.products.find((p) => p.sku === args.new_sku)!.stock -= line.quantity;
  next.orders.find((o) => o.id === order.id)!.items.find((i) => i.sku === args.sku)!.sku = args.new_sku;
  next.exchanges.push(record);
  return { state: next, result: { exchange: { ...record }, order: orderView(next.orders.find((o) => o.id === order.id)!) } };
};

export const tools: Record<string, ToolHandler<ShopState>> = {
  search_products,
  check_inventory,
  find_customer,
  list_customer_orders,
  create_order,
  check_order_status,
  process_return,
  exchange_item,
  apply_coupon,
};
