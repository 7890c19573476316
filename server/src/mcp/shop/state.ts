/**
 * The shop state (schemas/servers/shop.json `state_schema`) with every default filled in: the catalogue,
 * customers, coupons, and the orders, returns and exchanges made so far. "Today" is `today`, never the clock.
 */

export type OrderStatus = 'placed' | 'processing' | 'shipped' | 'delivered' | 'cancelled' | 'partially_returned' | 'returned';
export type RefundMethod = 'original_payment' | 'store_credit';

export interface Product {
  sku: string;
  name: string;
  category: string;
  description?: string;
  price: number;
  stock: number;
  /** The product this sku is a variant of (its group): variants of one group can be exchanged for each other. */
  variant_of?: string;
  /** What sets this variant apart, e.g. `{ "size": "M", "color": "blue" }`. */
  options?: Record<string, string>;
}

export interface Customer {
  id: string;
  name: string;
  email?: string;
  address?: string;
}

export interface Coupon {
  code: string;
  type: 'percent' | 'fixed';
  value: number;
  min_subtotal: number;
  expires?: string;
  usage_limit?: number;
  times_used: number;
}

export interface OrderItem {
  sku: string;
  quantity: number;
  unit_price: number;
}

export interface Order {
  id: string;
  customer_id: string;
  items: OrderItem[];
  shipping_address: string;
  coupon_code?: string;
  subtotal: number;
  discount: number;
  total: number;
  status: OrderStatus;
  date: string;
}

export interface Return {
  id: string;
  order_id: string;
  items: string[];
  reason: string;
  refund_method: RefundMethod;
  refund_amount: number;
  date: string;
}

/** An exchange of a delivered item for another variant of the same product. */
export interface Exchange {
  id: string;
  order_id: string;
  sku: string;
  new_sku: string;
  quantity: number;
  reason: string;
  date: string;
}

export interface ShopState {
  today: string;
  return_window_days: number;
  products: Product[];
  customers: Customer[];
  coupons: Coupon[];
  orders: Order[];
  returns: Return[];
  exchanges: Exchange[];
}

export const DEFAULT_TODAY = '2026-01-01';
const DEFAULT_RETURN_WINDOW_DAYS = 30;

type Raw = Partial<Omit<ShopState, 'coupons' | 'orders'>> & {
  coupons?: (Omit<Coupon, 'min_subtotal' | 'times_used'> & Partial<Pick<Coupon, 'min_subtotal' | 'times_used'>>)[];
  orders?: (Omit<Order, 'discount'> & Partial<Pick<Order, 'discount'>>)[];
};

export function normalizeState(state: unknown): ShopState {
  const raw = (state ?? {}) as Raw;
  return {
    today: raw.today ?? DEFAULT_TODAY,
    return_window_days: raw.return_window_days ?? DEFAULT_RETURN_WINDOW_DAYS,
    products: (raw.products ?? []).map((p) => ({ ...p, ...(p.options ? { options: { ...p.options } } : {}) })),
    customers: (raw.customers ?? []).map((c) => ({ ...c })),
    coupons: (raw.coupons ?? []).map((c) => ({ ...c, min_subtotal: c.min_subtotal ?? 0, times_used: c.times_used ?? 0 })),
    orders: (raw.orders ?? []).map((o) => ({ ...o, discount: o.discount ?? 0, items: o.items.map((i) => ({ ...i })) })),
    returns: (raw.returns ?? []).map((r) => ({ ...r, items: [...r.items] })),
    exchanges: (raw.exchanges ?? []).map((e) => ({ ...e })),
  };
}
