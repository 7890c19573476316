/**
 * The service's contract, schemas/openapi.yaml, as one document: the YAML parsed and the task schema it refers
 * to (`./task.schema.json#/$defs/...`) pulled in under `components.schemas`, so that the routes, the request
 * validation and the response validation are all made from the file itself (no second copy by hand).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { packageRoot } from '../paths.ts';
import { McpbenchError } from '../errors.ts';

type JsonObject = Record<string, unknown>;
const isJsonObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/** schemas/openapi.yaml cannot be made into the service's routes and validators. */
export class ContractError extends McpbenchError {
  static override readonly code: string = 'contract';
}

const EXTERNAL = './task.schema.json#/$defs/';
const LOCAL = '#/$defs/';

/** Replaces every `$ref` for which `rewrite` answers a string, in place. */
function rewriteRefs(node: unknown, rewrite: (ref: string) => string | undefined): void {
  if (Array.isArray(node)) {
    for (const item of node) rewriteRefs(item, rewrite);
  } else if (isJsonObject(node)) {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') {
        const target = rewrite(value);
        if (target !== undefined) node[key] = target;
      } else {
        rewriteRefs(value, rewrite);
      }
    }
  }
}

/**
 * Moves properties named like a JSON Schema keyword (`$schema`, as a task file has) from `properties` to an
 * exact `patternProperties` entry: the same validation, but the glue's dereferencer, which drops every key
 * named `$schema`/`$id`/... wherever it is, leaves it alone.
 */
function protectKeywordProperties(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) protectKeywordProperties(item);
    return;
  }
  if (!isJsonObject(node)) return;
  const properties = node.properties;
  if (isJsonObject(properties)) {
    for (const name of Object.keys(properties)) {
      if (!name.startsWith('$')) continue;
      const patterns = isJsonObject(node.patternProperties) ? node.patternProperties : (node.patternProperties = {});
      (patterns as JsonObject)[`^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`] = properties[name];
      delete properties[name];
    }
  }
  for (const value of Object.values(node)) protectKeywordProperties(value);
}

/** schemas/openapi.yaml bundled with schemas/task.schema.json (read from `root`, default the package). */
export function loadContract(root = packageRoot()): JsonObject {
  const dir = join(root, 'schemas');
  const spec: unknown = yaml.load(readFileSync(join(dir, 'openapi.yaml'), 'utf8'));
  const taskSchema: unknown = JSON.parse(readFileSync(join(dir, 'task.schema.json'), 'utf8'));
  if (!isJsonObject(spec) || !isJsonObject(spec.components) || !isJsonObject(spec.components.schemas)) throw new ContractError('schemas/openapi.yaml: no components.schemas');
  if (!isJsonObject(taskSchema) || !isJsonObject(taskSchema.$defs)) throw new ContractError('schemas/task.schema.json: no $defs');
  const schemas = spec.components.schemas;
  const defs = taskSchema.$defs;
  for (const name of Object.keys(defs)) {
    if (name in schemas) throw new ContractError(`schemas/openapi.yaml already has a schema ${name}, which schemas/task.schema.json defines too`);
  }
  rewriteRefs(defs, (ref) => (ref.startsWith(LOCAL) ? `#/components/schemas/${ref.slice(LOCAL.length)}` : undefined));
  Object.assign(schemas, defs);
  rewriteRefs(spec.paths, (ref) => (ref.startsWith(EXTERNAL) ? `#/components/schemas/${ref.slice(EXTERNAL.length)}` : undefined));
  protectKeywordProperties(spec.components);
  return spec;
}
