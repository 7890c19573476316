import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

/**
 * The canonical hash of a task: SHA-256 (hex) of its RFC 8785 (JCS) canonical JSON, so key order and
 * whitespace never change it. Rotation attestations and `mcpbench verify` rely on exactly this.
 */
export function canonicalHash(value: unknown): string {
  const canonical = canonicalize(value);
  if (canonical === undefined) throw new Error('cannot canonicalise this value (undefined)');
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}

export function canonicalJson(value: unknown): string {
  const canonical = canonicalize(value);
  if (canonical === undefined) throw new Error('cannot canonicalise this value (undefined)');
  return canonical;
}
