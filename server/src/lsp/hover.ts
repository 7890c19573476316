/**
 * Hover in a task file: predicate and tool documentation from the namespace files, argument descriptions,
 * the task format's key descriptions, and on the task id its canonical hash and file. It takes the document the
 * workspace parsed once for this version (the lint and every other feature share it).
 */
import { MarkupKind, type Hover } from 'vscode-languageserver';
import type { Registry } from '../mcp/registry.ts';
import type { JsonDocument } from '../tasks/document.ts';
import { canonicalHash } from '../canonical-json.ts';
import { argumentMarkdown, keyMarkdown, predicateMarkdown, toolMarkdown } from './docs.ts';
import { classifyPath, objectOf, rangeOf, requiredKeys, schemaProperties, stringNodeAt, valueAt } from './json-context.ts';
import { definition, formatKey, type FormatObject } from './task-format.ts';
import type { JsonPath } from '../json-values.ts';

export interface HoverFileInfo {
  /** How to name this file to the reader (a workspace-relative path). */
  fileLabel: string;
  /** Other files of the workspace with the same task id. */
  sameId: string[];
}

export function hoverAt(document: JsonDocument, offset: number, registry: Registry, file: HoverFileInfo): Hover | null {
  const at = stringNodeAt(document, offset);
  if (!at) return null;
  const { node, path, isKey } = at;
  const value = isKey ? contentsForKey(document, path, registry, file) : contentsForValue(document, path, node.value as string, registry, file);
  if (!value) return null;
  return { contents: { kind: MarkupKind.Markdown, value }, range: rangeOf(document, node) };
}

function formatKeyContents(object: FormatObject, key: string): string | undefined {
  const info = formatKey(object, key);
  return info ? keyMarkdown(info) : undefined;
}

function contentsForKey(document: JsonDocument, path: JsonPath, registry: Registry, file: HoverFileInfo): string | undefined {
  const key = path.at(-1);
  if (typeof key !== 'string') return undefined;
  const context = classifyPath(path);
  switch (context.kind) {
    case 'task': {
      if (path.length === 1) {
        const doc = formatKeyContents('task', key);
        return key === 'id' ? [doc, idContents(document, file)].filter(Boolean).join('\n\n---\n\n') : doc;
      }
      if (path.length === 2 && path[0] === 'template') return formatKeyContents('template', key);
      if (path.length === 2 && path[0] === 'initial_state') return namespaceContents(registry, key);
      return undefined;
    }
    case 'combinator':
      return combinatorContents(context.operator);
    case 'predicate':
      if (key === 'not') return combinatorContents('not');
      return key === 'success_predicate' ? formatKeyContents('task', key) : undefined;
    case 'leaf': {
      const info = registry.predicate(context.name);
      if (!info) return undefined;
      if (context.rest.length === 0) return predicateMarkdown(context.name, info);
      if (context.rest.length !== 1) return undefined;
      const schema = new Map(schemaProperties(info.declaration.arguments)).get(key);
      return schema ? argumentMarkdown(context.name, key, schema, requiredKeys(info.declaration.arguments).includes(key)) : undefined;
    }
    case 'step': {
      if (context.rest.length === 1) return formatKeyContents('toolCall', key) ?? formatKeyContents('finalAnswer', key);
      if (context.rest.length === 2 && context.rest[0] === 'arguments') {
        const tool = valueAt(objectOf(document), [...context.stepPath, 'tool']);
        const info = typeof tool === 'string' ? registry.tool(tool) : undefined;
        const schema = info ? new Map(schemaProperties(info.declaration.inputSchema)).get(key) : undefined;
        return schema ? argumentMarkdown(tool as string, key, schema, requiredKeys(info!.declaration.inputSchema).includes(key)) : undefined;
      }
      return undefined;
    }
  }
}

function contentsForValue(document: JsonDocument, path: JsonPath, value: string, registry: Registry, file: HoverFileInfo): string | undefined {
  const context = classifyPath(path);
  if (context.kind === 'step') {
    if (context.rest.length === 1 && context.rest[0] === 'tool') return toolContents(registry, value);
    return undefined;
  }
  if (context.kind !== 'task') return undefined;
  const [key] = path;
  if (key === 'id' && path.length === 1) return idContents(document, file);
  if (key === 'available_tools' && path.length === 2) return toolContents(registry, value);
  if (key === 'server') return namespaceContents(registry, value);
  return undefined;
}

function idContents(document: JsonDocument, file: HoverFileInfo): string {
  const lines = [`**Task** \`${String(objectOf(document).id ?? '')}\` in \`${file.fileLabel}\``];
  const value = document.syntaxProblems.length ? undefined : document.value();
  // The hash of a file with syntax errors would be the hash of a guess: say so instead.
  let hash: string;
  try {
    hash = value === undefined ? 'Canonical hash: not available while the file has JSON syntax errors.' : `Canonical hash (SHA-256 of RFC 8785 JSON): \`${canonicalHash(value)}\``;
  } catch (error) {
    hash = `Canonical hash: not available: ${(error as Error).message}.`;
  }
  lines.push('', hash);
  if (file.sameId.length) lines.push('', `Also used by: ${file.sameId.map((f) => `\`${f}\``).join(', ')}`);
  return lines.join('\n');
}

function toolContents(registry: Registry, qualified: string): string | undefined {
  const info = registry.tool(qualified);
  return info ? toolMarkdown(qualified, info) : undefined;
}

function namespaceContents(registry: Registry, namespace: string): string | undefined {
  const info = registry.get(namespace);
  if (!info) return undefined;
  const { server } = info;
  return [`**${server.title}** (namespace \`${namespace}\`, ${server.implementation.kind})`, '', server.description,
    '', `${info.tools.size} tools, ${info.predicates.size} predicates.`].join('\n');
}

function combinatorContents(operator: 'all' | 'any' | 'not'): string {
  const { title, description } = definition(`${operator[0]!.toUpperCase()}${operator.slice(1)}Predicate`);
  return [`**${title ?? operator}**`, description].filter(Boolean).join('\n\n');
}
