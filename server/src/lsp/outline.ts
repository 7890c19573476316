/**
 * The outline of a task file: its top-level keys, with the available tools, the predicate tree (`all`,
 * `any`, `not` nodes and leaves by name) and each solution's steps as children. Built from the tolerant
 * parse tree of the workspace's one parse of the document, so a file being typed still has an outline.
 */
import { getNodeValue, type Node } from 'jsonc-parser';
import { SymbolKind, type DocumentSymbol } from 'vscode-languageserver';
import type { JsonDocument } from '../tasks/document.ts';
import { rangeOf } from './json-context.ts';

const PREDICATE_OPERATORS = new Set(['all', 'any', 'not']);

export function taskOutline(document: JsonDocument): DocumentSymbol[] {
  const root = document.root;
  if (root?.type !== 'object') return [];
  const range = (node: Node) => rangeOf(document, node);
  const symbol = (name: string, kind: SymbolKind, whole: Node, selection: Node, detail?: string, children?: DocumentSymbol[]): DocumentSymbol => ({
    name: name || '(empty)',
    kind,
    range: range(whole),
    selectionRange: range(selection),
    ...(detail ? { detail } : {}),
    ...(children?.length ? { children } : {}),
  });

  const predicate = (node: Node, label?: Node): DocumentSymbol | undefined => {
    // `node` is a predicate object; its one property says what it is.
    const property = node.type === 'object' ? node.children?.[0] : undefined;
    const [keyNode, valueNode] = property?.children ?? [];
    if (!property || !keyNode || typeof keyNode.value !== 'string') return undefined;
    const key = keyNode.value;
    if (PREDICATE_OPERATORS.has(key)) {
      const items = key === 'not' ? (valueNode ? [valueNode] : []) : valueNode?.type === 'array' ? valueNode.children ?? [] : [];
      const children = items.map((item) => predicate(item)).filter((s): s is DocumentSymbol => s !== undefined);
      const detail = key === 'all' ? `${items.length} must hold` : key === 'any' ? `${items.length} solution paths` : undefined;
      return symbol(key, SymbolKind.Operator, label ?? node, keyNode, detail, children);
    }
    return symbol(key, SymbolKind.Function, label ?? node, keyNode, valueNode ? compact(valueNode) : undefined);
  };

  const sequence = (node: Node, index: number, noun: string): DocumentSymbol => {
    const steps = node.type === 'array' ? node.children ?? [] : [];
    const children = steps.map((step, i) => {
      const value = getNodeValue(step) as Record<string, unknown> | null;
      const tool = value && typeof value === 'object' ? value.tool : undefined;
      if (typeof tool === 'string') {
        const args = step.children?.find((p) => p.children?.[0]?.value === 'arguments')?.children?.[1];
        return symbol(`${i + 1}. ${tool}`, SymbolKind.Method, step, step, args ? compact(args) : undefined);
      }
      const answer = value && typeof value === 'object' ? value.answer : undefined;
      return symbol(`${i + 1}. answer`, SymbolKind.String, step, step, typeof answer === 'string' ? truncate(answer) : undefined);
    });
    return symbol(`${noun} ${index + 1}`, SymbolKind.Array, node, node, `${steps.length} step${steps.length === 1 ? '' : 's'}`, children);
  };

  return (root.children ?? []).flatMap((property): DocumentSymbol[] => {
    const [keyNode, valueNode] = property.children ?? [];
    if (!keyNode || typeof keyNode.value !== 'string') return [];
    const key = keyNode.value;
    const items = valueNode?.type === 'array' ? valueNode.children ?? [] : [];
    switch (key) {
      case 'id':
      case 'goal':
        return [symbol(key, key === 'id' ? SymbolKind.Key : SymbolKind.String, property, keyNode, valueNode ? truncate(String(getNodeValue(valueNode))) : undefined)];
      case 'available_tools':
        return [symbol(key, SymbolKind.Array, property, keyNode, `${items.length} tools`,
          items.map((item) => symbol(String(item.value ?? compact(item)), SymbolKind.Function, item, item)))];
      case 'success_predicate': {
        const tree = valueNode ? predicate(valueNode) : undefined;
        return [symbol(key, SymbolKind.Object, property, keyNode, undefined, tree ? [tree] : [])];
      }
      case 'reference_solutions':
      case 'counterexamples': {
        const noun = key === 'reference_solutions' ? 'solution' : 'counterexample';
        return [symbol(key, SymbolKind.Array, property, keyNode, `${items.length}`, items.map((item, i) => sequence(item, i, noun)))];
      }
      default: {
        const kind = valueNode?.type === 'object' ? SymbolKind.Object : valueNode?.type === 'array' ? SymbolKind.Array : valueNode?.type === 'number' ? SymbolKind.Number : SymbolKind.Property;
        const detail = valueNode && valueNode.type !== 'object' ? compact(valueNode) : undefined;
        return [symbol(key, kind, property, keyNode, detail)];
      }
    }
  });
}

function compact(node: Node): string {
  return truncate(JSON.stringify(getNodeValue(node)) ?? '');
}

function truncate(text: string, max = 60): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
