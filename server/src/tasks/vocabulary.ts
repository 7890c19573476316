/**
 * The task format's fixed vocabulary: name patterns and enums. Plain constants, so the extension client can use
 * them without loading the zod model (model.ts builds its schemas from these).
 */
export const NAMESPACE_PATTERN = /^[a-z][a-z0-9_]*$/;
/** `<namespace>.<name>`: how tools and predicates are named in task files. */
export const QUALIFIED_NAME_PATTERN = /^[a-z][a-z0-9_]*\.[A-Za-z_][A-Za-z0-9_-]*$/;
export const TASK_ID_PATTERN = /^[a-z0-9][a-z0-9._-]*$/;

export const CATEGORIES = ['single-tool', 'composition', 'recovery'] as const;
export const DIFFICULTIES = ['easy', 'medium', 'hard'] as const;
/** Keys that combine predicates; every other key of a predicate object is a leaf `<ns>.<predicate>`. */
export const COMBINATORS = ['all', 'any', 'not'] as const;
