/**
 * The template linter: JSON syntax, structure against schemas/template.schema.json, placeholders (unknown
 * parameter or field, malformed, a type that cannot fit where it is placed), unused parameters, the grammar
 * (undefined productions, loops, unreachable productions), parameters that cannot be sampled, constraints
 * that cannot be met, and the task linter's findings on one sample instance placed back where the template
 * wrote the value. Pure and synchronous, like `lintTask`: the language server and the CLI place the findings.
 *
 * Placeholder types, decided here and documented in model.ts: a whole-string placeholder keeps its
 * parameter's type, so it must fit the schema position as that type (an integer where a string is wanted is
 * an error; derive a string with `format`). Interpolated placeholders always give text, so any scalar fits;
 * an object or array cannot be written into text.
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import { findNodeAtOffset, getNodePath, type Node } from 'jsonc-parser';
import templateSchema from '../../../schemas/template.schema.json';
import taskSchema from '../../../schemas/task.schema.json';
import type { Registry } from '../mcp/registry.ts';
import { createAjv } from '../ajv.ts';
import { compareDiagnostics, TEMPLATE_RULES, type Diagnostic, type Finding, type Fix, type TemplateRuleCode } from '../tasks/diagnostics.ts';
import { JsonDocument, type Span } from '../tasks/document.ts';
import { TEMPLATE_SCHEMA_ID } from '../tasks/json-schemas.ts';
import { lintTask } from '../tasks/lint.ts';
import { isObject, mapAjvErrors } from '../tasks/schema-check.ts';
import { closest } from '../tasks/suggest.ts';
import { buildVariant } from './generate.ts';
import { grammarProblems, unreachableProductions } from './grammar.ts';
import { ParameterSpec, TemplateSchema, type Template } from './model.ts';
import { collectPlaceholders, findPlaceholders, type PathTrace, type PlaceholderRef } from './placeholders.ts';
import { compileTemplate, parameterKind, parameterProblems, sampleVariant, TemplateError, UnsatisfiableError } from './sample.ts';
import type { JsonPath } from '../json-values.ts';
import { taskNamespaces } from '../tasks/vocabulary.ts';

// The template rules (codes, severities, summaries) are listed with the task rules in tasks/diagnostics.ts.
export { TEMPLATE_RULES, type TemplateRuleCode };

/** The seed of the one sample the task linter sees. */
export const LINT_SAMPLE_SEED = 1;

const LINT_SCHEMA_ID = 'https://mcpbench.dev/schemas/template.lint.schema.json';

function templateFinding(code: TemplateRuleCode, span: Span, message: string, fixes?: Fix[]): Finding {
  const f: Finding = { code, severity: TEMPLATE_RULES[code].severity, message, offset: span.offset, length: span.length };
  if (fixes?.length) f.fixes = fixes;
  return f;
}

// ---- structure

interface Validators {
  template: ValidateFunction;
  kind(defName: string): ValidateFunction | undefined;
}

let validators: Validators | undefined;

function compileValidators(): Validators {
  const ajv = createAjv();
  ajv.addSchema(templateSchema);
  // Parameters, list fields and constraints are unions of objects told apart by their kind key; ajv's errors
  // for a union name every branch. They are opaque in the lint schema and checked against the branch their
  // key selects.
  const lint = structuredClone(templateSchema) as Record<string, any>;
  lint.$id = LINT_SCHEMA_ID;
  for (const def of ['Parameter', 'FieldParameter', 'Constraint']) lint.$defs[def] = { type: 'object' };
  return {
    template: ajv.compile(lint),
    kind: (defName) => ajv.getSchema(`${TEMPLATE_SCHEMA_ID}#/$defs/${defName}`),
  };
}

const KIND_DEFS: Record<string, string> = {
  pool: 'PoolParameter', int: 'IntParameter', decimal: 'DecimalParameter', date: 'DateParameter', pattern: 'PatternParameter',
  list: 'ListParameter', value: 'ValueParameter', min: 'MinParameter', max: 'MaxParameter', sum: 'SumParameter',
  argmin: 'ArgminParameter', argmax: 'ArgmaxParameter', format: 'FormatParameter', upper: 'UpperParameter',
  lower: 'LowerParameter', pick: 'PickParameter', date_add: 'DateAddParameter',
};
const FIELD_KINDS = ['pool', 'int', 'decimal', 'date', 'pattern', 'value'];

function structureFindings(document: JsonDocument, value: Record<string, unknown>): Finding[] {
  validators ??= compileValidators();
  const v = validators;
  const findings: Finding[] = [];
  const map = (errors: ErrorObject[] | null | undefined, base: JsonPath) =>
    findings.push(...mapAjvErrors(document, errors ?? [], base).map((f) => ({ ...f, message: f.message.replace(/^the task\b/, 'the template') })));
  if (!v.template(value)) map(v.template.errors, []);
  const checkKind = (spec: unknown, path: JsonPath, allowed: string[]) => {
    if (!isObject(spec)) return; // the template schema reported the type
    const kind = Object.keys(spec).find((k) => allowed.includes(k));
    if (!kind) {
      const node = document.nodeAt(path);
      const keys = Object.keys(spec);
      // `integer` for `int`, `decimals` for `decimal`: the kind a longer word starts with counts as meant.
      const suggestion = keys.length === 1 ? (closest(keys[0]!, allowed) ?? allowed.find((k) => keys[0]!.startsWith(k))) : undefined;
      findings.push(templateFinding('template-invalid-parameter', node ? spanOf(node) : { offset: 0, length: 1 },
        `${describe(path)} has no kind: one of ${allowed.map((k) => `\`${k}\``).join(', ')}${suggestion ? ` (did you mean \`${suggestion}\`?)` : ''}`));
      return;
    }
    const validate = v.kind(KIND_DEFS[kind]!);
    if (validate && !validate(spec)) map(validate.errors, path);
    if (kind === 'list' && isObject(spec.list) && isObject(spec.list.fields)) {
      for (const [field, fieldSpec] of Object.entries(spec.list.fields)) checkKind(fieldSpec, [...path, 'list', 'fields', field], FIELD_KINDS);
    }
  };
  if (isObject(value.parameters)) {
    for (const [name, spec] of Object.entries(value.parameters)) checkKind(spec, ['parameters', name], Object.keys(KIND_DEFS));
  }
  if (Array.isArray(value.constraints)) {
    value.constraints.forEach((constraint, i) => {
      if (!isObject(constraint)) return;
      const kind = 'distinct' in constraint ? 'distinct' : 'ordered' in constraint ? 'ordered' : undefined;
      const node = document.nodeAt(['constraints', i]);
      if (!kind || Object.keys(constraint).length !== 1) {
        findings.push(templateFinding('template-invalid-parameter', node ? spanOf(node) : { offset: 0, length: 1 }, 'a constraint is `{ "distinct": [names] }` or `{ "ordered": [names] }`'));
        return;
      }
      const names = constraint[kind];
      if (!Array.isArray(names) || names.length < 2 || !names.every((n) => typeof n === 'string')) {
        const at = document.nodeAt(['constraints', i, kind]);
        findings.push(templateFinding('template-invalid-parameter', at ? spanOf(at) : { offset: 0, length: 1 }, `\`${kind}\` lists at least two parameter names`));
      }
    });
  }
  return findings;
}

// ---- parameter shapes: the JSON types a parameter (or a field of it) can take

type JsonType = 'string' | 'integer' | 'number' | 'boolean' | 'null' | 'array' | 'object';

interface Shape {
  /** Undefined: anything (the linter cannot tell, so it never complains). */
  types: Set<JsonType> | undefined;
  fields?: Map<string, Shape>;
  items?: Shape;
}

const ANY: Shape = { types: undefined };
const of = (...types: JsonType[]): Shape => ({ types: new Set(types) });

function union(shapes: Shape[]): Shape {
  if (shapes.length === 0) return ANY;
  if (shapes.some((s) => s.types === undefined)) return ANY;
  const types = new Set<JsonType>();
  const fields = new Map<string, Shape[]>();
  const items: Shape[] = [];
  for (const s of shapes) {
    s.types!.forEach((t) => types.add(t));
    s.fields?.forEach((f, k) => fields.set(k, [...(fields.get(k) ?? []), f]));
    if (s.items) items.push(s.items);
  }
  const out: Shape = { types };
  if (types.has('object')) out.fields = new Map([...fields].map(([k, list]) => [k, union(list)]));
  if (types.has('array')) out.items = items.length ? union(items) : ANY;
  return out;
}

function shapeOfJson(value: unknown): Shape {
  if (value === null) return of('null');
  if (typeof value === 'string') return of('string');
  if (typeof value === 'boolean') return of('boolean');
  if (typeof value === 'number') return of(Number.isInteger(value) ? 'integer' : 'number');
  if (Array.isArray(value)) return { types: new Set(['array']), items: value.length ? union(value.map(shapeOfJson)) : ANY };
  return { types: new Set(['object']), fields: new Map(Object.entries(value as object).map(([k, v]) => [k, shapeOfJson(v)])) };
}

type RefResult = { shape: Shape } | { missing: string };

function refShape(ref: Pick<PlaceholderRef, 'name' | 'path'>, shapes: (name: string) => Shape): RefResult {
  let shape = shapes(ref.name);
  for (const segment of ref.path) {
    if (shape.types === undefined) return { shape: ANY };
    if (shape.types.has('object') && shape.fields?.has(segment)) shape = shape.fields.get(segment)!;
    else if (shape.types.has('array') && /^\d+$/.test(segment)) shape = shape.items ?? ANY;
    else return { missing: segment };
  }
  return { shape };
}

class ShapeInference {
  private readonly cache = new Map<string, Shape>();
  private readonly active = new Set<string>();
  constructor(private readonly parameters: Record<string, unknown>) {}

  get = (name: string): Shape => {
    const cached = this.cache.get(name);
    if (cached) return cached;
    if (this.active.has(name) || !isObject(this.parameters[name])) return ANY;
    this.active.add(name);
    const shape = this.infer(this.parameters[name] as Record<string, unknown>);
    this.active.delete(name);
    this.cache.set(name, shape);
    return shape;
  };

  /** The shape of a JSON value with placeholders, once filled. */
  filled(value: unknown): Shape {
    if (typeof value === 'string') {
      const refs = findPlaceholders(value);
      const first = refs[0];
      if (first && first.whole && !first.malformed) {
        const r = refShape(first, this.get);
        return 'shape' in r ? r.shape : ANY;
      }
      return of('string');
    }
    if (Array.isArray(value)) return { types: new Set(['array']), items: value.length ? union(value.map((v) => this.filled(v))) : ANY };
    if (isObject(value)) return { types: new Set(['object']), fields: new Map(Object.entries(value).map(([k, v]) => [k, this.filled(v)])) };
    return shapeOfJson(value);
  }

  private numeric(operands: unknown, by: unknown): Shape {
    if (!Array.isArray(operands)) return of('number');
    const shapes = operands.map((o) => {
      let s = typeof o === 'string' ? this.filled(o) : shapeOfJson(o);
      if (s.types?.has('array')) s = s.items ?? ANY;
      if (typeof by === 'string' && s.types?.has('object')) s = s.fields?.get(by) ?? ANY;
      return s;
    });
    return shapes.every((s) => s.types !== undefined && [...s.types].every((t) => t === 'integer')) ? of('integer') : of('number');
  }

  private infer(spec: Record<string, unknown>): Shape {
    switch (parameterKind(spec)) {
      case 'pool':
        return Array.isArray(spec.pool) ? union(spec.pool.map(shapeOfJson)) : ANY;
      case 'int':
        return of('integer');
      case 'decimal':
        return of('number');
      case 'date':
      case 'pattern':
      case 'format':
      case 'upper':
      case 'lower':
      case 'date_add':
        return of('string');
      case 'list': {
        const list = spec.list;
        if (!isObject(list) || !isObject(list.fields)) return { types: new Set(['array']), items: ANY };
        const fields = new Map(Object.entries(list.fields).map(([k, f]) => [k, isObject(f) ? ('value' in f ? this.filled(f.value) : this.infer(f)) : ANY]));
        return { types: new Set(['array']), items: { types: new Set(['object']), fields } };
      }
      case 'value':
        return this.filled(spec.value);
      case 'min':
      case 'max':
      case 'sum': {
        const kind = parameterKind(spec)!;
        return this.numeric(spec[kind], spec.by);
      }
      case 'argmin':
      case 'argmax': {
        const list = this.filled(spec[parameterKind(spec)!]);
        return list.types?.has('array') ? (list.items ?? ANY) : ANY;
      }
      case 'pick': {
        // The sampler fills a literal pool's placeholders before it picks (sample.ts), so its shape is the filled one.
        const pool = this.filled(spec.pick);
        return pool.items ?? ANY;
      }
      default:
        return ANY;
    }
  }
}

// ---- schema positions: the JSON types a task position accepts

type Schema = Record<string, unknown>;

function resolveRef(schema: Schema, root: Schema): Schema {
  let s = schema;
  for (let i = 0; i < 20 && typeof s.$ref === 'string' && s.$ref.startsWith('#/'); i++) {
    let target: unknown = root;
    for (const part of s.$ref.slice(2).split('/')) target = isObject(target) ? target[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
    if (!isObject(target)) return {};
    s = target;
  }
  return s;
}

/** The subschemas that govern `path` below `schema` (several where the schema branches). */
function schemasAt(schema: Schema, path: JsonPath, root: Schema): Schema[] {
  let current = [resolveRef(schema, root)];
  for (const segment of path) {
    const next: Schema[] = [];
    const expand = (s: Schema) => {
      const r = resolveRef(s, root);
      const branches = [...((r.anyOf as Schema[]) ?? []), ...((r.oneOf as Schema[]) ?? []), ...((r.allOf as Schema[]) ?? [])];
      if (branches.length) branches.forEach(expand);
      if (typeof segment === 'number') {
        const prefix = r.prefixItems as Schema[] | undefined;
        if (prefix?.[segment]) next.push(prefix[segment]!);
        else if (isObject(r.items)) next.push(r.items);
      } else {
        const properties = r.properties as Record<string, Schema> | undefined;
        if (properties && Object.hasOwn(properties, segment)) return void next.push(properties[segment]!);
        let matched = false;
        for (const [pattern, sub] of Object.entries((r.patternProperties as Record<string, Schema>) ?? {})) {
          if (new RegExp(pattern, 'u').test(segment)) (next.push(sub), (matched = true));
        }
        if (!matched && isObject(r.additionalProperties)) next.push(r.additionalProperties);
      }
    };
    current.forEach(expand);
    current = next;
    if (current.length === 0) return [];
  }
  return current.map((s) => resolveRef(s, root));
}

/** The types the schemas accept; undefined when any would do (or nothing is known). */
function acceptedTypes(schemas: Schema[], root: Schema): Set<JsonType> | undefined {
  if (schemas.length === 0) return undefined;
  const out = new Set<JsonType>();
  for (const s of schemas) {
    const r = resolveRef(s, root);
    const branches = [...((r.anyOf as Schema[]) ?? []), ...((r.oneOf as Schema[]) ?? [])];
    if (branches.length) {
      const inner = acceptedTypes(branches, root);
      if (!inner) return undefined;
      inner.forEach((t) => out.add(t));
      continue;
    }
    const values = 'const' in r ? [r.const] : Array.isArray(r.enum) ? r.enum : undefined;
    if (values) {
      values.forEach((v) => shapeOfJson(v).types!.forEach((t) => out.add(t)));
      continue;
    }
    if (typeof r.type === 'string') out.add(r.type as JsonType);
    else if (Array.isArray(r.type)) r.type.forEach((t) => out.add(t as JsonType));
    else return undefined;
  }
  return out;
}

function expectedTypesAt(instance: Record<string, unknown>, path: JsonPath, registry: Registry): Set<JsonType> | undefined {
  const [first, second] = path;
  if (first === 'initial_state' && typeof second === 'string') {
    const schema = registry.get(second)?.server.state_schema;
    return schema ? acceptedTypes(schemasAt(schema, path.slice(2), schema), schema) : undefined;
  }
  if ((first === 'reference_solutions' || first === 'counterexamples') && path[3] === 'arguments' && path.length > 4) {
    const step = (instance[first] as unknown[][] | undefined)?.[path[1] as number]?.[path[2] as number];
    const tool = isObject(step) && typeof step.tool === 'string' ? registry.tool(step.tool) : undefined;
    const schema = tool?.declaration.inputSchema;
    return schema ? acceptedTypes(schemasAt(schema, path.slice(4), schema), schema) : undefined;
  }
  if (first === 'success_predicate') {
    let node: unknown = instance.success_predicate;
    for (let i = 1; i < path.length; i++) {
      const segment = path[i]!;
      if (segment === 'all' || segment === 'any' || segment === 'not' || typeof segment === 'number') {
        node = isObject(node) || Array.isArray(node) ? (node as Record<string | number, unknown>)[segment] : undefined;
        continue;
      }
      const schema = registry.predicate(segment)?.declaration.arguments;
      return schema ? acceptedTypes(schemasAt(schema, path.slice(i + 1), schema), schema) : undefined;
    }
    return undefined;
  }
  const root = taskSchema as Schema;
  const task = (root.$defs as Record<string, Schema>).Task!;
  return acceptedTypes(schemasAt(task, path, root), root);
}

function fits(shape: Shape, accepted: Set<JsonType> | undefined): { ok: true } | { ok: false; misfits: JsonType[] } {
  if (!accepted || !shape.types) return { ok: true };
  const misfits = [...shape.types].filter((t) => !accepted.has(t) && !(t === 'integer' && accepted.has('number')));
  return misfits.length ? { ok: false, misfits } : { ok: true };
}

// ---- the linter

export function lintTemplate(uri: string, text: string, registry: Registry): { diagnostics: Diagnostic[] } {
  return lintTemplateDocument(new JsonDocument(uri, text), registry);
}

/** `lintTemplate` on a document already parsed (as the language server keeps them). */
export function lintTemplateDocument(document: JsonDocument, registry: Registry): { diagnostics: Diagnostic[] } {
  const { uri, text } = document;
  const findings: Finding[] = [];
  let coveredUntil = -1;
  for (const problem of document.syntaxProblems) {
    if (problem.offset <= coveredUntil) continue;
    findings.push({ code: 'json-syntax', severity: 'error', message: problem.message.replace('task files', 'template files'), offset: problem.offset, length: problem.length });
    coveredUntil = problem.offset + problem.length;
  }
  const value = document.value();
  if (findings.length === 0) {
    if (isObject(value)) new TemplateChecker(document, value, registry, findings).run();
    else findings.push({ code: 'invalid-type', severity: 'error', message: 'a template file must hold one JSON object', offset: 0, length: text.length });
  }
  const seen = new Set<string>();
  const diagnostics = findings
    .filter((f) => {
      const key = `${f.code}:${f.offset}:${f.length}:${f.message}`;
      return !seen.has(key) && (seen.add(key), true);
    })
    .map((f) => ({ ...f, uri, start: document.positionAt(f.offset), end: document.positionAt(f.offset + f.length) }))
    .sort(compareDiagnostics);
  return { diagnostics };
}

function spanOf(node: Node): Span {
  return { offset: node.offset, length: node.length };
}

function describe(path: JsonPath): string {
  return `\`${path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('')}\``;
}

/** Offset in the document of the decoded string index `index` of the string token at `node`. */
export function rawOffset(text: string, node: Node, index: number): number {
  let at = node.offset + 1;
  for (let decoded = 0; decoded < index && at < node.offset + node.length - 1; decoded++) {
    if (text[at] === '\\') at += text[at + 1] === 'u' ? 6 : 2;
    else at += 1;
  }
  return at;
}

class TemplateChecker {
  private readonly parameters: Record<string, unknown>;
  private readonly shapes: ShapeInference;
  /** Template ranges that already carry a placeholder-type finding: sample findings there would repeat it. */
  private readonly typed = new Set<string>();

  constructor(
    private readonly document: JsonDocument,
    private readonly value: Record<string, unknown>,
    private readonly registry: Registry,
    private readonly findings: Finding[],
  ) {
    this.parameters = isObject(value.parameters) ? value.parameters : {};
    this.shapes = new ShapeInference(this.parameters);
  }

  private add(code: TemplateRuleCode, span: Span, message: string, fixes?: Fix[]): void {
    this.findings.push(templateFinding(code, span, message, fixes));
  }

  private spanAt(path: JsonPath, key = false): Span {
    const node = key ? this.document.keyNodeAt(path) : this.document.nodeAt(path);
    if (node) return spanOf(node);
    // the nearest ancestor that exists
    for (let n = path.length - 1; n >= 0; n--) {
      const parent = this.document.nodeAt(path.slice(0, n));
      if (parent) return spanOf(parent);
    }
    return { offset: 0, length: 1 };
  }

  /** The exact range of `[index, index + length)` inside the string (or key) at `path`. */
  private spanInString(path: JsonPath, key: boolean, index: number, length: number): Span {
    const node = key ? this.document.keyNodeAt(path) : this.document.nodeAt(path);
    if (!node || node.type !== 'string') return this.spanAt(path, key);
    const start = rawOffset(this.document.text, node, index);
    return { offset: start, length: rawOffset(this.document.text, node, index + length) - start };
  }

  run(): void {
    this.findings.push(...structureFindings(this.document, this.value));
    const references = this.checkPlaceholders();
    this.checkUnused(references);
    this.checkGrammar();
    this.checkGoalSource();
    // Each well-formed parameter is compiled on its own, so a broken one elsewhere hides nothing.
    const wellFormed: Record<string, ParameterSpec> = {};
    for (const [name, spec] of Object.entries(this.parameters)) {
      const parsed = ParameterSpec.safeParse(spec);
      if (parsed.success) wellFormed[name] = parsed.data;
    }
    const maxTries = typeof this.value.max_tries === 'number' ? this.value.max_tries : undefined;
    for (const error of parameterProblems(wellFormed, maxTries)) this.placeTemplateError(error);
    // Sampling needs a structurally valid template; the structure findings above say what to fix first. A
    // sample of a template with placeholder errors would only fail on them again.
    const parsed = TemplateSchema.safeParse(this.value);
    if (parsed.success && !this.findings.some((f) => f.severity === 'error')) this.checkSample(parsed.data);
  }

  /** Every placeholder the template writes, where a parameter may be named: [where, ref]. */
  private placeholderSites(): { path: JsonPath; key: boolean; ref: PlaceholderRef; inTask: boolean; owner?: string }[] {
    const sites: { path: JsonPath; key: boolean; ref: PlaceholderRef; inTask: boolean; owner?: string }[] = [];
    if (isObject(this.value.task)) for (const s of collectPlaceholders(this.value.task, ['task'])) sites.push({ ...s, inTask: true });
    const grammar = this.value.grammar;
    if (isObject(grammar) && isObject(grammar.productions)) {
      for (const [name, alternatives] of Object.entries(grammar.productions)) {
        if (!Array.isArray(alternatives)) continue;
        alternatives.forEach((alternative, i) => {
          const path: JsonPath = typeof alternative === 'string' ? ['grammar', 'productions', name, i] : ['grammar', 'productions', name, i, 'text'];
          const text = typeof alternative === 'string' ? alternative : isObject(alternative) && typeof alternative.text === 'string' ? alternative.text : undefined;
          if (text !== undefined) for (const ref of findPlaceholders(text)) sites.push({ path, key: false, ref: { ...ref, whole: false }, inTask: false });
        });
      }
    }
    for (const [name, spec] of Object.entries(this.parameters)) {
      if (!isObject(spec)) continue;
      const kind = parameterKind(spec);
      if (kind === 'pool' || kind === 'pattern' || kind === 'int' || kind === 'decimal' || kind === 'date') continue;
      if (kind === 'list') {
        const fields = isObject(spec.list) && isObject(spec.list.fields) ? spec.list.fields : {};
        for (const [field, fieldSpec] of Object.entries(fields)) {
          if (isObject(fieldSpec) && 'value' in fieldSpec) {
            for (const s of collectPlaceholders(fieldSpec.value, ['parameters', name, 'list', 'fields', field, 'value'])) sites.push({ ...s, inTask: false, owner: name });
          }
        }
        continue;
      }
      for (const s of collectPlaceholders(spec, ['parameters', name])) sites.push({ ...s, inTask: false, owner: name });
    }
    return sites;
  }

  /** Unknown names and fields, malformed placeholders, types; returns who references whom. */
  private checkPlaceholders(): { roots: Set<string>; edges: Map<string, Set<string>> } {
    const names = Object.keys(this.parameters);
    const roots = new Set<string>();
    const edges = new Map<string, Set<string>>();
    for (const site of this.placeholderSites()) {
      const { ref } = site;
      const span = this.spanInString(site.path, site.key, ref.index, ref.length);
      if (ref.malformed) {
        this.add('template-placeholder-syntax', span, `\`${this.document.text.slice(span.offset, span.offset + span.length)}\` is not a placeholder: write {{name}} or {{name.field}} with a parameter name`);
        continue;
      }
      if (!Object.hasOwn(this.parameters, ref.name)) {
        const suggestion = closest(ref.name, names);
        const fixes: Fix[] = suggestion ? [{ title: `Change to {{${suggestion}}}`, edits: [{ ...span, newText: `{{${[suggestion, ...ref.path].join('.')}}}` }] }] : [];
        this.add('template-unknown-parameter', span, `{{${ref.name}}} names no parameter${suggestion ? `: did you mean {{${suggestion}}}?` : names.length ? ` (parameters: ${names.join(', ')})` : ''}`, fixes);
        continue;
      }
      if (site.owner === undefined) roots.add(ref.name);
      else edges.set(site.owner, (edges.get(site.owner) ?? new Set()).add(ref.name));
      const resolved = refShape(ref, this.shapes.get);
      if ('missing' in resolved) {
        this.add('template-unknown-parameter', span, `{{${[ref.name, ...ref.path].join('.')}}}: the value of \`${ref.name}\` has no \`${resolved.missing}\``);
        continue;
      }
      const shape = resolved.shape;
      const label = `{{${[ref.name, ...ref.path].join('.')}}}`;
      if (!ref.whole) {
        const structured = shape.types && [...shape.types].filter((t) => t === 'object' || t === 'array');
        if (structured?.length && structured.length === shape.types!.size) {
          this.add('template-placeholder-type', span, `${label} is ${structured.includes('array') ? 'an array' : 'an object'} and cannot be written into text: make it the whole string to place it, or name a field (${label.slice(0, -2)}.field}})`);
          this.typed.add(`${span.offset}:${span.length}`);
        }
        continue;
      }
      if (!site.inTask) continue;
      // A whole-string placeholder in the task keeps its type: it must fit the schema at its position. The
      // position is read off the template itself (keys with placeholders stand for some text), so the check
      // works while other parts of the template are still broken.
      const at = site.path.slice(1).map((segment) => (typeof segment === 'string' && segment.includes('{{') ? segment.replace(/\{\{.*?\}\}/g, 'x') : segment));
      const accepted = expectedTypesAt(this.value.task as Record<string, unknown>, at, this.registry);
      const verdict = fits(shape, accepted);
      if (!verdict.ok) {
        const wanted = [...accepted!].map((t) => (/^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`)).join(' or ');
        const hint = accepted!.has('string') ? `; to place it as text, derive a string parameter with { "format": "${label}" }` : '';
        this.add('template-placeholder-type', span, `${label} is the whole string, so it keeps its type (${[...shape.types!].join(' or ')}), but ${describe(at)} must be ${wanted}${hint}`);
        // The sample's own finding lands on the whole string node: the same problem, said once.
        const node = this.spanAt(site.path);
        this.typed.add(`${node.offset}:${node.length}`);
      }
    }
    return { roots, edges };
  }

  private checkUnused({ roots, edges }: { roots: Set<string>; edges: Map<string, Set<string>> }): void {
    const used = new Set<string>();
    const visit = (name: string) => {
      if (used.has(name)) return;
      used.add(name);
      edges.get(name)?.forEach(visit);
    };
    roots.forEach(visit);
    for (const name of Object.keys(this.parameters)) {
      if (used.has(name)) continue;
      const users = [...edges].filter(([, deps]) => deps.has(name)).map(([owner]) => owner);
      const why = users.length ? `only \`${users.join('`, `')}\` use${users.length === 1 ? 's' : ''} it, and ${users.length === 1 ? 'that is' : 'those are'} unused too` : 'no placeholder in the task or the grammar names it';
      this.add('template-unused-parameter', this.spanAt(['parameters', name], true), `parameter \`${name}\` is never used: ${why}`);
    }
  }

  private checkGrammar(): void {
    const grammar = this.value.grammar;
    if (!isObject(grammar) || typeof grammar.start !== 'string' || !isObject(grammar.productions)) return;
    const productions = grammar.productions;
    if (!Object.values(productions).every((a) => Array.isArray(a) && a.every((x) => typeof x === 'string' || (isObject(x) && typeof x.text === 'string')))) return;
    const typed = grammar as Template['grammar'] & object;
    const names = Object.keys(productions);
    for (const problem of grammarProblems(typed)) {
      if (problem.kind === 'undefined-start') {
        const suggestion = closest(typed.start, names);
        const span = this.spanAt(['grammar', 'start']);
        this.add('template-undefined-nonterminal', span, problem.message, suggestion ? [{ title: `Change to \`${suggestion}\``, edits: [{ ...span, newText: JSON.stringify(suggestion) }] }] : undefined);
        continue;
      }
      const alternative = typed.productions[problem.production!]![problem.alternative!]!;
      const path: JsonPath = ['grammar', 'productions', problem.production!, problem.alternative!, ...(typeof alternative === 'string' ? [] : ['text'])];
      const span = this.spanInString(path, false, problem.ref!.index, problem.ref!.length);
      if (problem.kind === 'cycle' || problem.kind === 'too-deep') {
        // A chain past the depth limit is refused like a loop: both would never finish expanding sensibly.
        this.add('template-grammar-cycle', span, problem.message);
      } else {
        const suggestion = closest(problem.ref!.name, names);
        this.add('template-undefined-nonterminal', span, `${problem.message}${suggestion ? `: did you mean <${suggestion}>?` : ''}`, suggestion ? [{ title: `Change to <${suggestion}>`, edits: [{ ...span, newText: `<${suggestion}>` }] }] : undefined);
      }
    }
    if (Object.hasOwn(productions, typed.start)) {
      for (const name of unreachableProductions(typed)) {
        this.add('template-unreachable-production', this.spanAt(['grammar', 'productions', name], true), `production \`${name}\` is never used: \`${typed.start}\` does not reach it`);
      }
    }
  }

  private checkGoalSource(): void {
    const task = this.value.task;
    if (!isObject(task)) return;
    const hasGrammar = 'grammar' in this.value;
    if (hasGrammar && 'goal' in task) {
      this.add('template-goal', this.spanAt(['task', 'goal'], true), 'the template has a `grammar`, which writes the goal: remove `task.goal` (or the grammar)');
    } else if (!hasGrammar && !('goal' in task)) {
      this.add('template-goal', this.spanAt(['task'], true), 'no goal: add a `grammar` (many phrasings) or a `task.goal` string with placeholders');
    }
  }

  private placeTemplateError(error: TemplateError): void {
    const code: TemplateRuleCode = error instanceof UnsatisfiableError ? 'template-unsatisfiable' : 'template-invalid-parameter';
    const key = error.path.length === 2 && error.path[0] === 'parameters';
    const span = error.inString ? this.spanInString(error.path, false, error.inString.index, error.inString.length) : this.spanAt(error.path, key);
    this.add(code, span, error.message);
  }

  private checkSample(template: Template): void {
    let compiled;
    const place = (error: TemplateError) => this.placeTemplateError(error);
    try {
      compiled = compileTemplate(template);
    } catch (error) {
      if (error instanceof TemplateError) return place(error);
      throw error;
    }
    let built;
    const trace: PathTrace = new Map();
    try {
      sampleVariant(compiled, LINT_SAMPLE_SEED, trace);
      built = buildVariant(compiled, LINT_SAMPLE_SEED);
    } catch (error) {
      if (error instanceof TemplateError) return place(error);
      throw error;
    }
    const used = taskNamespaces(built.task).sort();
    if (JSON.stringify(used) !== JSON.stringify([...template.namespaces].sort())) {
      this.add('template-namespaces', this.spanAt(['namespaces']), `\`namespaces\` lists ${template.namespaces.join(', ')} but the task's server is ${used.join(', ')}`);
    }
    const result = lintTask(`${this.document.uri}#sample`, built.text, this.registry);
    for (const d of result.diagnostics) this.placeSampleFinding(result.document, d, trace, template);
  }

  /** A finding of the task linter on the sample, placed where the template wrote the value. */
  private placeSampleFinding(sample: JsonDocument, d: Diagnostic, trace: PathTrace, template: Template): void {
    const root = sample.root;
    const node = root ? findNodeAtOffset(root, d.offset, true) : undefined;
    let path: JsonPath = node ? getNodePath(node) : [];
    const onKey = Boolean(node && node.parent?.type === 'property' && node.parent.children?.[0] === node);
    if (node && node.type === 'property') path = getNodePath(node.children![1] ?? node);
    let target: JsonPath | undefined;
    let exact = false;
    if (path[0] === 'id' || path[0] === 'template' || path[0] === '$schema') target = ['id'];
    else if (path[0] === 'goal' && template.grammar) target = ['grammar', 'start'];
    else {
      for (let n = path.length; n >= 0 && !target; n--) {
        const from = trace.get(JSON.stringify(path.slice(0, n)));
        if (from) (target = from), (exact = n === path.length);
      }
    }
    const span = this.spanAt(target ?? ['task'], onKey && exact);
    if (this.typed.has(`${span.offset}:${span.length}`)) return;
    const where = exact || !target ? '' : ` (at ${describe(path)} of the sample)`;
    this.findings.push({ code: d.code, severity: d.severity, message: `in a sample (seed ${LINT_SAMPLE_SEED}): ${d.message}${where}`, offset: span.offset, length: span.length });
  }
}
