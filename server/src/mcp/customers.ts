/**
 * Customer look-up, as the simulated services that keep customers (shop, support) offer it: by part of the
 * name and/or the exact e-mail address, both case-insensitive. One rule, so an agent finds a customer the same
 * way in every domain.
 */
import { ToolError } from './namespace.ts';

interface CustomerRecord {
  id: string;
  name: string;
  email?: string;
}

export function findCustomers<C extends CustomerRecord>(customers: readonly C[], args: { name?: string; email?: string }): C[] {
  const name = args.name?.trim().toLowerCase();
  const email = args.email?.trim().toLowerCase();
  if (!name && !email) throw new ToolError('Give a name or an e-mail address to look a customer up by.');
  return customers.filter((c) => (!name || c.name.toLowerCase().includes(name)) && (!email || c.email?.trim().toLowerCase() === email));
}
