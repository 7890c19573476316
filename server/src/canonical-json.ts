import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { McpbenchError } from './errors.ts';

/**
 * The canonical hash of a task: SHA-256 (hex) of its RFC 8785 (JCS) canonical JSON, so key order and
 * whitespace never change it. Rotation attestations and `mcpbench verify` rely on exactly this.
 */
export function canonicalHash(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value), 'utf8').digest('hex');
}

/** A value RFC 8785 has no form for: undefined, or a number out of double range (`1e999` parses to Infinity). */
export class CanonicalizeError extends McpbenchError {
  static override readonly code: string = 'canonical-json';
}

export function canonicalJson(value: unknown): string {
  let canonical: string | undefined;
  try {
    canonical = canonicalize(value);
  } catch (error) {
    throw new CanonicalizeError(`cannot canonicalise: ${(error as Error).message} (RFC 8785 JSON has no form for numbers out of range, such as 1e999)`);
  }
  if (canonical === undefined) throw new CanonicalizeError('cannot canonicalise this value (undefined)');
  return canonical;
}
