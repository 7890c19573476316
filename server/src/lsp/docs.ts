/**
 * Markdown documentation of predicates, tools, arguments and task-format keys, from the namespace files
 * and the task schema: one text for hover and for completion items alike.
 */
import type { PredicateInfo, ToolInfo } from '../mcp/registry.ts';
import { exposedName } from '../mcp/names.ts';
import { describeType, requiredKeys, schemaProperties, type Schema } from './json-context.ts';
import type { KeyInfo } from './task-format.ts';

function argumentLines(schema: unknown): string[] {
  const required = new Set(requiredKeys(schema));
  return schemaProperties(schema).map(([key, property]) => {
    const description = typeof property.description === 'string' ? ` — ${property.description}` : '';
    return `- \`${key}\`${required.has(key) ? '' : '?'}: \`${describeType(property)}\`${description}`;
  });
}

export function predicateMarkdown(qualified: string, info: PredicateInfo): string {
  const { declaration } = info;
  const lines = [`**${qualified}** (predicate)`, '', declaration.description];
  const args = argumentLines(declaration.arguments);
  lines.push('', args.length ? '**Arguments**' : '**Arguments**: none', ...args);
  lines.push('', `**Reads**: ${declaration.reads.map((r) => `\`${r}\``).join(', ')}`);
  const example = declaration.examples?.[0];
  if (example) lines.push('', `**Example**: \`${JSON.stringify({ [qualified]: example })}\``);
  return lines.join('\n');
}

export function toolMarkdown(qualified: string, info: ToolInfo): string {
  const { declaration } = info;
  const title = declaration.title ? ` — ${declaration.title}` : '';
  const lines = [`**${qualified}** (tool${title})`, '', declaration.description];
  const args = argumentLines(declaration.inputSchema);
  lines.push('', args.length ? '**Arguments**' : '**Arguments**: none', ...args);
  const hints = declaration.annotations;
  if (hints?.readOnlyHint) lines.push('', 'Read-only.');
  else if (hints?.destructiveHint) lines.push('', 'Destructive.');
  lines.push('', `The agent sees it as \`${exposedName(qualified)}\`.`);
  return lines.join('\n');
}

/** One argument of a predicate or tool: its type, whether required, its description. */
export function argumentMarkdown(owner: string, key: string, schema: Schema, required: boolean): string {
  const description = typeof schema.description === 'string' ? `\n\n${schema.description}` : '';
  return `**${key}**: \`${describeType(schema)}\` (${required ? 'required' : 'optional'}) — argument of \`${owner}\`${description}`;
}

export function keyMarkdown(info: KeyInfo): string {
  const heading = info.title ? `**${info.title}** (\`${info.key}\`${info.required ? ', required' : ''})` : `\`${info.key}\``;
  const lines = [heading];
  if (info.description) lines.push('', info.description);
  const example = info.examples?.[0];
  if (example !== undefined) lines.push('', `Example: \`${JSON.stringify(example)}\``);
  return lines.join('\n');
}
