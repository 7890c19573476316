/**
 * Frame conditions: what a task says must not change. The generic state predicates (`unchanged`,
 * `stateEquals`, `matchesReference`, mcp/generic-predicates.ts) are the frame of the namespace they read; a
 * task whose reference solutions write to a namespace with no frame there lets an extra destructive write pass
 * (lint `missing-frame-condition`). Pointers are checked against the state schema (`pointerInSchema`) for
 * `pointer-resolves-to-nothing`.
 */
import type { Registry } from '../mcp/registry.ts';
import { pointerTokens } from '../json-values.ts';
import type { LeafNode } from '../predicates/tree.ts';

/** The predicates every namespace with a state gets that compare a place of the state (the frame). */
export const FRAME_PREDICATES: readonly string[] = ['unchanged', 'stateEquals', 'matchesReference'];

/** The namespaces the given calls write to (a tool that is not `readOnlyHint`; unknown tools are left out). */
export function writtenNamespaces(calls: readonly { tool: string }[], registry: Registry): Set<string> {
  const out = new Set<string>();
  for (const call of calls) {
    const tool = registry.tool(call.tool);
    if (tool && tool.declaration.annotations?.readOnlyHint !== true) out.add(call.tool.slice(0, call.tool.indexOf('.')));
  }
  return out;
}

/** The namespaces a frame predicate among `leaves` reads (the caller leaves out negated leaves). */
export function framedNamespaces(leaves: readonly LeafNode[]): Set<string> {
  return new Set(leaves.filter((leaf) => FRAME_PREDICATES.includes(leaf.predicate)).map((leaf) => leaf.namespace));
}

type Schema = Record<string, unknown>;
const asSchema = (s: unknown): Schema | undefined => (s && typeof s === 'object' && !Array.isArray(s) ? (s as Schema) : undefined);

/**
 * Whether a JSON pointer can name a value in a state the schema allows: every token a property, a key the
 * schema's pattern or additional properties admit, or an index of an array. A schema this walk does not
 * understand (`$ref`, `anyOf`...) admits anything: the rule must not report a pointer that could be right.
 */
export function pointerInSchema(schema: unknown, pointer: string): boolean {
  let current = asSchema(schema);
  for (const token of pointerTokens(pointer)) {
    if (!current) return true;
    if ('$ref' in current || 'anyOf' in current || 'oneOf' in current || 'allOf' in current) return true;
    const properties = asSchema(current.properties);
    if (properties && Object.hasOwn(properties, token)) {
      current = asSchema(properties[token]);
      continue;
    }
    if (current.type === 'array' || 'items' in current) {
      if (!/^(0|[1-9]\d*)$/.test(token)) return false;
      current = asSchema(current.items);
      continue;
    }
    const patterns = asSchema(current.patternProperties);
    const matched = patterns && Object.entries(patterns).find(([pattern]) => {
      try {
        return new RegExp(pattern, 'u').test(token);
      } catch {
        return true;
      }
    });
    if (matched) {
      current = asSchema(matched[1]);
      continue;
    }
    if (current.additionalProperties === false) return false;
    if (properties || patterns || current.type === 'object' || 'additionalProperties' in current) {
      current = asSchema(current.additionalProperties);
      continue;
    }
    return true;
  }
  return true;
}
