/**
 * The namespace registry: every `schemas/servers/<ns>.json` with its JSON Schemas compiled, joined with the
 * plug-in code in `server/src/mcp/<ns>/index.ts`. Both are found by name, so a new namespace is a new file
 * and a new folder and nothing else.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { ValidateFunction } from 'ajv';
import { createAjv } from '../ajv.ts';
import { schemasDir } from '../paths.ts';
import { GENERIC_PREDICATES } from './generic-predicates.ts';
import type { NamespacePlugin, PredicateFunction } from './namespace.ts';
import { ServerFileSchema, type PredicateDeclaration, type ServerFile, type ToolDeclaration } from './server-file.ts';
import { splitQualified } from './names.ts';
import { McpbenchError } from '../errors.ts';

// Callers have always found it here; names.ts keeps it with the other qualified-name helpers.
export { splitQualified };

export interface ToolInfo {
  namespace: string;
  declaration: ToolDeclaration;
  validateInput: ValidateFunction;
}

export interface PredicateInfo {
  namespace: string;
  declaration: PredicateDeclaration;
  validateArguments: ValidateFunction;
  /** The code: the plug-in's function, or a generic predicate's; undefined while the namespace has no code. */
  implementation: PredicateFunction<unknown> | undefined;
  /** Reads the end state of the task's first reference solution (`matchesReference`): the runner produces it first. */
  needsReference: boolean;
}

export interface NamespaceInfo {
  namespace: string;
  file: string;
  server: ServerFile;
  tools: Map<string, ToolInfo>;
  predicates: Map<string, PredicateInfo>;
  validateState: ValidateFunction;
  /** Undefined while a namespace has a schema file but no code yet: its predicates cannot be evaluated. */
  plugin: NamespacePlugin | undefined;
}

export class Registry {
  constructor(readonly namespaces: ReadonlyMap<string, NamespaceInfo>) {}

  get(namespace: string): NamespaceInfo | undefined {
    return this.namespaces.get(namespace);
  }

  /** `filesystem.move_file` → its tool, or undefined. */
  tool(qualified: string): ToolInfo | undefined {
    const [ns, name] = splitQualified(qualified);
    return name === undefined ? undefined : this.namespaces.get(ns)?.tools.get(name);
  }

  predicate(qualified: string): PredicateInfo | undefined {
    const [ns, name] = splitQualified(qualified);
    return name === undefined ? undefined : this.namespaces.get(ns)?.predicates.get(name);
  }

  names(): string[] {
    return [...this.namespaces.keys()];
  }

  /**
   * Whether a namespace runs no server (its file says `implementation.kind: "virtual"`, as `answer` does: it
   * checks the agent's final text). Such a namespace is never started, seeded or listed in `server`.
   */
  isVirtual(namespace: string): boolean {
    return this.namespaces.get(namespace)?.server.implementation.kind === 'virtual';
  }

  /** The namespaces that run no server. */
  virtualNamespaces(): string[] {
    return this.names().filter((ns) => this.isVirtual(ns));
  }
}

export class RegistryError extends McpbenchError {
  static override readonly code: string = 'registry';
}

/** Loads a namespace's plug-in code; esbuild bundles every `./<ns>/index.ts` this pattern can match. */
async function importPlugin(namespace: string): Promise<NamespacePlugin | undefined> {
  try {
    const module = await import(`./${namespace}/index.ts`);
    return (module.default ?? module) as NamespacePlugin;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND' || /Could not resolve|Cannot find module|Module not found in bundle/.test(String(error))) {
      return undefined;
    }
    throw error;
  }
}

let defaultRegistry: Promise<Registry> | undefined;

/**
 * The registry of the package's own schemas/servers, loaded once per process. `only` loads one namespace and
 * its code and nothing else: what a server process serving that namespace needs.
 */
export function loadRegistry(options: { only?: string } = {}): Promise<Registry> {
  if (options.only !== undefined) return loadRegistryFrom(join(schemasDir(), 'servers'), { only: options.only });
  return (defaultRegistry ??= loadRegistryFrom(join(schemasDir(), 'servers')));
}

interface RegistryOptions {
  /**
   * Compile every schema now (and fail now on a bad one). By default each validator compiles on first use:
   * a server process serving one namespace then pays for that namespace only, not for all of them.
   */
  eager?: boolean;
  /** Load this namespace only (an unknown one gives an empty registry, whose names() say what is known). */
  only?: string;
}

export async function loadRegistryFrom(serversDir: string, options: RegistryOptions = {}): Promise<Registry> {
  // Compiled on first use, schemas are compiled quick (test/namespaces.test.ts compiles each one in full).
  const ajv = createAjv({ quick: !options.eager });
  const files = readdirSync(serversDir).filter((f) => f.endsWith('.json')).sort();
  const namespaces = new Map<string, NamespaceInfo>();
  for (const fileName of files) {
    if (options.only !== undefined && fileName !== `${options.only}.json`) continue;
    const file = join(serversDir, fileName);
    const namespace = basename(fileName, '.json');
    let server: ServerFile;
    try {
      server = ServerFileSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
    } catch (error) {
      throw new RegistryError(`${file}: not a valid namespace file: ${(error as Error).message}`);
    }
    if (server.namespace !== namespace) {
      throw new RegistryError(`${file}: declares namespace "${server.namespace}" but is named ${fileName}`);
    }
    const compileNow = (schema: Record<string, unknown>, what: string): ValidateFunction => {
      try {
        return ajv.compile(withoutDialect(schema));
      } catch (error) {
        throw new RegistryError(`${file}: ${what}: invalid JSON Schema: ${(error as Error).message}`);
      }
    };
    /** The validator for `schema` as property `key` of `target`: compiled now (eager) or on first read. */
    const attach = <T extends object>(target: T, key: keyof T & string, schema: Record<string, unknown>, what: string): T => {
      if (options.eager) return Object.assign(target, { [key]: compileNow(schema, what) });
      Object.defineProperty(target, key, {
        configurable: true,
        enumerable: true,
        get() {
          // Replace the accessor by the compiled function, so later reads cost nothing.
          const value = compileNow(schema, what);
          Object.defineProperty(target, key, { value, enumerable: true });
          return value;
        },
      });
      return target;
    };
    const tools = new Map<string, ToolInfo>();
    for (const declaration of server.tools) {
      tools.set(declaration.name, attach({ namespace, declaration } as ToolInfo, 'validateInput', declaration.inputSchema, `tool ${declaration.name}`));
    }
    const plugin = await importPlugin(namespace);
    const predicates = new Map<string, PredicateInfo>();
    const addPredicate = (declaration: PredicateDeclaration, implementation: PredicateFunction<unknown> | undefined, needsReference: boolean) => {
      const info = { namespace, declaration, implementation, needsReference } as PredicateInfo;
      predicates.set(declaration.name, attach(info, 'validateArguments', declaration.arguments, `predicate ${declaration.name}`));
    };
    for (const declaration of server.predicates) addPredicate(declaration, plugin?.predicates[declaration.name], false);
    // Every namespace with a state gets the generic state predicates (a namespace file may declare its own of the same name).
    if (server.implementation.kind !== 'virtual') {
      const stateKeys = Object.keys((server.state_schema.properties ?? {}) as Record<string, unknown>);
      for (const generic of GENERIC_PREDICATES) {
        if (!predicates.has(generic.name)) addPredicate(generic.declare(stateKeys), generic.implementation, generic.needsReference);
      }
    }
    namespaces.set(
      namespace,
      attach(
        { namespace, file, server, tools, predicates, plugin } as NamespaceInfo,
        'validateState',
        server.state_schema,
        'state_schema',
      ),
    );
  }
  return new Registry(namespaces);
}

/**
 * Tool schemas copied from third-party servers may name an older dialect (`draft-07`); the keywords they use
 * mean the same in 2020-12, so the `$schema` marker is dropped rather than loading a second validator.
 */
function withoutDialect(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}
