/**
 * A new task's skeleton (`mcpbench new`, the editor's New Task...): the format's keys in order with the author's
 * choices filled in and `TODO:` where the task needs writing. It lints with one finding per thing left to do:
 * `todo` on each TODO, `empty-combinator` on the empty predicate.
 */
import type { Registry } from '../mcp/registry.ts';
import { qualifyAll } from '../mcp/names.ts';
import { CATEGORIES, DIFFICULTIES, TASK_ID_PATTERN } from './vocabulary.ts';
import { McpbenchError } from '../errors.ts';

export { CATEGORIES, DIFFICULTIES };

export interface SkeletonOptions {
  id: string;
  /** The task's namespaces, the first being its main one. */
  namespaces: string[];
  category: (typeof CATEGORIES)[number];
  difficulty: (typeof DIFFICULTIES)[number];
}

export class SkeletonError extends McpbenchError {
  static override readonly code: string = 'task-skeleton';
}

/** The skeleton's JSON text (two-space indented, as the dev set is). */
export function taskSkeleton(options: SkeletonOptions, registry: Registry): string {
  if (!TASK_ID_PATTERN.test(options.id)) throw new SkeletonError(`\`${options.id}\` is not a task id: lower-case letters, digits, \`.\`, \`_\` and \`-\``);
  if (options.namespaces.length === 0) throw new SkeletonError('name at least one namespace');
  for (const namespace of options.namespaces) {
    const info = registry.get(namespace);
    if (!info) throw new SkeletonError(`unknown namespace \`${namespace}\`: known are ${registry.names().join(', ')}`);
    if (info.server.implementation.kind === 'virtual') throw new SkeletonError(`\`${namespace}\` runs no server: its predicates check the final answer and any task may use them`);
  }
  if (!CATEGORIES.includes(options.category)) throw new SkeletonError(`category is one of ${CATEGORIES.join(', ')}`);
  if (!DIFFICULTIES.includes(options.difficulty)) throw new SkeletonError(`difficulty is one of ${DIFFICULTIES.join(', ')}`);
  const tools = options.namespaces.flatMap((namespace) => qualifyAll(namespace, registry.get(namespace)!.tools.keys()));
  const task = {
    id: options.id,
    server: options.namespaces.length === 1 ? options.namespaces[0] : options.namespaces,
    category: options.category,
    difficulty: options.difficulty,
    max_steps: 6,
    goal: 'TODO: what the agent must do, in a user\'s words, naming the files, ids or values the success predicate checks',
    initial_state: Object.fromEntries(options.namespaces.map((namespace) => [namespace, {}])),
    available_tools: tools,
    success_predicate: { all: [] },
    reference_solutions: [[]],
    counterexamples: [[]],
  };
  return `${JSON.stringify(task, null, 2)}\n`;
}
