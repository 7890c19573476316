/**
 * Where a position sits in a task file, in the task format's own terms (a predicate node, a leaf's
 * arguments, a solution step, ...), and the small JSON Schema helpers completion, hover and code actions
 * share. Plain data in, plain data out: no connection, no editor.
 */
import { findNodeAtOffset, getNodePath, type Node } from 'jsonc-parser';
import type { Range } from 'vscode-languageserver';
import type { JsonDocument } from '../tasks/document.ts';
import { isObject } from '../tasks/schema-check.ts';
import type { Registry } from '../mcp/registry.ts';
import type { JsonPath } from '../json-values.ts';
import { taskNamespaces } from '../tasks/vocabulary.ts';

export type SolutionKey = 'reference_solutions' | 'counterexamples';

/** What the JSON value at a path is, for the task format. */
export type PathContext =
  /** The task object itself (`[]`) or a plain top-level property and what is below it. */
  | { kind: 'task'; path: JsonPath }
  /** A position that holds a predicate: `success_predicate`, an item of `all`/`any`, the value of `not`. */
  | { kind: 'predicate'; path: JsonPath }
  /** The array of an `all` or `any`. */
  | { kind: 'combinator'; path: JsonPath; operator: 'all' | 'any' }
  /** Inside a leaf's arguments: `rest` is the path below the arguments object (`[]`: the object itself). */
  | { kind: 'leaf'; leafPath: JsonPath; name: string; rest: JsonPath }
  /** A solution step (`rest` `[]`) or something inside it (`['tool']`, `['arguments', 'path']`). */
  | { kind: 'step'; section: SolutionKey; stepPath: JsonPath; rest: JsonPath };

export function classifyPath(path: JsonPath): PathContext {
  const [head] = path;
  if (head === 'success_predicate') return classifyPredicatePath(path);
  if ((head === 'reference_solutions' || head === 'counterexamples') && path.length >= 3 && typeof path[1] === 'number' && typeof path[2] === 'number') {
    return { kind: 'step', section: head, stepPath: path.slice(0, 3), rest: path.slice(3) };
  }
  return { kind: 'task', path };
}

function classifyPredicatePath(path: JsonPath): PathContext {
  let i = 1; // path[0] is `success_predicate`: a predicate position
  for (;;) {
    if (i >= path.length) return { kind: 'predicate', path };
    const key = path[i];
    if (key === 'all' || key === 'any') {
      if (i + 1 >= path.length) return { kind: 'combinator', path, operator: key };
      if (typeof path[i + 1] !== 'number') return { kind: 'task', path }; // not the format's shape
      i += 2;
    } else if (key === 'not') {
      i += 1;
    } else if (typeof key === 'string') {
      return { kind: 'leaf', leafPath: path.slice(0, i), name: key, rest: path.slice(i + 1) };
    } else {
      return { kind: 'task', path };
    }
  }
}

/** The document's top-level object (best effort while it has syntax errors: a file being typed is rarely valid JSON). */
export function objectOf(document: JsonDocument): Record<string, unknown> {
  const value = document.value();
  return isObject(value) ? value : {};
}

/** The string node at `offset` (a key or a value), with its path, or undefined. */
export function stringNodeAt(document: JsonDocument, offset: number): { node: Node; path: JsonPath; isKey: boolean } | undefined {
  const root = document.root;
  const node = root ? findNodeAtOffset(root, offset, true) : undefined;
  if (!node || node.type !== 'string') return undefined;
  const isKey = node.parent?.type === 'property' && node.parent.children?.[0] === node;
  return { node, path: getNodePath(node), isKey };
}

/** A node's range as LSP positions. */
export function rangeOf(document: JsonDocument, node: { offset: number; length: number }): Range {
  return { start: document.positionAt(node.offset), end: document.positionAt(node.offset + node.length) };
}

/** The value at `path` of a plain JSON value. */
export function valueAt(value: unknown, path: JsonPath): unknown {
  let current = value;
  for (const segment of path) {
    if (typeof segment === 'number' ? !Array.isArray(current) : !isObject(current)) return undefined;
    current = (current as Record<string | number, unknown>)[segment];
  }
  return current;
}

export { taskNamespaces };

/** The namespaces whose predicates fit the task: its own (known ones) plus the virtual ones (`answer`); all when it names none. */
export function predicateNamespaces(task: Record<string, unknown>, registry: Registry): string[] {
  const own = taskNamespaces(task).filter((n) => registry.get(n));
  if (own.length === 0) return registry.names();
  return [...new Set([...own, ...registry.virtualNamespaces()])];
}

export function stringItems(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

// ---- JSON Schema helpers (argument and input schemas are plain JSON Schema objects)

export type Schema = Record<string, unknown>;

export function schemaProperties(schema: unknown): [string, Schema][] {
  if (!isObject(schema) || !isObject(schema.properties)) return [];
  return Object.entries(schema.properties).map(([k, v]) => [k, isObject(v) ? v : {}]);
}

export function requiredKeys(schema: unknown): string[] {
  return isObject(schema) ? stringItems(schema.required) : [];
}

/** The first type a schema allows (`anyOf`/`oneOf` branches included), for placeholders and hover. */
export function schemaType(schema: Schema): string | undefined {
  if (typeof schema.type === 'string') return schema.type;
  if (Array.isArray(schema.type)) return schema.type.find((t) => t !== 'null') ?? schema.type[0];
  if (Array.isArray(schema.enum) && schema.enum.length) return jsonType(schema.enum[0]);
  if ('const' in schema) return jsonType(schema.const);
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = schema[key];
    if (Array.isArray(branches)) for (const b of branches) if (isObject(b) && schemaType(b)) return schemaType(b);
  }
  return undefined;
}

/** A short type label for documentation: `string`, `"file" | "directory"`, `string[]`. */
export function describeType(schema: Schema): string {
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join(' | ');
  if ('const' in schema) return JSON.stringify(schema.const);
  const type = schemaType(schema);
  if (type === 'array' && isObject(schema.items)) return `${describeType(schema.items)}[]`;
  return type ?? 'any';
}

export function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (Number.isInteger(value)) return 'integer';
  return typeof value;
}

export function enumValues(schema: Schema): unknown[] {
  if (Array.isArray(schema.enum)) return schema.enum;
  if ('const' in schema) return [schema.const];
  const out: unknown[] = [];
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = schema[key];
    if (Array.isArray(branches)) for (const b of branches) if (isObject(b)) out.push(...enumValues(b));
  }
  if (out.length === 0 && schemaType(schema) === 'boolean') return [true, false];
  return out;
}

/** A value of the right type to stand in for a missing argument (not valid necessarily: the author fills it). */
export function placeholderValue(schema: Schema): unknown {
  if ('default' in schema) return schema.default;
  const choices = enumValues(schema);
  if (choices.length && schemaType(schema) !== 'boolean') return choices[0];
  switch (schemaType(schema)) {
    case 'string': return '';
    case 'integer': case 'number': return typeof schema.minimum === 'number' ? schema.minimum : 0;
    case 'boolean': return false;
    case 'array': return [];
    case 'object': return {};
    default: return null;
  }
}

// ---- snippets (LSP snippet syntax)

export function escapeSnippet(text: string): string {
  return text.replace(/[\\$}]/g, (c) => `\\${c}`);
}

function escapeChoice(text: string): string {
  return text.replace(/[\\$}|,]/g, (c) => `\\${c}`);
}

/** The JSON-escaped body of a string (no quotes). */
function stringBody(value: string): string {
  return JSON.stringify(value).slice(1, -1);
}

/**
 * A snippet for one value: the example value as the placeholder's text when there is one, a choice for
 * enums, an empty placeholder of the right shape otherwise.
 */
export function valueSnippet(schema: Schema, tabstop: number, example?: unknown): string {
  if (example !== undefined) {
    if (typeof example === 'string') return `"\${${tabstop}:${escapeSnippet(stringBody(example))}}"`;
    return `\${${tabstop}:${escapeSnippet(JSON.stringify(example))}}`;
  }
  const choices = enumValues(schema);
  if (choices.length > 1 && choices.every((c) => typeof c === 'string')) {
    return `"\${${tabstop}|${choices.map((c) => escapeChoice(stringBody(c as string))).join(',')}|}"`;
  }
  if (choices.length > 1) return `\${${tabstop}|${choices.map((c) => escapeChoice(JSON.stringify(c))).join(',')}|}`;
  if (choices.length === 1) return `\${${tabstop}:${escapeSnippet(JSON.stringify(choices[0]))}}`;
  switch (schemaType(schema)) {
    case 'string': return `"$${tabstop}"`;
    case 'integer': case 'number': return `\${${tabstop}:${typeof schema.minimum === 'number' ? schema.minimum : 0}}`;
    case 'array': return `[$${tabstop}]`;
    case 'object': return `{$${tabstop}}`;
    default: return `$${tabstop}`;
  }
}

/**
 * `{ "path": "${1:archive/report.txt}" }`: the required arguments of a schema as placeholders, seeded from
 * an example argument object where it has the key.
 */
export function argumentsSnippet(schema: unknown, example: unknown, firstTabstop = 1): string {
  const seed = isObject(example) ? example : {};
  const required = requiredKeys(schema);
  const properties = new Map(schemaProperties(schema));
  if (required.length === 0) return `{$${firstTabstop}}`;
  const parts = required.map((key, i) => `"${stringBody(key)}": ${valueSnippet(properties.get(key) ?? {}, firstTabstop + i, seed[key])}`);
  return `{ ${parts.join(', ')} }`;
}
