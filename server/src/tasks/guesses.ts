/**
 * Answers an agent could give without the data. An information task (a predicate leaf that reads the final
 * answer) is only a test of the agent's work when its predicate rejects them:
 * - `answer-without-data` (an error, found by the linter): the predicate passes on the initial state, which is
 *   the end state when every tool call is refused, with an answer made of no data at all: nothing, the goal
 *   read back, or a refusal;
 * - `guessable-answer` (an error unless the task accepts it, found by check): the predicate passes on the reference solution's end state
 *   with a trivial guess instead of its answer: the empty answer, a number or quoted value of the goal, a
 *   small integer, a value of the initial state the predicate does not name.
 * Which leaves read the answer is data: the predicate's declaration says `reads: ["answer"]`.
 */
import type { Registry } from '../mcp/registry.ts';
import { extractNumbers } from '../mcp/answer/predicates.ts';
import { goalValues, scalarStrings } from './goal-values.ts';
import type { Task } from './model.ts';
import { evaluate, stateLeafEvaluator, type LeafEvaluator } from '../predicates/evaluate.ts';
import { leaves, parsePredicate, type LeafNode, type PredicateNode } from '../predicates/tree.ts';
import type { NodeVerdict, Truth } from '../record/schema.ts';
import type { JsonPath } from '../json-values.ts';

/** The `reads` entry of a predicate declaration that reads the agent's final answer. */
export const ANSWER_READ = 'answer';

/** The most initial-state values tried as guesses (large states are sampled in document order). */
const MAX_STATE_GUESSES = 500;
/** A state value of at most this many words that holds the checked text names the answer (a person, a title). */
const MAX_NAME_WORDS = 4;
const SMALL_INTEGERS = Array.from({ length: 11 }, (_, i) => String(i));

export function readsAnswer(leaf: LeafNode, registry: Registry): boolean {
  return registry.predicate(leaf.name)?.declaration.reads.includes(ANSWER_READ) ?? false;
}

/** Whether the task asks for information: some leaf of its predicate reads the final answer. */
export function isInformationTask(root: PredicateNode, registry: Registry): boolean {
  return leaves(root).some((leaf) => readsAnswer(leaf, registry));
}

export interface Guess {
  answer: string;
  /** Where the guess comes from, for the message: `the empty answer`, `a number of the goal` ... */
  source: string;
}

/** Answers with no data in them: nothing, the goal read back, a refusal. */
export function blindAnswers(task: Pick<Task, 'goal'>): Guess[] {
  return [
    { answer: '', source: 'an empty answer' },
    { answer: task.goal, source: 'the goal read back' },
    { answer: 'I could not get the data: every tool call was refused.', source: 'a refusal' },
  ];
}

/** Arguments of answer leaves that name text the answer must hold (not options such as a regex's `flags`). */
const OPTION_KEYS = new Set(['flags', 'case_sensitive', 'numeric_order', 'unit', 'tolerance', 'absolute_tolerance', 'max']);

/** The strings an answer leaf checks for: its arguments' strings and numbers, options left out. */
function checkedTexts(root: PredicateNode, registry?: Registry): string[] {
  const out: string[] = [];
  for (const leaf of leaves(root)) {
    if (registry && !readsAnswer(leaf, registry)) continue;
    const args = leaf.args && typeof leaf.args === 'object' && !Array.isArray(leaf.args) ? (leaf.args as Record<string, unknown>) : {};
    for (const [key, value] of Object.entries(args)) if (!OPTION_KEYS.has(key)) out.push(...scalarStrings(value));
  }
  return out.map((s) => s.trim().toLowerCase()).filter((s) => s.length > 0);
}

/** Trivial guesses, in order: empty, the goal's numbers and quoted values, small integers, unnamed state values. */
export function trivialGuesses(task: Task, root: PredicateNode, registry?: Registry): Guess[] {
  const guesses: Guess[] = [{ answer: '', source: 'the empty answer' }];
  for (const n of extractNumbers(task.goal)) guesses.push({ answer: String(n), source: 'a number of the goal' });
  for (const v of goalValues(task.goal)) guesses.push({ answer: v.text, source: `a ${v.kind === 'quoted' ? 'quoted value' : v.kind === 'file' ? 'file name' : 'id'} of the goal` });
  for (const n of SMALL_INTEGERS) guesses.push({ answer: n, source: 'a small integer' });
  // A state value that is what an answer leaf checks for is the answer found in the data, not a guess: the
  // value itself, a short name that holds it (`Lena Weber` for `Lena`, `U07LENA`), the one value that holds it,
  // or (a pattern `\bKB-72\b`) a value the argument spells out. A sentence that merely contains the checked
  // text, as others do, is a guess like any other, and an option (a regex flag `i`) names nothing.
  const named = checkedTexts(root, registry);
  const values = scalarStrings(task.initial_state);
  const lowered = values.map((v) => v.trim().toLowerCase());
  // A checked text that one state value alone holds: that value is the record the answer comes from.
  const soleHolder = new Set(named.filter((n) => lowered.filter((v) => v.includes(n)).length === 1));
  let fromState = 0;
  for (const [i, value] of values.entries()) {
    if (fromState >= MAX_STATE_GUESSES) break;
    const lower = lowered[i]!;
    const isName = lower.split(/\s+/).length <= MAX_NAME_WORDS;
    const holds = (n: string) => lower.includes(n) && (isName || soleHolder.has(n));
    if (!lower || named.some((n) => n === lower || holds(n) || (lower.length >= 2 && n.includes(lower)))) continue;
    guesses.push({ answer: value, source: 'a value of the initial state the predicate does not name' });
    fromState++;
  }
  const seen = new Set<string>();
  return guesses.filter((g) => (seen.has(g.answer) ? false : (seen.add(g.answer), true)));
}

/** The most values a shotgun answer joins, and the longest value it takes (ids, numbers, names, statuses; not prose). */
const MAX_SHOTGUN_VALUES = 2000;
const MAX_SHOTGUN_VALUE_CHARS = 60;

/** Every short scalar of a value (strings that hold JSON are read as JSON: what a tool's text result carries). */
export function shortScalars(value: unknown, out: Set<string> = new Set()): Set<string> {
  if (out.size >= MAX_SHOTGUN_VALUES) return out;
  if (typeof value === 'number') out.add(String(value));
  else if (typeof value === 'string') {
    const text = value.trim();
    if (/^[[{]/.test(text)) {
      try {
        return shortScalars(JSON.parse(text), out);
      } catch {
        // not JSON: a line of text
      }
    }
    if (text.includes('\n')) for (const line of text.split('\n')) shortScalars(line, out);
    else if (text && text.length <= MAX_SHOTGUN_VALUE_CHARS) out.add(text);
  } else if (Array.isArray(value)) for (const v of value) shortScalars(v, out);
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) (k.length <= MAX_SHOTGUN_VALUE_CHARS && out.add(k), shortScalars(v, out));
  return out;
}

/**
 * Shotgun answers: every id, number, name and status the initial state holds, joined; and every one the
 * reads of the reference solution returned (`reads`: their recorded results), joined. A predicate that
 * accepts one checks that the answer mentions the right value, not that it gives it.
 */
export function shotgunGuesses(task: Task, reads: readonly unknown[] = []): Guess[] {
  const guesses: Guess[] = [];
  const state = [...shortScalars(task.initial_state)];
  if (state.length > 1) guesses.push({ answer: state.join('\n'), source: `a shotgun of the ${state.length} ids, numbers, names and statuses of the initial state` });
  const fromReads = [...shortScalars(reads as unknown[])];
  if (fromReads.length > 1) guesses.push({ answer: fromReads.join('\n'), source: `a shotgun of the ${fromReads.length} values the reads returned` });
  return guesses;
}

/**
 * The leaf evaluator of a recorded verdict, with the answer swapped: leaves that read the answer are
 * evaluated again on `answer`, every other leaf keeps the value it had (the end state is the same).
 */
function withAnswer(registry: Registry, verdict: NodeVerdict, answer: string): LeafEvaluator {
  const recorded = new Map<string, NodeVerdict>();
  const collect = (node: NodeVerdict) => {
    recorded.set(JSON.stringify(node.path), node);
    for (const child of node.children ?? []) collect(child);
  };
  collect(verdict);
  const fresh = stateLeafEvaluator(registry, {}, answer);
  return (leaf) => {
    if (readsAnswer(leaf, registry)) return fresh(leaf);
    const before = recorded.get(JSON.stringify(leaf.path));
    return { value: before?.value as Truth };
  };
}

/** The guesses on which the predicate still passes, given the verdict of a passing reference solution. */
export function passingGuesses(task: Task, registry: Registry, verdict: NodeVerdict, options: { shotgun?: boolean; reads?: readonly unknown[] } = {}): Guess[] {
  const root = parsePredicate(task.success_predicate, ['success_predicate']);
  if (!isInformationTask(root, registry)) return [];
  const guesses = trivialGuesses(task, root, registry);
  if (options.shotgun) guesses.push(...shotgunGuesses(task, options.reads));
  return guesses.filter((guess) => evaluate(root, withAnswer(registry, verdict, guess.answer)).value === true);
}

/** The no-data answers on which the predicate passes on the initial state (every call refused). */
export function passingBlindAnswers(task: Pick<Task, 'goal' | 'initial_state'>, registry: Registry, root: PredicateNode): Guess[] {
  if (!isInformationTask(root, registry)) return [];
  const states = task.initial_state;
  return blindAnswers(task).filter((blind) => evaluate(root, stateLeafEvaluator(registry, states, blind.answer, { initial: states })).value === true);
}

/** The path of the first leaf that reads the answer (where findings about the answer point). */
export function firstAnswerLeaf(root: PredicateNode, registry: Registry): JsonPath | undefined {
  const leaf = leaves(root).find((l) => readsAnswer(l, registry));
  return leaf ? [...leaf.path, leaf.name] : undefined;
}
