/**
 * Completion in a task file from where the cursor is (jsonc-parser's `getLocation`): keys of the task format
 * not yet present, namespaces, predicates of the task's namespaces as snippets with their required
 * arguments, qualified tool names, a tool call's argument keys, and enum values.
 */
import { getLocation, type Node } from 'jsonc-parser';
import { CompletionItemKind, InsertTextFormat, MarkupKind, type CompletionItem, type Range } from 'vscode-languageserver';
import type { Registry } from '../mcp/registry.ts';
import type { JsonDocument } from '../tasks/document.ts';
import { isObject } from '../tasks/schema-check.ts';
import { argumentMarkdown, keyMarkdown, predicateMarkdown, toolMarkdown } from './docs.ts';
import {
  argumentsSnippet,
  classifyPath,
  describeType,
  enumValues,
  predicateNamespaces,
  objectOf,
  requiredKeys,
  schemaProperties,
  stringItems,
  taskNamespaces,
  valueAt,
  valueSnippet,
} from './json-context.ts';
import { definition, formatKey, formatKeys, type FormatObject, type KeyInfo } from './task-format.ts';

const TRIGGER_SUGGEST = { title: 'Suggest', command: 'editor.action.triggerSuggest' };

interface Site {
  text: string;
  task: Record<string, unknown>;
  registry: Registry;
  range: Range;
  /** A `,` to append when the insertion is followed by another property or item. */
  separator: string;
}

export function completionsAt(document: JsonDocument, offset: number, registry: Registry): CompletionItem[] {
  const { text } = document;
  // Where the cursor is in the text as typed (a key being written is no node of the tree yet): a scan up to it.
  const location = getLocation(text, offset);
  const replaced = replacedNode(location.previousNode, offset);
  const start = replaced ? replaced.offset : offset;
  const end = replaced ? replaced.offset + replaced.length : offset;
  const after = text.slice(end).match(/^\s*(\S)/)?.[1];
  const site: Site = {
    text,
    task: objectOf(document),
    registry,
    range: { start: document.positionAt(start), end: document.positionAt(end) },
    separator: after === '"' || after === '{' || after === '[' ? ',' : '',
  };
  const path = location.path;
  if (location.isAtPropertyKey) {
    const objectPath = path.slice(0, -1);
    const current = replaced && typeof replaced.value === 'string' ? replaced.value : undefined;
    const present = Object.keys(valueAtOrEmpty(site.task, objectPath)).filter((k) => k !== current);
    return keyCompletions(site, objectPath, new Set(present));
  }
  return valueCompletions(site, path);
}

/** The string, number or key token the cursor is in, which a completion replaces whole. */
function replacedNode(node: Node | undefined, offset: number): Node | undefined {
  if (!node || offset <= node.offset || offset > node.offset + node.length) return undefined;
  return node.type === 'object' || node.type === 'array' ? undefined : node;
}

function valueAtOrEmpty(task: Record<string, unknown>, path: (string | number)[]): Record<string, unknown> {
  const value = path.length ? valueAt(task, path) : task;
  return isObject(value) ? value : {};
}

// ---- keys

function keyCompletions(site: Site, objectPath: (string | number)[], present: Set<string>): CompletionItem[] {
  const context = classifyPath(objectPath);
  switch (context.kind) {
    case 'task':
      if (objectPath.length === 0) return formatKeyItems(site, 'task', present);
      if (objectPath.length === 1 && objectPath[0] === 'template') return formatKeyItems(site, 'template', present);
      if (objectPath.length === 1 && objectPath[0] === 'initial_state') return initialStateKeys(site, present);
      return [];
    case 'step': {
      if (context.rest.length === 0) {
        if (present.has('answer')) return [];
        const keys = formatKeyItems(site, 'toolCall', present);
        return present.size ? keys : [...keys, ...formatKeyItems(site, 'finalAnswer', present)];
      }
      if (context.rest.length === 1 && context.rest[0] === 'arguments') {
        const tool = valueAt(site.task, [...context.stepPath, 'tool']);
        const info = typeof tool === 'string' ? site.registry.tool(tool) : undefined;
        return info ? argumentKeyItems(site, tool as string, info.declaration.inputSchema, present) : [];
      }
      return [];
    }
    case 'predicate':
      // A predicate object has exactly one key: offer nothing once it has one.
      return present.size ? [] : predicateKeyItems(site, false);
    case 'leaf': {
      if (context.rest.length !== 0) return [];
      const info = site.registry.predicate(context.name);
      return info ? argumentKeyItems(site, context.name, info.declaration.arguments, present) : [];
    }
    default:
      return [];
  }
}

function markdown(value: string) {
  return { kind: MarkupKind.Markdown, value };
}

function keyItem(site: Site, key: string, valueText: string, extra: Partial<CompletionItem>): CompletionItem {
  return {
    label: key,
    kind: CompletionItemKind.Property,
    insertTextFormat: InsertTextFormat.Snippet,
    filterText: JSON.stringify(key),
    textEdit: { range: site.range, newText: `${JSON.stringify(key)}: ${valueText}${site.separator}` },
    ...extra,
  };
}

/** Value snippets for the task's own keys: enums as choices (re-triggering completion), examples for scalars. */
function formatValueSnippet(info: KeyInfo): { snippet: string; retrigger: boolean } {
  const schema = info.schema;
  if (info.key === 'server') return { snippet: '"$1"', retrigger: true };
  if (info.key === 'reference_solutions' || info.key === 'counterexamples') return { snippet: '[\n\t[$1]\n]', retrigger: false };
  if (info.key === 'success_predicate') return { snippet: '{$1}', retrigger: true };
  const example = info.examples?.[0];
  const type = describeType(schema);
  if (Array.isArray(schema.enum)) return { snippet: '"$1"', retrigger: true };
  if ((type === 'integer' || type === 'number') && typeof example === 'number') return { snippet: valueSnippet(schema, 1, example), retrigger: false };
  if (info.key === 'available_tools') return { snippet: '[$1]', retrigger: true };
  return { snippet: valueSnippet(schema, 1), retrigger: false };
}

function formatKeyItems(site: Site, object: FormatObject, present: Set<string>): CompletionItem[] {
  return formatKeys(object)
    .filter((info) => !present.has(info.key))
    .map((info) => {
      const { snippet, retrigger } = formatValueSnippet(info);
      return keyItem(site, info.key, snippet, {
        detail: info.title ?? describeType(info.schema),
        documentation: markdown(keyMarkdown(info)),
        // Required keys first, then in the order the format declares them.
        sortText: `${info.required ? 0 : 1}${String(formatKeys(object).indexOf(info)).padStart(3, '0')}`,
        ...(retrigger ? { command: TRIGGER_SUGGEST } : {}),
      });
    });
}

function initialStateKeys(site: Site, present: Set<string>): CompletionItem[] {
  const own = new Set(taskNamespaces(site.task));
  return site.registry
    .names()
    .filter((ns) => !present.has(ns) && !site.registry.isVirtual(ns))
    .map((ns) =>
      keyItem(site, ns, '{$1}', {
        kind: CompletionItemKind.Module,
        detail: site.registry.get(ns)!.server.title,
        documentation: markdown(site.registry.get(ns)!.server.description),
        sortText: `${own.has(ns) ? 0 : 1}${ns}`,
      }),
    );
}

function argumentKeyItems(site: Site, owner: string, schema: unknown, present: Set<string>): CompletionItem[] {
  const required = new Set(requiredKeys(schema));
  return schemaProperties(schema)
    .filter(([key]) => !present.has(key))
    .map(([key, property], i) =>
      keyItem(site, key, valueSnippet(property, 1), {
        detail: `${describeType(property)}${required.has(key) ? ' (required)' : ''}`,
        documentation: markdown(argumentMarkdown(owner, key, property, required.has(key))),
        sortText: `${required.has(key) ? 0 : 1}${String(i).padStart(3, '0')}`,
      }),
    );
}

/** `all`/`any`/`not` and the leaves of the task's namespaces; as `"key": value` or, at a value position, `{ ... }`. */
function predicateKeyItems(site: Site, asObject: boolean): CompletionItem[] {
  const wrap = (snippet: string) => (asObject ? `{ ${snippet} }` : snippet);
  const items: CompletionItem[] = [];
  const combinators: [string, string, string][] = [
    ['all', '"all": [$1]', 'AllPredicate'],
    ['any', '"any": [$1]', 'AnyPredicate'],
    ['not', '"not": {$1}', 'NotPredicate'],
  ];
  for (const [label, snippet, def] of combinators) {
    const { title, description } = definition(def);
    items.push({
      label,
      kind: CompletionItemKind.Operator,
      detail: title,
      documentation: description ? markdown(description) : undefined,
      insertTextFormat: InsertTextFormat.Snippet,
      filterText: asObject ? label : JSON.stringify(label),
      textEdit: { range: site.range, newText: wrap(snippet) + site.separator },
      sortText: `0${label}`,
      command: TRIGGER_SUGGEST,
    });
  }
  const own = new Set(taskNamespaces(site.task));
  for (const namespace of predicateNamespaces(site.task, site.registry)) {
    for (const [name, info] of site.registry.get(namespace)!.predicates) {
      const qualified = `${namespace}.${name}`;
      const snippet = `${JSON.stringify(qualified)}: ${argumentsSnippet(info.declaration.arguments, info.declaration.examples?.[0])}`;
      items.push({
        label: qualified,
        kind: CompletionItemKind.Function,
        detail: describeArguments(info.declaration.arguments),
        documentation: markdown(predicateMarkdown(qualified, info)),
        insertTextFormat: InsertTextFormat.Snippet,
        filterText: asObject ? qualified : JSON.stringify(qualified),
        textEdit: { range: site.range, newText: wrap(snippet) + site.separator },
        sortText: `${own.has(namespace) ? 1 : 2}${qualified}`,
      });
    }
  }
  return items;
}

function describeArguments(schema: unknown): string {
  const required = new Set(requiredKeys(schema));
  const args = schemaProperties(schema).map(([k]) => (required.has(k) ? k : `${k}?`));
  return `(${args.join(', ')})`;
}

// ---- values

function valueCompletions(site: Site, path: (string | number)[]): CompletionItem[] {
  const context = classifyPath(path);
  switch (context.kind) {
    case 'task': {
      const [key, index] = context.path;
      if (key === 'server' && (context.path.length === 1 || typeof index === 'number')) return namespaceItems(site);
      if ((key === 'category' || key === 'difficulty') && context.path.length === 1) {
        return enumItems(site, enumValues(formatKey('task', key)?.schema ?? {}));
      }
      if (key === 'available_tools' && typeof index === 'number' && context.path.length === 2) {
        const listed = stringItems(site.task.available_tools);
        const current = listed[index];
        return toolItems(site, [], new Set(listed.filter((t) => t !== current)));
      }
      return [];
    }
    case 'predicate':
      return predicateKeyItems(site, true);
    case 'step': {
      const { rest, stepPath } = context;
      if (rest.length === 1 && rest[0] === 'tool') return toolItems(site, stringItems(site.task.available_tools), new Set());
      if (rest.length === 2 && rest[0] === 'arguments' && typeof rest[1] === 'string') {
        const tool = valueAt(site.task, [...stepPath, 'tool']);
        const info = typeof tool === 'string' ? site.registry.tool(tool) : undefined;
        const property = info ? new Map(schemaProperties(info.declaration.inputSchema)).get(rest[1]) : undefined;
        return property ? enumItems(site, enumValues(property)) : [];
      }
      return [];
    }
    case 'leaf': {
      if (context.rest.length !== 1 || typeof context.rest[0] !== 'string') return [];
      const info = site.registry.predicate(context.name);
      const property = info ? new Map(schemaProperties(info.declaration.arguments)).get(context.rest[0]) : undefined;
      return property ? enumItems(site, enumValues(property)) : [];
    }
    default:
      return [];
  }
}

function valueItem(site: Site, label: string, value: unknown, extra: Partial<CompletionItem>): CompletionItem {
  const json = JSON.stringify(value);
  return { label, filterText: json, textEdit: { range: site.range, newText: json + site.separator }, ...extra };
}

function enumItems(site: Site, values: unknown[]): CompletionItem[] {
  return values.map((value, i) =>
    valueItem(site, typeof value === 'string' ? value : JSON.stringify(value), value, { kind: CompletionItemKind.EnumMember, sortText: String(i).padStart(3, '0') }),
  );
}

function namespaceItems(site: Site): CompletionItem[] {
  return site.registry
    .names()
    .filter((ns) => !site.registry.isVirtual(ns)) // `answer` checks the final answer; it runs no server
    .map((ns) => {
      const info = site.registry.get(ns)!;
      return valueItem(site, ns, ns, { kind: CompletionItemKind.Module, detail: info.server.title, documentation: markdown(info.server.description) });
    });
}

/** `<ns>.<tool>` of every namespace: `first` (e.g. the task's available tools) on top, then the task's namespaces. */
function toolItems(site: Site, first: string[], exclude: Set<string>): CompletionItem[] {
  const own = new Set(taskNamespaces(site.task));
  const preferred = new Set(first);
  const items: CompletionItem[] = [];
  for (const [namespace, info] of site.registry.namespaces) {
    for (const [name, tool] of info.tools) {
      const qualified = `${namespace}.${name}`;
      if (exclude.has(qualified)) continue;
      const rank = preferred.has(qualified) ? 0 : own.has(namespace) ? 1 : 2;
      items.push(valueItem(site, qualified, qualified, {
        kind: CompletionItemKind.Function,
        detail: tool.declaration.title ?? describeArguments(tool.declaration.inputSchema),
        documentation: markdown(toolMarkdown(qualified, tool)),
        sortText: `${rank}${qualified}`,
        ...(rank === 0 ? { preselect: first[0] === qualified } : {}),
      }));
    }
  }
  return items;
}

