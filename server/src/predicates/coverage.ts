/**
 * Predicate coverage: which leaves and which `any` branches of a task's predicate were witnessed true by a
 * passing run. An `any` branch no passing solution ever took is a solution path the task claims to admit
 * but nobody has shown to work; a leaf never true is a check nobody has seen pass.
 */
import { walk, type PredicateNode } from './tree.ts';
import type { NodeVerdict } from '../record/schema.ts';
import type { JsonPath } from '../json-values.ts';

export interface CoverageItem {
  path: JsonPath;
  kind: 'leaf' | 'branch';
  /** The leaf's `<ns>.<predicate>`, or for a branch the index within its `any`. */
  label: string;
  witnessed: boolean;
}

export interface Coverage {
  /** `any` branches witnessed / all `any` branches; a predicate without `any` is one path. */
  paths: { covered: number; total: number };
  leaves: { covered: number; total: number };
  items: CoverageItem[];
}

const key = (path: JsonPath) => JSON.stringify(path);

function collectTrue(verdict: NodeVerdict, into: Set<string>): void {
  if (verdict.value === true) into.add(key(verdict.path));
  for (const child of verdict.children ?? []) collectTrue(child, into);
}

/**
 * Coverage of `predicate` by the verdict trees of passing episodes. A node counts as witnessed when it was
 * true in a passing episode (a leaf under `not` is witnessed when it was false there, i.e. its `not` held).
 */
export function predicateCoverage(predicate: PredicateNode, passingVerdicts: NodeVerdict[]): Coverage {
  const truePaths = new Set<string>();
  for (const verdict of passingVerdicts) collectTrue(verdict, truePaths);
  const items: CoverageItem[] = [];
  const visit = (node: PredicateNode, negatedParent: PredicateNode | undefined) => {
    if (node.kind === 'leaf') {
      const witness = negatedParent ?? node;
      items.push({ path: node.path, kind: 'leaf', label: node.name, witnessed: truePaths.has(key(witness.path)) });
    }
    if (node.kind === 'any') {
      node.children.forEach((child, i) => items.push({ path: child.path, kind: 'branch', label: `any[${i}]`, witnessed: truePaths.has(key(child.path)) }));
    }
  };
  for (const node of walk(predicate)) visit(node, node.kind === 'leaf' ? parentNot(predicate, node) : undefined);
  const branches = items.filter((i) => i.kind === 'branch');
  const leaves = items.filter((i) => i.kind === 'leaf');
  const rootWitnessed = truePaths.has(key(predicate.path));
  return {
    paths: branches.length
      ? { covered: branches.filter((b) => b.witnessed).length, total: branches.length }
      : { covered: rootWitnessed ? 1 : 0, total: 1 },
    leaves: { covered: leaves.filter((l) => l.witnessed).length, total: leaves.length },
    items,
  };
}

/** The `not` directly above `leaf`, if any. */
function parentNot(root: PredicateNode, leaf: PredicateNode): PredicateNode | undefined {
  for (const node of walk(root)) if (node.kind === 'not' && node.child === leaf) return node;
  return undefined;
}
