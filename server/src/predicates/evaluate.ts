/**
 * Evaluation of a predicate tree in three-valued (Kleene) logic: a leaf that cannot be decided (unknown
 * predicate, invalid arguments or state, a namespace without code) is `undefined`, and `all`/`any`/`not`
 * still decide whatever the decided leaves settle. Every node keeps its value and its evidence, for the
 * verdict trees reports and the editor show.
 */
import type { Registry } from '../mcp/registry.ts';
import type { PredicateNode } from './tree.ts';
import type { Truth, NodeVerdict } from '../record/schema.ts';
export type LeafEvaluator = (leaf: Extract<PredicateNode, { kind: 'leaf' }>) => { value: Truth; evidence?: unknown; undecided?: string };

export function evaluate(node: PredicateNode, evaluateLeaf: LeafEvaluator): NodeVerdict {
  switch (node.kind) {
    case 'leaf': {
      const result = evaluateLeaf(node);
      return { path: node.path, kind: 'leaf', name: node.name, ...result };
    }
    case 'not': {
      const child = evaluate(node.child, evaluateLeaf);
      return { path: node.path, kind: 'not', value: child.value === undefined ? undefined : !child.value, children: [child] };
    }
    case 'all': {
      const children = node.children.map((c) => evaluate(c, evaluateLeaf));
      const value = children.some((c) => c.value === false) ? false : children.every((c) => c.value === true) ? true : undefined;
      return { path: node.path, kind: 'all', value, children };
    }
    case 'any': {
      const children = node.children.map((c) => evaluate(c, evaluateLeaf));
      const value = children.some((c) => c.value === true) ? true : children.every((c) => c.value === false) ? false : undefined;
      return { path: node.path, kind: 'any', value, children };
    }
    default:
      return { path: node.path, kind: 'invalid', value: undefined, undecided: 'invalid predicate' };
  }
}

/** States keyed by namespace (the initial state, a snapshot, a reference end state: all of one shape). */
export type NamespaceStates = Record<string, unknown>;

/** What generic predicates compare the end state with: the initial state, the first reference solution's end state. */
export interface ComparisonStates {
  initial?: NamespaceStates;
  reference?: NamespaceStates;
}

/**
 * A leaf evaluator over namespace states (initial state or snapshot, same shape) and the final answer.
 * States are validated against their schema once; an invalid state leaves its leaves undecided.
 */
export function stateLeafEvaluator(registry: Registry, states: NamespaceStates, answer: string | undefined, compare: ComparisonStates = {}): LeafEvaluator {
  const readers = new Map<NamespaceStates, Map<string, { state?: unknown; undecided?: string }>>();
  /** A namespace's state out of `source`, validated and normalised once. */
  const stateOf = (source: NamespaceStates, namespace: string) => {
    let normalized = readers.get(source);
    if (!normalized) readers.set(source, (normalized = new Map()));
    let entry = normalized.get(namespace);
    if (!entry) {
      const info = registry.get(namespace)!;
      const raw = source[namespace];
      if (raw !== undefined && !info.validateState(raw)) entry = { undecided: `the ${namespace} state fails its schema` };
      else {
        try {
          entry = { state: info.plugin!.normalizeState(raw) };
        } catch (error) {
          entry = { undecided: `cannot read the ${namespace} state: ${(error as Error).message}` };
        }
      }
      normalized.set(namespace, entry);
    }
    return entry;
  };
  return (leaf) => {
    const info = registry.get(leaf.namespace);
    const predicate = info?.predicates.get(leaf.predicate);
    if (!info || !predicate) return { value: undefined, undecided: `unknown predicate ${leaf.name}` };
    if (!info.plugin || !predicate.implementation) return { value: undefined, undecided: `namespace ${leaf.namespace} has no predicate code` };
    if (!predicate.validateArguments(leaf.args)) return { value: undefined, undecided: 'invalid arguments' };
    const { state, undecided } = stateOf(states, leaf.namespace);
    if (undecided) return { value: undefined, undecided };
    const initial = compare.initial && stateOf(compare.initial, leaf.namespace);
    const reference = compare.reference && stateOf(compare.reference, leaf.namespace);
    try {
      const verdict = predicate.implementation(leaf.args, {
        state,
        answer,
        ...(initial?.state !== undefined ? { initial: initial.state } : {}),
        ...(reference?.state !== undefined ? { reference: reference.state } : {}),
      });
      return { value: verdict.value, evidence: verdict.evidence };
    } catch (error) {
      return { value: undefined, undecided: `${leaf.name} failed: ${(error as Error).message}` };
    }
  };
}
