/**
 * Plain JSON values as the engine compares and addresses them: structural equality (key order does not
 * matter) and RFC 6901 JSON pointers. Predicates over any namespace's state use these, so "equal" means the
 * same thing everywhere.
 */

/** Structural equality of JSON values; object key order does not matter, array order does. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && deepEqual((a as never)[k], (b as never)[k]));
}

/** The reference tokens of an RFC 6901 pointer (`/a~1b/0` → `a/b`, `0`); `''` is the whole document. */
export function pointerTokens(pointer: string): string[] {
  return pointer === '' ? [] : pointer.slice(1).split('/').map((raw) => raw.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** The value at an RFC 6901 pointer; `found: false` when it does not resolve. */
export function resolvePointer(doc: unknown, pointer: string): { found: boolean; value?: unknown } {
  let current: unknown = doc;
  for (const token of pointerTokens(pointer)) {
    if (Array.isArray(current)) {
      if (!/^(0|[1-9][0-9]*)$/.test(token) || Number(token) >= current.length) return { found: false };
      current = current[Number(token)];
    } else if (current !== null && typeof current === 'object' && Object.hasOwn(current, token)) {
      current = (current as Record<string, unknown>)[token];
    } else {
      return { found: false };
    }
  }
  return { found: true, value: current };
}

export type JsonPath = (string | number)[];

