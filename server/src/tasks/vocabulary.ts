/**
 * The task format's fixed vocabulary: name patterns and enums. Plain constants, so the extension client can use
 * them without loading the zod model (model.ts builds its schemas from these).
 */
export const TASK_ID_PATTERN = /^[a-z0-9][a-z0-9._-]*$/;

export const CATEGORIES = ['single-tool', 'composition', 'recovery'] as const;
export const DIFFICULTIES = ['easy', 'medium', 'hard'] as const;
/** Keys that combine predicates; every other key of a predicate object is a leaf `<ns>.<predicate>`. */
export const COMBINATORS = ['all', 'any', 'not'] as const;

/**
 * The namespaces a task names in `server` (one, or several for a cross-server task), in order: the one
 * reading of `server: string | string[]`. Takes unchecked JSON too (the linter's input): what is not a
 * string is skipped.
 */
export function taskNamespaces(task: { server?: unknown }): string[] {
  const server = task.server;
  if (typeof server === 'string') return [server];
  return Array.isArray(server) ? server.filter((s): s is string => typeof s === 'string') : [];
}

