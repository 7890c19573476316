/**
 * Code actions beyond the linter's own fixes: fill in a predicate's or a tool call's missing required
 * arguments, and add every tool the reference solutions call to `available_tools` in one edit. They return
 * engine fixes (offset edits); the server turns them into LSP code actions.
 */
import { findNodeAtOffset, getNodePath, type Node } from 'jsonc-parser';
import type { Registry } from '../mcp/registry.ts';
import type { Fix, TextEdit } from '../tasks/diagnostics.ts';
import { isObject } from '../tasks/schema-check.ts';
import { classifyPath, nodeAt, parseLoosely, placeholderValue, requiredKeys, schemaProperties, stringItems, treeOf, valueAt } from './json-context.ts';

/**
 * For a `predicate-arguments` or `tool-arguments` finding starting at `offset`: a fix inserting all the
 * required arguments the leaf or call lacks, with placeholder values of the right type.
 */
export function missingArgumentsFix(text: string, offset: number, registry: Registry): Fix | undefined {
  const root = treeOf(text);
  const node = root ? findNodeAtOffset(root, offset, false) : undefined;
  if (!root || !node) return undefined;
  const context = classifyPath(getNodePath(node));
  const task = parseLoosely(text);
  let schema: unknown;
  let argsPath: (string | number)[];
  let owner: string;
  if (context.kind === 'leaf') {
    schema = registry.predicate(context.name)?.declaration.arguments;
    argsPath = [...context.leafPath, context.name];
    owner = context.name;
  } else if (context.kind === 'step') {
    const tool = valueAt(task, [...context.stepPath, 'tool']);
    schema = typeof tool === 'string' ? registry.tool(tool)?.declaration.inputSchema : undefined;
    argsPath = [...context.stepPath, 'arguments'];
    owner = String(tool);
  } else {
    return undefined;
  }
  if (!schema) return undefined;
  const args = valueAt(task, argsPath);
  const present = isObject(args) ? args : {};
  const properties = new Map(schemaProperties(schema));
  const missing = requiredKeys(schema).filter((key) => !(key in present));
  if (missing.length === 0) return undefined;
  const entries = missing.map((key) => `${JSON.stringify(key)}: ${JSON.stringify(placeholderValue(properties.get(key) ?? {}))}`);
  const title = `Add the missing required argument${missing.length > 1 ? 's' : ''} of \`${owner}\`: ${missing.map((k) => `\`${k}\``).join(', ')}`;

  const argsNode = nodeAt(root, argsPath);
  if (argsNode?.type === 'object') return { title, edits: [appendProperties(text, argsNode, entries)] };
  if (argsNode) return undefined; // arguments of the wrong type: the type error comes first
  // A call without `arguments`: add the whole object to the step.
  const stepNode = context.kind === 'step' ? nodeAt(root, context.stepPath) : undefined;
  if (stepNode?.type !== 'object') return undefined;
  return { title, edits: [appendProperties(text, stepNode, [`"arguments": { ${entries.join(', ')} }`])] };
}

/** An edit adding `entries` (`"key": value` texts) after an object's last property, in its layout. */
function appendProperties(text: string, object: Node, entries: string[]): TextEdit {
  const last = object.children?.at(-1);
  if (!last) return { offset: object.offset + 1, length: object.length - 2, newText: ` ${entries.join(', ')} ` };
  const end = last.offset + last.length;
  if (!text.slice(object.offset, object.offset + object.length).includes('\n')) {
    return { offset: end, length: 0, newText: `, ${entries.join(', ')}` };
  }
  const lineStart = text.lastIndexOf('\n', last.offset) + 1;
  const indent = text.slice(lineStart, last.offset).match(/^\s*/)?.[0] ?? '';
  return { offset: end, length: 0, newText: entries.map((e) => `,\n${indent}${e}`).join('') };
}

/** The known tools the reference solutions call that `available_tools` does not list, in order of first use. */
export function toolsMissingFromAvailable(task: Record<string, unknown>, registry: Registry): string[] {
  const available = new Set(stringItems(task.available_tools));
  const missing: string[] = [];
  const solutions = Array.isArray(task.reference_solutions) ? task.reference_solutions : [];
  for (const sequence of solutions) {
    if (!Array.isArray(sequence)) continue;
    for (const step of sequence) {
      const tool = isObject(step) ? step.tool : undefined;
      if (typeof tool === 'string' && registry.tool(tool) && !available.has(tool) && !missing.includes(tool)) missing.push(tool);
    }
  }
  return missing;
}

/** One fix adding every tool the reference solutions use to `available_tools`, or undefined when none is missing. */
export function addReferenceToolsFix(text: string, registry: Registry): Fix | undefined {
  const missing = toolsMissingFromAvailable(parseLoosely(text), registry);
  const array = nodeAt(treeOf(text), ['available_tools']);
  if (missing.length === 0 || array?.type !== 'array') return undefined;
  const quoted = missing.map((t) => JSON.stringify(t)).join(', ');
  const last = array.children?.at(-1);
  const edit: TextEdit = last ? { offset: last.offset + last.length, length: 0, newText: `, ${quoted}` } : { offset: array.offset + 1, length: 0, newText: quoted };
  return { title: `Add the tools the reference solutions use to available_tools: ${missing.map((t) => `\`${t}\``).join(', ')}`, edits: [edit] };
}
