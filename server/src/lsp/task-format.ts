/**
 * The keys of the task format as schemas/task.schema.json (emitted from the zod model) declares them:
 * names, types, enums, titles, descriptions and examples, for completion and hover.
 */
import taskSchema from '../../../schemas/task.schema.json';
import { isObject } from '../tasks/schema-check.ts';
import { schemaProperties, requiredKeys, type Schema } from './json-context.ts';

/** Which object of the format a key belongs to. */
export type FormatObject = 'task' | 'template' | 'toolCall' | 'finalAnswer';

export interface KeyInfo {
  key: string;
  schema: Schema;
  required: boolean;
  title?: string;
  description?: string;
  examples?: unknown[];
}

const defs = (taskSchema as { $defs: Record<string, Schema> }).$defs;

/** Follows a local `$ref`, keeping the referring schema's own annotations (title, description) on top. */
function resolve(schema: Schema): Schema {
  const ref = schema.$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#/$defs/')) return schema;
  const target = defs[ref.slice('#/$defs/'.length)] ?? {};
  const { $ref: _ref, ...own } = schema;
  return { ...resolve(target), ...own };
}

function objectSchema(object: FormatObject): Schema {
  switch (object) {
    case 'task': return defs.Task ?? {};
    case 'template': {
      const template = (defs.Task?.properties as Record<string, Schema> | undefined)?.template;
      return template ? resolve(template) : {};
    }
    case 'toolCall': return defs.ToolCall ?? {};
    case 'finalAnswer': return defs.FinalAnswer ?? {};
  }
}

const cache = new Map<FormatObject, KeyInfo[]>();

export function formatKeys(object: FormatObject): KeyInfo[] {
  let keys = cache.get(object);
  if (!keys) {
    const schema = objectSchema(object);
    const required = new Set(requiredKeys(schema));
    keys = schemaProperties(schema).map(([key, raw]) => {
      const resolved = resolve(raw);
      const info: KeyInfo = { key, schema: resolved, required: required.has(key) };
      if (typeof resolved.title === 'string') info.title = resolved.title;
      if (typeof resolved.description === 'string') info.description = resolved.description;
      if (Array.isArray(resolved.examples)) info.examples = resolved.examples;
      return info;
    });
    cache.set(object, keys);
  }
  return keys;
}

export function formatKey(object: FormatObject, key: string): KeyInfo | undefined {
  return formatKeys(object).find((k) => k.key === key);
}

/** The title and description of a `$defs` entry (`Predicate`, `AllPredicate`, ...). */
export function definition(name: string): { title?: string; description?: string } {
  const def = defs[name];
  if (!isObject(def)) return {};
  return {
    ...(typeof def.title === 'string' ? { title: def.title } : {}),
    ...(typeof def.description === 'string' ? { description: def.description } : {}),
  };
}
