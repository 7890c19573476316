/**
 * Answers an agent could give without the data. An information task (a predicate leaf that reads the final
 * answer) is only a test of the agent's work when its predicate rejects them:
 * - `answer-without-data` (an error, found by the linter): the predicate passes on the initial state, which is
 *   the end state when every tool call is refused, with an answer made of no data at all: nothing, the goal
 *   read back, or a refusal;
 * - `guessable-answer` (a warning, found by check): the predicate passes on the reference solution's end state
 *   with a trivial guess instead of its answer: the empty answer, a number or quoted value of the goal, a
 *   small integer, a value of the initial state the predicate does not name.
 * Which leaves read the answer is data: the predicate's declaration says `reads: ["answer"]`.
 */
import type { Registry } from '../mcp/registry.ts';
import { extractNumbers } from '../mcp/answer/predicates.ts';
import type { JsonPath } from '../tasks/document.ts';
import { goalValues, scalarStrings } from '../tasks/goal-values.ts';
import type { Task } from '../tasks/model.ts';
import { evaluate, stateLeafEvaluator, type LeafEvaluator, type NodeVerdict, type Truth } from './evaluate.ts';
import { leaves, parsePredicate, type LeafNode, type PredicateNode } from './tree.ts';

/** The `reads` entry of a predicate declaration that reads the agent's final answer. */
export const ANSWER_READ = 'answer';

/** The most initial-state values tried as guesses (large states are sampled in document order). */
const MAX_STATE_GUESSES = 500;
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

/** Trivial guesses, in order: empty, the goal's numbers and quoted values, small integers, unnamed state values. */
export function trivialGuesses(task: Task, root: PredicateNode): Guess[] {
  const guesses: Guess[] = [{ answer: '', source: 'the empty answer' }];
  for (const n of extractNumbers(task.goal)) guesses.push({ answer: String(n), source: 'a number of the goal' });
  for (const v of goalValues(task.goal)) guesses.push({ answer: v.text, source: `a ${v.kind === 'quoted' ? 'quoted value' : v.kind === 'file' ? 'file name' : 'id'} of the goal` });
  for (const n of SMALL_INTEGERS) guesses.push({ answer: n, source: 'a small integer' });
  // A state value the predicate names (or one that contains such a value) is the answer found in the data.
  const named = leaves(root).flatMap((leaf) => scalarStrings(leaf.args)).map((s) => s.toLowerCase()).filter((s) => s.length > 0);
  let fromState = 0;
  for (const value of scalarStrings(task.initial_state)) {
    if (fromState >= MAX_STATE_GUESSES) break;
    const lower = value.toLowerCase();
    // Named either way round: a predicate argument inside the value, or the value inside an argument (a pattern `\bKB-72\b`).
    if (!value.trim() || named.some((n) => lower.includes(n) || (lower.length >= 2 && n.includes(lower)))) continue;
    guesses.push({ answer: value, source: 'a value of the initial state the predicate does not name' });
    fromState++;
  }
  const seen = new Set<string>();
  return guesses.filter((g) => (seen.has(g.answer) ? false : (seen.add(g.answer), true)));
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
export function passingGuesses(task: Task, registry: Registry, verdict: NodeVerdict): Guess[] {
  const root = parsePredicate(task.success_predicate, ['success_predicate']);
  if (!isInformationTask(root, registry)) return [];
  return trivialGuesses(task, root).filter((guess) => evaluate(root, withAnswer(registry, verdict, guess.answer)).value === true);
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
