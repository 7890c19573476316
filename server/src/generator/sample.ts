/**
 * Sampling one variant of a template: parameters drawn and derived in dependency order, constraints met by
 * rejection (a bounded number of redraws, then an error naming the constraint), the goal expanded from the
 * grammar, and the task body filled. Everything comes from one seeded generator per variant, so a variant's
 * seed alone reproduces it.
 */
import canonicalize from 'canonicalize';
import { TaskSchema } from '../tasks/model.ts';
import { DEFAULT_DATE_FORMAT, formatDay, parseIsoDay } from './dates.ts';
import { compileGrammar, GrammarError, type CompiledGrammar } from './grammar.ts';
import { DERIVED_KINDS, MAX_LIST_LENGTH, PARAMETER_KINDS, type Constraint, type FieldParameter, type ParameterKind, type ParameterSpec, type Template } from './model.ts';
import { compilePattern, PatternError, type CompiledPattern } from './pattern.ts';
import { collectPlaceholders, fill, fillString, fillText, findPlaceholders, PlaceholderError, type PathTrace } from './placeholders.ts';
import { createRandom, type Random } from './random.ts';
import type { JsonPath } from '../json-values.ts';
import { McpbenchError } from '../errors.ts';

export const DEFAULT_MAX_TRIES = 1000;

/** A mistake in the template itself, at a path of the template document. */
export class TemplateError extends McpbenchError {
  static override readonly code: string = 'template';
  constructor(
    message: string,
    readonly path: JsonPath,
    /** The part of the string at `path` that is wrong (a pattern's bad character). */
    readonly inString?: { index: number; length: number },
  ) {
    super(message);
  }
}

/** A constraint that redrawing could not meet. */
export class UnsatisfiableError extends TemplateError {
  static override readonly code: string = 'template-unsatisfiable';
}

/** The kind of a parameter: its first key that names a kind. */
export function parameterKind(spec: object): ParameterKind | undefined {
  return Object.keys(spec).find((k): k is ParameterKind => Object.hasOwn(PARAMETER_KINDS, k));
}

interface Context {
  values: Map<string, unknown>;
  /** Date-valued parameters (drawn dates and `date_add`) → day number and format, for `date_add` and `ordered`. */
  days: Map<string, { day: number; format: string }>;
}

type Sampler = (random: Random, context: Context) => unknown;

class Rejected {
  constructor(readonly constraint: number) {}
}

export interface CompiledTemplate {
  template: Template;
  /** Parameters in evaluation order (dependencies first, otherwise declaration order). */
  order: string[];
  maxTries: number;
  grammar: CompiledGrammar | undefined;
  samplers: Map<string, Sampler>;
  /** Parameter → constraints that become checkable once it is computed. */
  checksAfter: Map<string, number[]>;
}

/** The parameters a spec refers to through placeholders. */
export function specDependencies(spec: ParameterSpec): string[] {
  const kind = parameterKind(spec);
  const names = new Set<string>();
  const add = (value: unknown) => {
    for (const { ref } of collectPlaceholders(value)) if (!ref.malformed) names.add(ref.name);
  };
  const s = spec as Record<string, unknown>;
  switch (kind) {
    case 'list':
      for (const field of Object.values((spec as { list: { fields: Record<string, FieldParameter> } }).list.fields)) {
        if ('value' in field) add(field.value);
      }
      break;
    case 'pool':
    case 'int':
    case 'decimal':
    case 'date':
    case 'pattern':
    case undefined:
      break;
    default:
      // every other kind is derived: any of its strings may name parameters (`by` and date formats hold none)
      for (const value of Object.values(s)) add(value);
  }
  return [...names];
}

export function compileTemplate(template: Template): CompiledTemplate {
  const parameters = template.parameters;
  const names = Object.keys(parameters);
  const dependencies = new Map(names.map((name) => [name, specDependencies(parameters[name]!)]));
  for (const [name, deps] of dependencies) {
    for (const dep of deps) {
      if (!Object.hasOwn(parameters, dep)) throw new TemplateError(`parameter \`${name}\` refers to {{${dep}}}, which is not a parameter`, ['parameters', name]);
    }
  }
  const order: string[] = [];
  const state = new Map<string, 'active' | 'done'>();
  const visit = (name: string, chain: string[]) => {
    const s = state.get(name);
    if (s === 'done') return;
    if (s === 'active') throw new TemplateError(`parameters refer to each other in a loop: ${[...chain, name].join(' → ')}`, ['parameters', name]);
    state.set(name, 'active');
    for (const dep of dependencies.get(name)!) visit(dep, [...chain, name]);
    state.set(name, 'done');
    order.push(name);
  };
  for (const name of names) visit(name, []);

  const samplers = new Map<string, Sampler>();
  const maxTries = template.max_tries ?? DEFAULT_MAX_TRIES;
  for (const name of names) samplers.set(name, compileSampler(name, parameters[name]!, maxTries));

  const position = new Map(order.map((name, i) => [name, i]));
  const checksAfter = new Map<string, number[]>();
  (template.constraints ?? []).forEach((constraint, i) => {
    const members = constraintMembers(constraint);
    for (const member of members) {
      if (!position.has(member)) throw new TemplateError(`constraint names \`${member}\`, which is not a parameter`, ['constraints', i]);
    }
    const last = members.reduce((a, b) => (position.get(a)! > position.get(b)! ? a : b));
    checksAfter.set(last, [...(checksAfter.get(last) ?? []), i]);
  });

  let grammar: CompiledGrammar | undefined;
  if (template.grammar) {
    try {
      grammar = compileGrammar(template.grammar);
    } catch (error) {
      if (error instanceof GrammarError) throw new TemplateError(`grammar: ${error.message}`, ['grammar']);
      throw error;
    }
  }
  return { template, order, maxTries, grammar, samplers, checksAfter };
}

/** Every parameter that cannot be compiled (each reported, unlike compileTemplate which stops at the first). */
export function parameterProblems(parameters: Record<string, ParameterSpec>, maxTries = DEFAULT_MAX_TRIES): TemplateError[] {
  const problems: TemplateError[] = [];
  for (const [name, spec] of Object.entries(parameters)) {
    try {
      compileSampler(name, spec, maxTries);
    } catch (error) {
      if (error instanceof TemplateError) problems.push(error);
      else throw error;
    }
  }
  return problems;
}

export function constraintMembers(constraint: Constraint): string[] {
  return 'distinct' in constraint ? constraint.distinct : constraint.ordered;
}

// ---- drawing

function decimalsOf(step: number): number {
  const text = String(step);
  const exponent = /e-(\d+)$/.exec(text);
  if (exponent) return Number(exponent[1]);
  const dot = text.indexOf('.');
  return dot < 0 ? 0 : text.length - dot - 1;
}

function compileDrawn(spec: FieldParameter | ParameterSpec, path: JsonPath): ((random: Random, context: Context, name?: string) => unknown) | undefined {
  if ('pool' in spec) {
    const pool = spec.pool;
    const weights = 'weights' in spec ? spec.weights : undefined;
    if (weights && weights.length !== pool.length) throw new TemplateError(`\`weights\` has ${weights.length} entries for a pool of ${pool.length}`, [...path, 'weights']);
    return weights ? (random) => pool[random.weighted(weights)] : (random) => pool[random.int(0, pool.length - 1)];
  }
  if ('int' in spec) {
    const { min, max } = spec.int;
    const step = spec.int.step ?? 1;
    if (max < min) throw new TemplateError(`int: max ${max} is below min ${min}`, [...path, 'int']);
    const steps = Math.floor((max - min) / step);
    return (random) => min + random.int(0, steps) * step;
  }
  if ('decimal' in spec) {
    const { min, max, step } = spec.decimal;
    if (max < min) throw new TemplateError(`decimal: max ${max} is below min ${min}`, [...path, 'decimal']);
    const decimals = Math.max(decimalsOf(step), decimalsOf(min));
    const steps = Math.floor((max - min) / step + 1e-9);
    return (random) => Number((min + random.int(0, steps) * step).toFixed(decimals));
  }
  if ('date' in spec) {
    const from = parseIsoDay(spec.date.from);
    const to = parseIsoDay(spec.date.to);
    if (from === undefined) throw new TemplateError(`date: \`from\` ${spec.date.from} is not a calendar date`, [...path, 'date', 'from']);
    if (to === undefined) throw new TemplateError(`date: \`to\` ${spec.date.to} is not a calendar date`, [...path, 'date', 'to']);
    if (to < from) throw new TemplateError(`date: the window ends (${spec.date.to}) before it starts (${spec.date.from})`, [...path, 'date']);
    const format = spec.date.format ?? DEFAULT_DATE_FORMAT;
    return (random, context, name) => {
      const day = random.int(from, to);
      if (name !== undefined) context.days.set(name, { day, format });
      return formatDay(day, format);
    };
  }
  if ('pattern' in spec) {
    let pattern: CompiledPattern;
    try {
      pattern = compilePattern(spec.pattern);
    } catch (error) {
      if (error instanceof PatternError) throw new TemplateError(`pattern: ${error.message}`, [...path, 'pattern'], { index: error.index, length: error.length });
      throw error;
    }
    return (random) => pattern.generate(random);
  }
  return undefined;
}

function compileSampler(name: string, spec: ParameterSpec, maxTries: number): Sampler {
  const path: JsonPath = ['parameters', name];
  const drawn = compileDrawn(spec, path);
  if (drawn) return (random, context) => drawn(random, context, name);
  const kind = parameterKind(spec);
  const fail = (message: string): never => {
    throw new TemplateError(`parameter \`${name}\`: ${message}`, path);
  };
  const guard = <T>(compute: () => T): T => {
    try {
      return compute();
    } catch (error) {
      if (error instanceof PlaceholderError) return fail(error.message);
      throw error;
    }
  };
  const numbers = (operands: (string | number)[], by: string | undefined, values: Context['values']): number[] => {
    const out: number[] = [];
    const push = (v: unknown) => {
      const n = by !== undefined && v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>)[by] : v;
      if (typeof n !== 'number') fail(`${kind} needs numbers, got ${JSON.stringify(n)}`);
      out.push(n as number);
    };
    for (const operand of operands) {
      const v = typeof operand === 'string' ? fillString(operand, values) : operand;
      if (Array.isArray(v)) v.forEach(push);
      else push(v);
    }
    return out;
  };
  switch (kind) {
    case 'list': {
      const list = (spec as Extract<ParameterSpec, { list: unknown }>).list;
      const fields = Object.entries(list.fields).map(([field, fieldSpec]) => {
        const draw = compileDrawn(fieldSpec, [...path, 'list', 'fields', field]);
        const value = 'value' in fieldSpec ? fieldSpec.value : undefined;
        return { field, draw: draw ?? ((_random: Random, context: Context) => guard(() => fill(value, context.values))) };
      });
      const distinct = list.distinct ?? [];
      for (const field of distinct) if (!Object.hasOwn(list.fields, field)) fail(`list: distinct names \`${field}\`, which is not a field`);
      const length = list.length;
      if (typeof length === 'object' && length.max < length.min) fail(`list: length max ${length.max} is below min ${length.min}`);
      // The schema bounds it too; a template that skipped the schema must not draw billions of elements.
      const longest = typeof length === 'number' ? length : length.max;
      if (!(longest <= MAX_LIST_LENGTH)) fail(`list: length ${longest} is over ${MAX_LIST_LENGTH}`);
      return (random, context) => {
        const n = typeof length === 'number' ? length : random.int(length.min, length.max);
        const items: Record<string, unknown>[] = [];
        const seen = distinct.map(() => new Set<string>());
        for (let i = 0; i < n; i++) {
          let item: Record<string, unknown> | undefined;
          for (let attempt = 0; attempt < maxTries && !item; attempt++) {
            const candidate: Record<string, unknown> = {};
            for (const { field, draw } of fields) candidate[field] = draw(random, context);
            const keys = distinct.map((field) => identity(candidate[field]));
            if (keys.every((key, j) => !seen[j]!.has(key))) {
              keys.forEach((key, j) => seen[j]!.add(key));
              item = candidate;
            }
          }
          if (!item) {
            throw new UnsatisfiableError(
              `list \`${name}\`: no element ${i + 1} of ${n} with distinct ${distinct.map((f) => `\`${f}\``).join(', ')} in ${maxTries} draws (too few possible values?)`,
              [...path, 'list', 'distinct'],
            );
          }
          items.push(item);
        }
        return items;
      };
    }
    case 'value': {
      const value = (spec as { value: unknown }).value;
      return (_random, context) => guard(() => fill(value, context.values));
    }
    case 'min':
    case 'max':
    case 'sum': {
      const s = spec as { min?: (string | number)[]; max?: (string | number)[]; sum?: (string | number)[]; by?: string };
      const operands = s[kind]!;
      return (_random, context) => {
        const ns = guard(() => numbers(operands, s.by, context.values));
        if (ns.length === 0) fail(`${kind} of nothing: the operands hold no numbers`);
        if (kind === 'min') return Math.min(...ns);
        if (kind === 'max') return Math.max(...ns);
        return Math.round(ns.reduce((a, b) => a + b, 0) * 1e10) / 1e10;
      };
    }
    case 'argmin':
    case 'argmax': {
      const s = spec as { argmin?: string; argmax?: string; by: string };
      const source = s[kind]!;
      return (_random, context) => {
        const list = guard(() => fillString(source, context.values));
        if (!Array.isArray(list) || list.length === 0) return fail(`${kind} needs a non-empty list, got ${JSON.stringify(list)}`);
        let best = 0;
        const key = (i: number) => {
          const item = list[i];
          const v = item !== null && typeof item === 'object' ? (item as Record<string, unknown>)[s.by] : undefined;
          if (typeof v !== 'number' && typeof v !== 'string') fail(`${kind}: element ${i} has no number or string \`${s.by}\``);
          return v as number | string;
        };
        for (let i = 1; i < list.length; i++) {
          if (kind === 'argmin' ? key(i) < key(best) : key(i) > key(best)) best = i;
        }
        return structuredClone(list[best]);
      };
    }
    case 'format': {
      const format = (spec as { format: string | (string | number)[] }).format;
      if (typeof format === 'string') return (_random, context) => guard(() => fillText(format, context.values));
      const [pattern, ...args] = format;
      if (typeof pattern !== 'string') return fail('printf-style format: the first element is the format string');
      return (_random, context) => guard(() => printf(pattern, args.map((a) => (typeof a === 'string' ? fillString(a, context.values) : a)), fail));
    }
    case 'upper':
    case 'lower': {
      const text = (spec as { upper?: string; lower?: string })[kind]!;
      return (_random, context) => {
        const filled = guard(() => fillText(text, context.values));
        return kind === 'upper' ? filled.toUpperCase() : filled.toLowerCase();
      };
    }
    case 'pick': {
      const s = spec as { pick: unknown[] | string; index: number | string };
      return (_random, context) => {
        const pool = guard(() => (typeof s.pick === 'string' ? fillString(s.pick, context.values) : fill(s.pick, context.values)));
        const index = typeof s.index === 'string' ? guard(() => fillString(s.index as string, context.values)) : s.index;
        if (!Array.isArray(pool)) return fail(`pick needs a pool (an array), got ${JSON.stringify(pool)}`);
        if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= pool.length) {
          return fail(`pick: index ${JSON.stringify(index)} is outside the pool of ${pool.length} (0..${pool.length - 1})`);
        }
        return structuredClone(pool[index]);
      };
    }
    case 'date_add': {
      const s = spec as { date_add: string; days: number | string; format?: string };
      const refs = findPlaceholders(s.date_add);
      const source = refs.length === 1 && refs[0]!.whole && refs[0]!.path.length === 0 ? refs[0]!.name : undefined;
      const literalDay = source === undefined ? parseIsoDay(s.date_add) : undefined;
      if (source === undefined && literalDay === undefined) fail(`date_add: ${JSON.stringify(s.date_add)} is neither {{a date parameter}} nor a YYYY-MM-DD date`);
      return (_random, context) => {
        let base: { day: number; format: string };
        if (source === undefined) base = { day: literalDay!, format: DEFAULT_DATE_FORMAT };
        else {
          const known = context.days.get(source);
          const parsed = known ? undefined : parseIsoDay(String(context.values.get(source)));
          if (!known && parsed === undefined) return fail(`date_add: {{${source}}} is not a date parameter (nor a YYYY-MM-DD string)`);
          base = known ?? { day: parsed!, format: DEFAULT_DATE_FORMAT };
        }
        const days = typeof s.days === 'string' ? guard(() => fillString(s.days as string, context.values)) : s.days;
        if (typeof days !== 'number' || !Number.isInteger(days)) return fail(`date_add: days must be a whole number, got ${JSON.stringify(days)}`);
        const result = { day: base.day + days, format: s.format ?? base.format };
        context.days.set(name, result);
        return formatDay(result.day, result.format);
      };
    }
    default:
      return fail('no parameter kind: use one of ' + Object.keys(PARAMETER_KINDS).join(', '));
  }
}

/** `%s`, `%d`, `%f`, `%.2f`, `%05d`, `%-8s`, `%%`. */
function printf(pattern: string, args: unknown[], fail: (message: string) => never): string {
  let next = 0;
  return pattern.replace(/%(-?)(0?)(\d*)(?:\.(\d+))?([sdf%])/g, (_all, left: string, zero: string, width: string, precision: string | undefined, type: string) => {
    if (type === '%') return '%';
    if (next >= args.length) fail(`format ${JSON.stringify(pattern)} has more % fields than arguments (${args.length})`);
    const arg = args[next++];
    let text: string;
    if (type === 's') {
      if (arg !== null && typeof arg === 'object') fail(`format: %s given ${Array.isArray(arg) ? 'an array' : 'an object'}`);
      text = String(arg);
    } else {
      if (typeof arg !== 'number') fail(`format: %${type} needs a number, got ${JSON.stringify(arg)}`);
      const n = arg as number;
      text = type === 'd' ? String(Math.trunc(n)) : precision !== undefined ? n.toFixed(Number(precision)) : String(n);
    }
    const w = Number(width || 0);
    if (text.length >= w) return text;
    if (left) return text.padEnd(w);
    if (zero && type !== 's') return text.startsWith('-') ? `-${text.slice(1).padStart(w - 1, '0')}` : text.padStart(w, '0');
    return text.padStart(w);
  });
}

function identity(value: unknown): string {
  if (typeof value === 'string') return `s${value}`;
  if (typeof value === 'number') return `n${value}`;
  return `j${canonicalize(value)}`;
}

function checkConstraint(constraint: Constraint, context: Context): boolean {
  if ('distinct' in constraint) {
    const seen = new Set<string>();
    for (const name of constraint.distinct) {
      const key = identity(context.values.get(name));
      if (seen.has(key)) return false;
      seen.add(key);
    }
    return true;
  }
  const keys = constraint.ordered.map((name) => {
    const day = context.days.get(name);
    return day ? day.day : context.values.get(name);
  });
  for (let i = 1; i < keys.length; i++) {
    const a = keys[i - 1];
    const b = keys[i];
    if (typeof a !== typeof b || (typeof a !== 'number' && typeof a !== 'string')) {
      throw new TemplateError(`ordered compares ${JSON.stringify(a)} with ${JSON.stringify(b)}: both must be numbers, dates or strings`, ['constraints']);
    }
    if (!((a as number | string) < (b as number | string))) return false;
  }
  return true;
}

export interface SampledParameters {
  values: Map<string, unknown>;
  /** Draws it took to meet the constraints (1 when the first draw did). */
  tries: number;
}

export function sampleParameters(compiled: CompiledTemplate, random: Random): SampledParameters {
  const constraints = compiled.template.constraints ?? [];
  // Per constraint: how often it was checked and how often it held. The one to blame is the one that held
  // least often when checked (a constraint that never holds, not one that merely fails first).
  const checked = constraints.map(() => 0);
  const held = constraints.map(() => 0);
  for (let tries = 1; tries <= compiled.maxTries; tries++) {
    const context: Context = { values: new Map(), days: new Map() };
    try {
      for (const name of compiled.order) {
        context.values.set(name, compiled.samplers.get(name)!(random, context));
        for (const index of compiled.checksAfter.get(name) ?? []) {
          checked[index]!++;
          if (!checkConstraint(constraints[index]!, context)) throw new Rejected(index);
          held[index]!++;
        }
      }
      return { values: context.values, tries };
    } catch (error) {
      if (!(error instanceof Rejected)) throw error;
    }
  }
  const rate = (i: number) => (checked[i]! === 0 ? 1 : held[i]! / checked[i]!);
  let worst = 0;
  for (let i = 1; i < constraints.length; i++) if (rate(i) < rate(worst)) worst = i;
  throw new UnsatisfiableError(
    `constraint ${worst + 1} ${JSON.stringify(constraints[worst])} could not be met in ${compiled.maxTries} draws: widen the ranges or pools it names, or raise max_tries`,
    ['constraints', worst],
  );
}

/** Task keys in the order of the task format, so generated files read like hand-written ones. */
const TASK_KEY_ORDER = Object.keys(TaskSchema.shape).filter((k) => k !== '$schema');

export interface SampledVariant {
  /** The task without `id` and `template` (they depend on its hash and the generation). */
  body: Record<string, unknown>;
  /** The drawn (not derived) parameters' values, in declaration order. */
  parameters: Record<string, unknown>;
  goal: string | undefined;
}

/**
 * One variant from its own seed. With `trace`, the map receives for each node of the body the template path it
 * came from (for the template linter).
 */
export function sampleVariant(compiled: CompiledTemplate, seed: number, trace?: PathTrace): SampledVariant {
  const random = createRandom(seed);
  const { values } = sampleParameters(compiled, random);
  const template = compiled.template;
  let goal: string | undefined;
  if (compiled.grammar) {
    const text = compiled.grammar.expand(random);
    try {
      goal = fillText(text, values).replace(/\s+/g, ' ').trim();
    } catch (error) {
      if (error instanceof PlaceholderError) throw new TemplateError(`grammar: ${error.message}`, ['grammar']);
      throw error;
    }
  }
  let filled: Record<string, unknown>;
  try {
    filled = fill(template.task, values, trace && { map: trace, from: ['task'], to: [] }) as Record<string, unknown>;
  } catch (error) {
    if (error instanceof PlaceholderError) throw new TemplateError(`task: ${error.message}`, ['task']);
    throw error;
  }
  if (goal !== undefined) filled.goal = goal;
  const body: Record<string, unknown> = {};
  for (const key of TASK_KEY_ORDER) if (Object.hasOwn(filled, key)) body[key] = filled[key];
  // Provenance keeps the drawn values only: derived ones follow from them, and repeating them (a list and its
  // argmin) would bloat every task file.
  const parameters: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(template.parameters)) if (!DERIVED_KINDS.includes(parameterKind(spec)!)) parameters[name] = values.get(name);
  return { body, parameters, goal };
}
