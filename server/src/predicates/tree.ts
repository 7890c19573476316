/**
 * The predicate tree of a task, parsed from its JSON value with the path of every node, and the structural
 * problems found on the way. Independent of documents and ranges: callers place problems by path.
 */
import type { JsonPath } from '../json-values.ts';
import { QUALIFIED_NAME_PATTERN, splitQualified } from '../mcp/names.ts';

export type PredicateNode =
  | { kind: 'all' | 'any'; path: JsonPath; children: PredicateNode[] }
  | { kind: 'not'; path: JsonPath; child: PredicateNode }
  | { kind: 'leaf'; path: JsonPath; name: string; namespace: string; predicate: string; args: unknown }
  | { kind: 'invalid'; path: JsonPath };

export type LeafNode = Extract<PredicateNode, { kind: 'leaf' }>;

export interface StructureProblem {
  path: JsonPath;
  /** `key`: the problem is the property name at `path`; `value`: the value at `path`. */
  target: 'key' | 'value';
  code: 'invalid-predicate' | 'empty-combinator';
  message: string;
}

export function parsePredicate(value: unknown, path: JsonPath, problems: StructureProblem[] = []): PredicateNode {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    problems.push({ path, target: 'value', code: 'invalid-predicate', message: 'a predicate must be an object: `{ "all": [..] }`, `{ "any": [..] }`, `{ "not": p }` or `{ "<ns>.<predicate>": {..} }`' });
    return { kind: 'invalid', path };
  }
  const keys = Object.keys(value);
  if (keys.length !== 1) {
    const message = keys.length === 0
      ? 'empty predicate object: write `{ "<ns>.<predicate>": { ...arguments } }` or a combinator'
      : `a predicate object has exactly one key, found ${keys.length} (${keys.map((k) => `\`${k}\``).join(', ')}): wrap several checks in \`{ "all": [..] }\``;
    problems.push({ path, target: 'value', code: 'invalid-predicate', message });
    return { kind: 'invalid', path };
  }
  const key = keys[0]!;
  const inner = (value as Record<string, unknown>)[key];
  const innerPath = [...path, key];
  if (key === 'all' || key === 'any') {
    if (!Array.isArray(inner)) {
      problems.push({ path: innerPath, target: 'value', code: 'invalid-predicate', message: `\`${key}\` takes an array of predicates` });
      return { kind: 'invalid', path };
    }
    if (inner.length === 0) {
      problems.push({ path: innerPath, target: 'value', code: 'empty-combinator', message: key === 'all'
        ? 'empty `all` is vacuously true: every agent passes. Add the checks, or remove it'
        : 'empty `any` is always false: no agent can pass. Add one branch per solution path' });
    }
    return { kind: key, path, children: inner.map((child, i) => parsePredicate(child, [...innerPath, i], problems)) };
  }
  if (key === 'not') return { kind: 'not', path, child: parsePredicate(inner, innerPath, problems) };
  if (!QUALIFIED_NAME_PATTERN.test(key)) {
    problems.push({ path: innerPath, target: 'key', code: 'invalid-predicate', message: `\`${key}\` is neither \`all\`, \`any\`, \`not\` nor a predicate \`<namespace>.<predicate>\`` });
    return { kind: 'invalid', path };
  }
  if (typeof inner !== 'object' || inner === null || Array.isArray(inner)) {
    problems.push({ path: innerPath, target: 'value', code: 'invalid-predicate', message: `the arguments of \`${key}\` must be an object (use \`{}\` for none)` });
  }
  const [namespace, predicate = ''] = splitQualified(key);
  return { kind: 'leaf', path, name: key, namespace, predicate, args: inner };
}

export function leaves(node: PredicateNode): LeafNode[] {
  switch (node.kind) {
    case 'leaf': return [node];
    case 'not': return leaves(node.child);
    case 'all': case 'any': return node.children.flatMap(leaves);
    default: return [];
  }
}

export function* walk(node: PredicateNode): Generator<PredicateNode> {
  yield node;
  if (node.kind === 'not') yield* walk(node.child);
  if (node.kind === 'all' || node.kind === 'any') for (const child of node.children) yield* walk(child);
}
