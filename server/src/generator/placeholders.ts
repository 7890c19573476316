/**
 * `{{name}}` placeholders: finding them (with their exact place in the string, for the linter) and filling
 * them in. The rule every part of a template follows: a placeholder that is the whole string is replaced by
 * the parameter's value with its JSON type; anywhere else (inside a longer string, in an object key, in a
 * grammar alternative) the value is interpolated as text, and only scalars can be.
 */
import type { JsonPath } from '../json-values.ts';
import { McpbenchError } from '../errors.ts';

export interface PlaceholderRef {
  /** The parameter named. */
  name: string;
  /** Field names or indexes after the name: `{{route.origin}}` → ['origin']. */
  path: string[];
  /** Index of `{{` in the (decoded) string. */
  index: number;
  /** Length up to and including `}}`. */
  length: number;
  /** The placeholder is the whole string. */
  whole: boolean;
  /** Set when the text between the braces is not a name: `{{ 1x }}`. */
  malformed?: true;
}

const PLACEHOLDER = /\{\{(.*?)\}\}/g;
const REFERENCE = /^\s*([A-Za-z_][A-Za-z0-9_]*)((?:\.[A-Za-z0-9_]+)*)\s*$/;

export function findPlaceholders(text: string): PlaceholderRef[] {
  if (!text.includes('{{')) return [];
  const refs: PlaceholderRef[] = [];
  for (const match of text.matchAll(PLACEHOLDER)) {
    const index = match.index;
    const whole = index === 0 && match[0].length === text.length;
    const inner = REFERENCE.exec(match[1]!);
    if (!inner) {
      refs.push({ name: match[1]!.trim(), path: [], index, length: match[0].length, whole, malformed: true });
      continue;
    }
    refs.push({ name: inner[1]!, path: inner[2] ? inner[2].slice(1).split('.') : [], index, length: match[0].length, whole });
  }
  return refs;
}

/** Raised while filling placeholders: the template (not the sample) is wrong. */
export class PlaceholderError extends McpbenchError {
  static override readonly code: string = 'template-placeholder';
}

/** The values a template's placeholders resolve against. */
export type Values = ReadonlyMap<string, unknown>;

export function resolveRef(ref: Pick<PlaceholderRef, 'name' | 'path'>, values: Values): unknown {
  if (!values.has(ref.name)) throw new PlaceholderError(`{{${ref.name}}} names no parameter`);
  let value = values.get(ref.name);
  for (const segment of ref.path) {
    if (Array.isArray(value) && /^\d+$/.test(segment)) value = value[Number(segment)];
    else if (value !== null && typeof value === 'object' && !Array.isArray(value) && Object.hasOwn(value, segment)) value = (value as Record<string, unknown>)[segment];
    else throw new PlaceholderError(`{{${[ref.name, ...ref.path].join('.')}}}: the value has no \`${segment}\``);
  }
  return value;
}

/** A value as text inside a string or a key. */
export function asText(value: unknown, what: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value === null) return 'null';
  throw new PlaceholderError(`${what} is ${Array.isArray(value) ? 'an array' : 'an object'}: only strings, numbers and booleans can be written into text`);
}

/** Fills a string: a whole-string placeholder keeps its value's type, otherwise the result is text. */
export function fillString(text: string, values: Values): unknown {
  const refs = findPlaceholders(text);
  if (refs.length === 0) return text;
  const first = refs[0]!;
  if (first.whole && !first.malformed) {
    // A copy: tasks must never share structure with the parameter values (or each other).
    const value = resolveRef(first, values);
    return value !== null && typeof value === 'object' ? structuredClone(value) : value;
  }
  return interpolate(text, refs, values);
}

/** Fills a string as text, whatever its placeholders hold. */
export function fillText(text: string, values: Values): string {
  const refs = findPlaceholders(text);
  return refs.length === 0 ? text : interpolate(text, refs, values);
}

function interpolate(text: string, refs: PlaceholderRef[], values: Values): string {
  let out = '';
  let at = 0;
  for (const ref of refs) {
    if (ref.malformed) throw new PlaceholderError(`{{${ref.name}}} is not a placeholder: write {{name}} or {{name.field}}`);
    out += text.slice(at, ref.index) + asText(resolveRef(ref, values), `{{${[ref.name, ...ref.path].join('.')}}}`);
    at = ref.index + ref.length;
  }
  return out + text.slice(at);
}

/** instance path (JSON of the path) → the template path it came from; filled by `fill` when asked. */
export type PathTrace = Map<string, JsonPath>;

/**
 * Fills every string and key of a JSON value. With `trace`, records for each node of the result the path of
 * the template node it came from (keys change, indexes do not), so findings on a sample can be placed back in
 * the template.
 */
export function fill(value: unknown, values: Values, trace?: { map: PathTrace; from: JsonPath; to: JsonPath }): unknown {
  if (trace) trace.map.set(JSON.stringify(trace.to), trace.from);
  if (typeof value === 'string') return fillString(value, values);
  if (Array.isArray(value)) {
    return value.map((item, i) => fill(item, values, trace && { map: trace.map, from: [...trace.from, i], to: [...trace.to, i] }));
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value)) {
      const filledKey = fillText(key, values);
      if (Object.hasOwn(out, filledKey)) throw new PlaceholderError(`two keys become "${filledKey}" (from ${JSON.stringify(key)}): keep them apart with a \`distinct\` constraint`);
      out[filledKey] = fill(child, values, trace && { map: trace.map, from: [...trace.from, key], to: [...trace.to, filledKey] });
    }
    return out;
  }
  return value;
}

/** Every placeholder in a JSON value's strings and keys, with the path of the string (keys: `key: true`). */
export function collectPlaceholders(value: unknown, path: JsonPath = []): { path: JsonPath; key: boolean; text: string; ref: PlaceholderRef }[] {
  const out: { path: JsonPath; key: boolean; text: string; ref: PlaceholderRef }[] = [];
  const visit = (v: unknown, p: JsonPath) => {
    if (typeof v === 'string') for (const ref of findPlaceholders(v)) out.push({ path: p, key: false, text: v, ref });
    else if (Array.isArray(v)) v.forEach((item, i) => visit(item, [...p, i]));
    else if (v !== null && typeof v === 'object') {
      for (const [key, child] of Object.entries(v)) {
        for (const ref of findPlaceholders(key)) out.push({ path: [...p, key], key: true, text: key, ref: { ...ref, whole: false } });
        visit(child, [...p, key]);
      }
    }
  };
  visit(value, path);
  return out;
}
