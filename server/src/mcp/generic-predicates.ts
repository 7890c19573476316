/**
 * Predicates every namespace with a state gets from the plug-in mechanism, with no code of its own: they read
 * the namespace's state through RFC 6901 JSON pointers, in the shape `initial_state.<ns>` is written (the
 * state schema), so they work the same on a simulation, git, Postgres or an official server's snapshot.
 *
 * - `<ns>.unchanged`: the value at `pointer` is the same at the end as at the start (what must not be touched);
 * - `<ns>.stateEquals`: the value at `pointer` equals `value`;
 * - `<ns>.matchesReference`: the values at `pointers` equal those the task's first reference solution leaves
 *   (the way tau2-bench compares database hashes), so an author states "the end state is the reference's
 *   there" without writing it out.
 */
import { deepEqual, resolvePointer } from '../json-values.ts';
import type { PredicateContext, PredicateFunction, Verdict } from './namespace.ts';
import type { PredicateDeclaration } from './server-file.ts';

const EVIDENCE_CHARS = 400;

/** A value as evidence: as it is when small, else its JSON cut short (reports and hovers stay readable). */
function shown(found: { found: boolean; value?: unknown }): unknown {
  if (!found.found) return '(absent)';
  const text = JSON.stringify(found.value) ?? 'undefined';
  return text.length <= EVIDENCE_CHARS ? found.value : `${text.slice(0, EVIDENCE_CHARS)}… (${text.length} chars of JSON)`;
}

function same(a: { found: boolean; value?: unknown }, b: { found: boolean; value?: unknown }): boolean {
  return a.found === b.found && (!a.found || deepEqual(a.value, b.value));
}

/** Thrown when the evaluation has no state to compare with: the leaf is undecided, never silently false. */
class MissingComparisonState extends Error {}

const POINTER = {
  type: 'string',
  pattern: '^(/([^~]|~[01])*)*$',
  description: 'An RFC 6901 JSON pointer into the namespace\'s state as `initial_state.<ns>` is written (`""` is the whole state; `/` separates keys, `~1` is a `/` inside a key).',
};

interface GenericPredicate {
  name: string;
  /** The declaration as a namespace file would write it, for a namespace whose state has these top-level keys. */
  declare(stateKeys: string[]): PredicateDeclaration;
  implementation: PredicateFunction<unknown>;
  /** Whether it reads the end state of the task's first reference solution (the runner produces it first). */
  needsReference: boolean;
}

const firstKeyPointer = (keys: string[]) => (keys.length ? `/${keys[0]!.replace(/~/g, '~0').replace(/\//g, '~1')}` : '');

export const GENERIC_PREDICATES: readonly GenericPredicate[] = [
  {
    name: 'unchanged',
    needsReference: false,
    declare: (keys) => ({
      name: 'unchanged',
      description:
        'True when the value at `pointer` in the end state equals the one in the initial state (absent in both counts as equal): what the agent must leave alone. Given to every namespace with a state.',
      arguments: { type: 'object', properties: { pointer: POINTER }, required: ['pointer'], additionalProperties: false },
      reads: keys.length ? keys : ['state'],
      examples: [{ pointer: firstKeyPointer(keys) }],
    }),
    implementation: (args: { pointer: string }, context: PredicateContext<unknown>): Verdict => {
      if (context.initial === undefined) throw new MissingComparisonState('no initial state to compare with');
      const end = resolvePointer(context.state, args.pointer);
      const start = resolvePointer(context.initial, args.pointer);
      return { value: same(end, start), evidence: { pointer: args.pointer, initial: shown(start), actual: shown(end) } };
    },
  },
  {
    name: 'stateEquals',
    needsReference: false,
    declare: (keys) => ({
      name: 'stateEquals',
      description:
        'True when the value at `pointer` in the end state equals `value` (JSON equality: key order does not matter, array order does). Given to every namespace with a state.',
      arguments: {
        type: 'object',
        properties: { pointer: POINTER, value: { description: 'The expected JSON value, in the form the state schema gives it.' } },
        required: ['pointer', 'value'],
        additionalProperties: false,
      },
      reads: keys.length ? keys : ['state'],
      examples: [{ pointer: firstKeyPointer(keys), value: {} }],
    }),
    implementation: (args: { pointer: string; value: unknown }, context: PredicateContext<unknown>): Verdict => {
      const end = resolvePointer(context.state, args.pointer);
      return { value: same(end, { found: true, value: args.value }), evidence: { pointer: args.pointer, expected: shown({ found: true, value: args.value }), actual: shown(end) } };
    },
  },
  {
    name: 'matchesReference',
    needsReference: true,
    declare: (keys) => ({
      name: 'matchesReference',
      description:
        "True when, at every one of `pointers`, the end state equals the end state the task's first reference solution produces (the runner replays it on a fresh sandbox to get it). Given to every namespace with a state.",
      arguments: {
        type: 'object',
        properties: { pointers: { type: 'array', items: POINTER, minItems: 1, description: 'JSON pointers (RFC 6901) where the end state must equal the reference solution\'s (`[""]`: all of it).' } },
        required: ['pointers'],
        additionalProperties: false,
      },
      reads: keys.length ? keys : ['state'],
      examples: [{ pointers: [firstKeyPointer(keys)] }],
    }),
    implementation: (args: { pointers: string[] }, context: PredicateContext<unknown>): Verdict => {
      if (context.reference === undefined) throw new MissingComparisonState("no reference end state (the task's first reference solution has not been run)");
      const differing = args.pointers
        .map((pointer) => ({ pointer, end: resolvePointer(context.state, pointer), reference: resolvePointer(context.reference, pointer) }))
        .filter((p) => !same(p.end, p.reference));
      return {
        value: differing.length === 0,
        evidence: { pointers: args.pointers, differing: differing.map((d) => ({ pointer: d.pointer, reference: shown(d.reference), actual: shown(d.end) })) },
      };
    },
  },
];
