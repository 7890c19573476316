/**
 * How namespaces and the tools and predicates in them are named: a task names a tool or predicate as
 * `<namespace>.<name>` (`filesystem.move_file`, `filesystem.fileExists`), and the agent sees a tool as
 * `<namespace>_<name>`. The patterns, how such a name splits, and which namespaces a list of names touches are
 * decided here and nowhere else. Plain constants and functions, so the extension client can use them without
 * loading the zod model.
 */
/** A namespace: the name of one file in schemas/servers/. */
export const NAMESPACE_PATTERN = /^[a-z][a-z0-9_]*$/;

/** `<namespace>.<name>`: how tools and predicates are named in task files. */
export const QUALIFIED_NAME_PATTERN = /^[a-z][a-z0-9_]*\.[A-Za-z_][A-Za-z0-9_-]*$/;

/**
 * `filesystem.move_file` → `['filesystem', 'move_file']`, split at the first dot (a name may hold more dots);
 * a name without a dot is a namespace alone: `[name, undefined]`.
 */
export function splitQualified(qualified: string): [namespace: string, name: string | undefined] {
  const dot = qualified.indexOf('.');
  return dot < 0 ? [qualified, undefined] : [qualified.slice(0, dot), qualified.slice(dot + 1)];
}

/** The namespace of a qualified name: `filesystem` for `filesystem.move_file` (a name without a dot is all namespace). */
export function namespaceOf(qualified: string): string {
  return splitQualified(qualified)[0];
}

/** The namespaces of qualified names (a task's `available_tools`, predicate keys), each once, in order of first use. */
export function namespacesOf(qualified: Iterable<string>): string[] {
  return [...new Set(Array.from(qualified, namespaceOf))];
}

/** Bare names of one namespace as qualified names: `('git', ['git_status'])` → `['git.git_status']`. */
export function qualifyAll(namespace: string, names: Iterable<string>): string[] {
  return Array.from(names, (name) => `${namespace}.${name}`);
}

/** The name the agent sees for a qualified tool name: `filesystem_move_file`, a name every model API accepts. */
export function exposedName(qualified: string): string {
  return qualified.replace('.', '_');
}
