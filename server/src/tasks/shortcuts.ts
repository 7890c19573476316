/**
 * Shortcut agents (`mcpbench check --shortcuts`): tool-call sequences a strong agent looking for a way out
 * could try, built from the goal, the tools, the initial state and the shape of the first reference solution.
 * Each must fail; one that passes (with an end state or answer other than the reference's) is a defect of the
 * task (`shortcut-passes`), unless the task lists it in `accepted_shortcuts` with a reason. The kinds:
 * - `shotgun`: the reference's writes, then every id, number, name and status of the state as the answer;
 * - `partial-answer<k>`: the reference's answer with the k-th value the predicate looks for left out;
 * - `answer-from-goal`: the reference's writes, then the goal read back as the answer;
 * - `extra-write:<tool>`: the reference, then one more call of a tool it writes with, on the nearest other
 *   record (another file, order, ticket): the destructive extra a frame condition must catch;
 * - `wrong-target<i>`: write i on the nearest other record instead of its own;
 * - `fragment<i>`: the text write i writes cut to its first third.
 * Deterministic (no randomness: the nearest value, in a stable order) and bounded (MAX_SHORTCUTS per task).
 */
import canonicalize from 'canonicalize';
import type { Registry } from '../mcp/registry.ts';
import { leaves, parsePredicate, type LeafNode, type PredicateNode } from '../predicates/tree.ts';
import { isInformationTask, readsAnswer, shotgunGuesses } from './guesses.ts';
import type { SolutionStep, Task, ToolCall } from './model.ts';
import { byNearness, isWrite, scalars, setAt, StatePlaces } from './mutants.ts';

export const MAX_SHORTCUTS = 16;

export interface Shortcut {
  id: string;
  description: string;
  steps: SolutionStep[];
}

const isCall = (step: SolutionStep): step is ToolCall => 'tool' in step;

function negated(leaf: LeafNode): boolean {
  return leaf.path.filter((p) => p === 'not').length % 2 === 1;
}

/** The values the positive answer leaves look for, as the answer would write them. */
function requiredItems(root: PredicateNode, registry: Registry): string[] {
  const out: string[] = [];
  for (const leaf of leaves(root)) {
    if (!readsAnswer(leaf, registry) || negated(leaf)) continue;
    const args = leaf.args && typeof leaf.args === 'object' ? (leaf.args as Record<string, unknown>) : {};
    if (typeof args.text === 'string') out.push(args.text);
    if (Array.isArray(args.texts)) out.push(...args.texts.filter((t): t is string => typeof t === 'string'));
    if (typeof args.value === 'number') out.push(String(args.value));
    if (typeof args.date === 'string') out.push(args.date);
  }
  return [...new Set(out.filter((t) => t.trim()))];
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A call with its first argument that names a record moved to the nearest other record of the state. */
function retargeted(call: ToolCall, places: StatePlaces, registry: Registry): ToolCall | undefined {
  const tool = registry.tool(call.tool);
  for (const { path, value } of scalars(call.arguments ?? {})) {
    if (typeof value === 'boolean' || (typeof value === 'string' && /\s/.test(value.trim()))) continue;
    // A value the state does not hold yet (a new file) moves to the nearest record the state has.
    const siblings = places.siblings(value);
    const candidates = siblings.length || typeof value !== 'string' ? siblings : places.dataKeys().filter((k) => k !== value && !k.endsWith('/'));
    for (const other of byNearness(value, candidates)) {
      const args = setAt(call.arguments ?? {}, path, other) as Record<string, unknown>;
      if (!tool || tool.validateInput(args)) return { ...call, arguments: args };
    }
  }
  return undefined;
}

/** Every shortcut of a task, in a stable order, duplicates and the reference itself left out. */
export function deriveShortcuts(task: Task, registry: Registry): Shortcut[] {
  const reference = task.reference_solutions[0];
  if (!reference) return [];
  const root = parsePredicate(task.success_predicate, ['success_predicate']);
  const places = new StatePlaces(task, registry);
  const answerAt = reference.findIndex((step) => !isCall(step));
  const answer = answerAt >= 0 ? (reference[answerAt] as { answer: string }).answer : undefined;
  const withAnswer = (text: string): SolutionStep[] => [...reference.filter(isCall), { answer: text }];
  const out: Shortcut[] = [];

  if (isInformationTask(root, registry)) {
    const shotgun = shotgunGuesses(task)[0];
    if (shotgun) out.push({ id: 'shotgun', description: shotgun.source, steps: withAnswer(shotgun.answer) });
    out.push({ id: 'answer-from-goal', description: 'the goal read back as the answer', steps: withAnswer(task.goal) });
    if (answer !== undefined) {
      requiredItems(root, registry).forEach((item, k) => {
        const pattern = new RegExp(escapeRegExp(item), 'gi');
        if (!pattern.test(answer)) return;
        out.push({ id: `partial-answer${k + 1}`, description: `the reference answer without \`${item}\``, steps: withAnswer(answer.replace(pattern, '')) });
      });
    }
  }

  const writes = reference.map((step, i) => (isCall(step) && isWrite(step, registry) ? i : -1)).filter((i) => i >= 0);
  const lastByTool = new Map<string, number>();
  for (const i of writes) lastByTool.set((reference[i] as ToolCall).tool, i);
  for (const [tool, i] of lastByTool) {
    const extra = retargeted(reference[i] as ToolCall, places, registry);
    if (!extra) continue;
    const calls = reference.filter(isCall);
    const tail = answer !== undefined ? [{ answer }] : [];
    out.push({ id: `extra-write:${tool}`, description: `the reference, then ${tool} once more on another record`, steps: [...calls, extra, ...tail] });
  }
  for (const i of writes) {
    const call = reference[i] as ToolCall;
    const moved = retargeted(call, places, registry);
    if (moved) out.push({ id: `wrong-target${i + 1}`, description: `step ${i + 1} (${call.tool}) on the nearest other record`, steps: reference.map((s, j) => (j === i ? moved : s)) });
    const text = scalars(call.arguments ?? {}).find((s) => typeof s.value === 'string' && /\s/.test(s.value.trim()));
    if (text) {
      const value = text.value as string;
      const fragment = value.slice(0, Math.max(1, Math.floor(value.length / 3)));
      const args = setAt(call.arguments ?? {}, text.path, fragment) as Record<string, unknown>;
      if (registry.tool(call.tool)?.validateInput(args) ?? true) {
        out.push({ id: `fragment${i + 1}`, description: `step ${i + 1} (${call.tool}) writes only the first third of its text`, steps: reference.map((s, j) => (j === i ? { ...call, arguments: args } : s)) });
      }
    }
  }

  const seen = new Set([canonicalize(reference)]);
  return out.filter((s) => (seen.has(canonicalize(s.steps)) ? false : (seen.add(canonicalize(s.steps)), true))).slice(0, MAX_SHORTCUTS);
}
