/**
 * Code actions beyond the linter's own fixes: fill in a predicate's or a tool call's missing required
 * arguments, and add every tool the reference solutions call to `available_tools` in one edit. They return
 * engine fixes (offset edits); the server turns them into LSP code actions.
 */
import { findNodeAtOffset, getNodePath } from 'jsonc-parser';
import type { Registry } from '../mcp/registry.ts';
import type { Fix } from '../tasks/diagnostics.ts';
import type { JsonDocument } from '../tasks/document.ts';
import { appendProperties, appendToArray } from '../tasks/edits.ts';
import { isObject } from '../tasks/schema-check.ts';
import { classifyPath, objectOf, placeholderValue, requiredKeys, schemaProperties, stringItems, valueAt } from './json-context.ts';

/**
 * For a `predicate-arguments` or `tool-arguments` finding starting at `offset`: a fix inserting all the
 * required arguments the leaf or call lacks, with placeholder values of the right type.
 */
export function missingArgumentsFix(document: JsonDocument, offset: number, registry: Registry): Fix | undefined {
  const root = document.root;
  const node = root ? findNodeAtOffset(root, offset, false) : undefined;
  if (!root || !node) return undefined;
  const context = classifyPath(getNodePath(node));
  const task = objectOf(document);
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

  const argsNode = document.nodeAt(argsPath);
  if (argsNode?.type === 'object') return { title, edits: [appendProperties(document.text, argsNode, entries)] };
  if (argsNode) return undefined; // arguments of the wrong type: the type error comes first
  // A call without `arguments`: add the whole object to the step.
  const stepNode = context.kind === 'step' ? document.nodeAt(context.stepPath) : undefined;
  if (stepNode?.type !== 'object') return undefined;
  return { title, edits: [appendProperties(document.text, stepNode, [`"arguments": { ${entries.join(', ')} }`])] };
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
export function addReferenceToolsFix(document: JsonDocument, registry: Registry): Fix | undefined {
  const missing = toolsMissingFromAvailable(objectOf(document), registry);
  const array = document.nodeAt(['available_tools']);
  if (missing.length === 0 || array?.type !== 'array') return undefined;
  const edit = appendToArray(document.text, array, missing.map((t) => JSON.stringify(t)));
  return { title: `Add the tools the reference solutions use to available_tools: ${missing.map((t) => `\`${t}\``).join(', ')}`, edits: [edit] };
}
