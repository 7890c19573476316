/**
 * Structural validation of a task against schemas/task.schema.json with a compiled ajv validator, and the
 * mapping of each ajv error onto the exact range: an unknown key on the key, a wrong value on the value, a
 * missing key on the object's own key (or its opening brace).
 *
 * Predicates and solution steps are unions whose branches are all objects; ajv's errors for them name every
 * branch at once, which helps nobody. The linter checks the predicate tree itself (predicates/tree.ts) and
 * validates a solution step against the one branch its keys select, so here those positions are opaque.
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import taskSchema from '../../../schemas/task.schema.json';
import { createAjv } from '../ajv.ts';
import { finding, type Finding, type Fix, type RuleCode } from './diagnostics.ts';
import type { JsonDocument } from './document.ts';
import { TASK_SCHEMA_ID } from './json-schemas.ts';
import { closest, quoteList } from './suggest.ts';
import type { JsonPath } from '../json-values.ts';

const LINT_SCHEMA_ID = 'https://mcpbench.dev/schemas/task.lint.schema.json';

interface Validators {
  task: ValidateFunction;
  toolCall: ValidateFunction;
  finalAnswer: ValidateFunction;
}

let validators: Validators | undefined;

function compileValidators(): Validators {
  // Quick: the task schema is emitted from the zod model and compiled in full by the tests.
  const ajv = createAjv({ quick: true });
  ajv.addSchema(taskSchema);
  const lintSchema = structuredClone(taskSchema) as Record<string, any>;
  lintSchema.$id = LINT_SCHEMA_ID;
  lintSchema.$defs.Predicate = {};
  lintSchema.$defs.SolutionStep = { type: 'object' };
  return {
    task: ajv.compile(lintSchema),
    toolCall: ajv.getSchema(`${TASK_SCHEMA_ID}#/$defs/ToolCall`)!,
    finalAnswer: ajv.getSchema(`${TASK_SCHEMA_ID}#/$defs/FinalAnswer`)!,
  };
}

/** Structural findings for a parsed task value. */
export function checkTaskStructure(document: JsonDocument, value: unknown): Finding[] {
  validators ??= compileValidators();
  const findings: Finding[] = [];
  if (!validators.task(value)) findings.push(...mapAjvErrors(document, validators.task.errors ?? [], []));
  if (isObject(value)) {
    for (const key of ['reference_solutions', 'counterexamples'] as const) {
      const sequences = value[key];
      if (!Array.isArray(sequences)) continue;
      sequences.forEach((sequence, i) => {
        if (!Array.isArray(sequence)) return;
        sequence.forEach((step, j) => {
          if (!isObject(step)) return; // the task schema already reported the type
          const validate = 'answer' in step && !('tool' in step) ? validators!.finalAnswer : validators!.toolCall;
          if (!validate(step)) findings.push(...mapAjvErrors(document, validate.errors ?? [], [key, i, j]));
        });
      });
    }
  }
  return findings;
}

/**
 * Maps ajv errors (instance paths relative to `base`) onto findings at their exact ranges. With `code`, every
 * finding gets that rule code (nested schemas: state, tool and predicate arguments); without, the code
 * says what kind of structural problem it is.
 */
export function mapAjvErrors(document: JsonDocument, errors: ErrorObject[], base: JsonPath, code?: RuleCode, context?: string): Finding[] {
  const findings: Finding[] = [];
  for (const error of collapseAlternatives(errors)) {
    const path = [...base, ...pointerToPath(document, base, error.instancePath)];
    const f = mapError(document, error, path);
    if (!f) continue;
    if (code) f.code = code;
    if (context) f.message = `${context}: ${f.message}`;
    findings.push(f);
  }
  return findings;
}


/**
 * For a failed `anyOf`, keeps the errors of the branch whose type matched (its errors lie deeper than the
 * anyOf's own position, or none of them is about the type); when no branch's type matched, replaces them all by one type error naming the
 * alternatives.
 */
function collapseAlternatives(errors: ErrorObject[]): ErrorObject[] {
  let result = errors;
  for (const anyOf of errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf')) {
    const prefix = `${anyOf.schemaPath}/`;
    const branchErrors = result.filter((e) => e.schemaPath.startsWith(prefix));
    if (branchErrors.length === 0) continue; // oneOf matched several branches: its own message says so
    const byBranch = new Map<string, ErrorObject[]>();
    for (const e of branchErrors) {
      const branch = e.schemaPath.slice(prefix.length).split('/')[0]!;
      byBranch.set(branch, [...(byBranch.get(branch) ?? []), e]);
    }
    // The branch the value's type fits: its errors lie deeper, or (a number over a maximum) none is a type error.
    const matched =
      [...byBranch.values()].find((list) => list.every((e) => e.instancePath.length > anyOf.instancePath.length)) ??
      [...byBranch.values()].find((list) => list.every((e) => e.keyword !== 'type' && e.keyword !== 'anyOf' && e.keyword !== 'oneOf'));
    result = result.filter((e) => e !== anyOf && !branchErrors.includes(e));
    if (matched) {
      result.push(...matched);
    } else {
      const types = [...new Set((anyOf.schema as Record<string, unknown>[]).map(describeSchemaType))];
      result.push({ ...anyOf, keyword: 'type', params: { type: types }, message: `must be ${types.join(' or ')}` });
    }
  }
  return result;
}

function describeSchemaType(schema: Record<string, unknown>): string {
  const type = schema.type;
  if (type === 'array') return 'an array';
  if (type === 'object') return 'an object';
  if (type === 'integer') return 'an integer';
  return typeof type === 'string' ? `a ${type}` : 'a value of another shape';
}

function mapError(document: JsonDocument, error: ErrorObject, path: JsonPath): Finding | undefined {
  const where = describePath(path);
  const node = document.nodeAt(path);
  const valueSpan = node ? { offset: node.offset, length: node.length } : { offset: 0, length: 1 };
  switch (error.keyword) {
    case 'additionalProperties': {
      const key = String(error.params.additionalProperty);
      const keyNode = document.keyNodeAt([...path, key]);
      const allowed = Object.keys((error.parentSchema as { properties?: object })?.properties ?? {}).filter((k) => k !== '$schema');
      const suggestion = closest(key, allowed);
      const span = keyNode ? { offset: keyNode.offset, length: keyNode.length } : valueSpan;
      const fixes: Fix[] = suggestion && keyNode ? [{ title: `Rename to \`${suggestion}\``, edits: [{ ...span, newText: JSON.stringify(suggestion) }] }] : [];
      const hint = suggestion ? `did you mean \`${suggestion}\`?` : `allowed keys: ${quoteList(allowed)}`;
      return finding('unknown-key', span, `unknown key \`${key}\` in ${where}: ${hint}`, fixes);
    }
    case 'required': {
      const missing = String(error.params.missingProperty);
      const keyNode = path.length ? document.keyNodeAt(path) : undefined;
      const span = keyNode ? { offset: keyNode.offset, length: keyNode.length } : { offset: valueSpan.offset, length: 1 };
      return finding('missing-key', span, `${where} is missing the required key \`${missing}\``);
    }
    case 'type': {
      const expected = Array.isArray(error.params.type) ? error.params.type.join(' or ') : withArticle(String(error.params.type));
      return finding('invalid-type', valueSpan, `${where} must be ${expected}, not ${describeValue(error.data)}`);
    }
    case 'enum': {
      const allowed = (error.params.allowedValues as unknown[]).map(String);
      const suggestion = typeof error.data === 'string' ? closest(error.data, allowed) : undefined;
      const fixes: Fix[] = suggestion ? [{ title: `Change to \`${suggestion}\``, edits: [{ ...valueSpan, newText: JSON.stringify(suggestion) }] }] : [];
      const hint = suggestion ? ` (did you mean \`${suggestion}\`?)` : '';
      return finding('invalid-value', valueSpan, `${where} must be one of ${quoteList(allowed)}${hint}`, fixes);
    }
    case 'pattern': {
      // A schema may say what its pattern means (`x-pattern-help`); a key checked by `propertyNames` is marked on the key.
      const help = (error.parentSchema as { 'x-pattern-help'?: unknown } | undefined)?.['x-pattern-help'];
      const says = typeof help === 'string' ? `must be ${help}` : patternHelp(String(error.params.pattern));
      if (error.propertyName !== undefined) {
        const keyNode = document.keyNodeAt([...path, error.propertyName]);
        return finding('invalid-value', keyNode ? { offset: keyNode.offset, length: keyNode.length } : valueSpan, `key ${JSON.stringify(error.propertyName)} of ${where} ${says}`);
      }
      return finding('invalid-value', valueSpan, `${where} ${says}, not ${describeValue(error.data)}`);
    }
    case 'propertyNames':
      // Reported by the failing key's own error (above).
      return undefined;
    case 'minItems':
      return finding('invalid-value', valueSpan, `${where} must not be empty (at least ${error.params.limit} item${error.params.limit === 1 ? '' : 's'})`);
    case 'minLength':
      return finding('invalid-value', valueSpan, `${where} must not be empty`);
    default:
      return finding('invalid-value', valueSpan, `${where} ${error.message ?? 'is invalid'}`);
  }
}

function patternHelp(pattern: string): string {
  if (pattern.includes('\\.')) return 'must be a qualified name `<namespace>.<name>` (for example `filesystem.move_file`)';
  if (pattern.startsWith('^[a-z0-9]')) return 'must be lower-case letters, digits, `.`, `_` or `-`, starting with a letter or digit';
  if (pattern.startsWith('^[a-z]')) return 'must be a namespace: lower-case letters, digits and `_`';
  return `must match the pattern ${pattern}`;
}

function withArticle(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 37)}...` : value)}`;
  if (typeof value === 'number') return Number.isInteger(value) ? `the integer ${value}` : `the number ${value}`;
  return `the ${typeof value} ${String(value)}`;
}

/** `["reference_solutions", 0, 1, "tool"]` → "`reference_solutions[0][1].tool`"; the root → "the task". */
export function describePath(path: JsonPath): string {
  if (path.length === 0) return 'the task';
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out ? (/^[A-Za-z_$][\w$]*$/.test(segment) ? `.${segment}` : `[${JSON.stringify(segment)}]`) : segment;
  }
  return `\`${out}\``;
}

/** A JSON pointer relative to `base` → path segments, numbers where the document has an array. */
function pointerToPath(document: JsonDocument, base: JsonPath, pointer: string): JsonPath {
  if (!pointer) return [];
  const path: JsonPath = [];
  for (const raw of pointer.slice(1).split('/')) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    const parent = document.nodeAt([...base, ...path]);
    path.push(parent?.type === 'array' && /^\d+$/.test(segment) ? Number(segment) : segment);
  }
  return path;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
