/**
 * Hover in a task file: predicate and tool documentation from the namespace files, argument descriptions,
 * the task format's key descriptions, and on the task id its canonical hash and file.
 */
import { findNodeAtOffset, getNodePath, type Node } from 'jsonc-parser';
import { MarkupKind, type Hover } from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { Registry } from '../mcp/registry.ts';
import { canonicalHash } from '../tasks/hash.ts';
import { argumentMarkdown, keyMarkdown, predicateMarkdown, toolMarkdown } from './docs.ts';
import { classifyPath, parseLoosely, requiredKeys, schemaProperties, treeOf, valueAt } from './json-context.ts';
import { definition, formatKey, type FormatObject } from './task-format.ts';

export interface HoverFileInfo {
  /** How to name this file to the reader (a workspace-relative path). */
  fileLabel: string;
  /** Other files of the workspace with the same task id. */
  sameId: string[];
}

export function hoverAt(text: string, offset: number, registry: Registry, file: HoverFileInfo): Hover | null {
  const node = findNodeAtOffset(treeOf(text) ?? emptyNode(), offset, true);
  if (!node || node.type !== 'string') return null;
  const isKey = node.parent?.type === 'property' && node.parent.children?.[0] === node;
  const path = getNodePath(node);
  const value = isKey ? contentsForKey(text, path, registry, file) : contentsForValue(text, path, node.value as string, registry, file);
  if (!value) return null;
  const document = TextDocument.create('', 'json', 0, text);
  return {
    contents: { kind: MarkupKind.Markdown, value },
    range: { start: document.positionAt(node.offset), end: document.positionAt(node.offset + node.length) },
  };
}

function emptyNode(): Node {
  return { type: 'null', offset: 0, length: 0, value: null } as Node;
}

function formatKeyContents(object: FormatObject, key: string): string | undefined {
  const info = formatKey(object, key);
  return info ? keyMarkdown(info) : undefined;
}

function contentsForKey(text: string, path: (string | number)[], registry: Registry, file: HoverFileInfo): string | undefined {
  const key = path.at(-1);
  if (typeof key !== 'string') return undefined;
  const context = classifyPath(path);
  switch (context.kind) {
    case 'task': {
      if (path.length === 1) {
        const doc = formatKeyContents('task', key);
        return key === 'id' ? [doc, idContents(text, file)].filter(Boolean).join('\n\n---\n\n') : doc;
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
        const tool = valueAt(parseLoosely(text), [...context.stepPath, 'tool']);
        const info = typeof tool === 'string' ? registry.tool(tool) : undefined;
        const schema = info ? new Map(schemaProperties(info.declaration.inputSchema)).get(key) : undefined;
        return schema ? argumentMarkdown(tool as string, key, schema, requiredKeys(info!.declaration.inputSchema).includes(key)) : undefined;
      }
      return undefined;
    }
  }
}

function contentsForValue(text: string, path: (string | number)[], value: string, registry: Registry, file: HoverFileInfo): string | undefined {
  const context = classifyPath(path);
  if (context.kind === 'step') {
    if (context.rest.length === 1 && context.rest[0] === 'tool') return toolContents(registry, value);
    return undefined;
  }
  if (context.kind !== 'task') return undefined;
  const [key] = path;
  if (key === 'id' && path.length === 1) return idContents(text, file);
  if (key === 'available_tools' && path.length === 2) return toolContents(registry, value);
  if (key === 'server') return namespaceContents(registry, value);
  return undefined;
}

function idContents(text: string, file: HoverFileInfo): string {
  const lines = [`**Task** \`${String(parseLoosely(text).id ?? '')}\` in \`${file.fileLabel}\``];
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
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
