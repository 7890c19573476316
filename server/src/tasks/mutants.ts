/**
 * Mutants of a task's reference solutions: small, plausible mistakes an agent could make, each a tool-call
 * sequence the reference agent replays. A predicate that still passes on one (a surviving mutant) cannot tell
 * that mistake from the real solution: either the mistake does not matter (the mutant is equivalent, and the
 * author says why in `equivalent_mutants`) or the predicate has a gap.
 *
 * Operators, on every reference solution:
 * - `drop`: drop one write (a call whose tool is not `readOnlyHint`), or the final answer;
 * - `drop-writes`: drop every write at once, keeping the reads and the answer (when there are two or more);
 * - `swap`: swap two writes that follow each other (reads between them stay where they are);
 * - `stop`: stop after a step, when what is cut holds a write or the answer;
 * - `step<i>/<pointer>=<value>`: one argument of a write replaced by another valid value of the same type,
 *   the nearest one taken from the initial state at the same place (another file, another record's id),
 *   else from the goal, else from the tool schema's enum; a boolean is flipped. Prose (a message, a reason,
 *   an observation: text with spaces) is replaced only by other prose of the state at the same place: the
 *   wording of free text is the agent's, and a goal word in its place is not a mistake a predicate should catch.
 * - `step<i>/<pointer>:empty|prefix|goal`: text the agent writes (a value with spaces or lines: a file's
 *   content, a message, a comment) replaced by nothing, by its first half, or by the goal's words;
 * - `step<i>/<pointer>:sql<k>-drop-where|other-rows|set-value|extra-delete|extra-update`: on an UPDATE or
 *   DELETE (statement k of a SQL argument): the WHERE dropped, negated (the other rows instead), the first SET
 *   value changed, or a step added after it that deletes or updates the rows its WHERE leaves out;
 * - `step<i>/<key>:omit`: an optional argument left out (a solution that relies on a tool's default, or one a
 *   predicate never looks at).
 * Reads are never mutated: a read changes no state, and the reference agent's answer is written, not read,
 * so no predicate could tell. For the same reason two sequences with the same writes in the same order are
 * one mutant (the first id is kept); mutants that write what the empty sequence (noop), a reference solution
 * or a counterexample writes are left out: check runs those already.
 *
 * Ids are stable: they name the solution (1-based), the operator and the steps (1-based), and for a replaced
 * argument its JSON pointer and the new value (or a hash of it when long), so an id written into
 * `equivalent_mutants` keeps meaning the same mutant while the task does not change there.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { distance } from 'fastest-levenshtein';
import type { Registry } from '../mcp/registry.ts';
import { extractNumbers } from '../mcp/answer/predicates.ts';
import { goalValues } from './goal-values.ts';
import type { SolutionStep, Task, ToolCall } from './model.ts';
import type { JsonPath } from '../json-values.ts';

export type MutantOperator = 'drop' | 'drop-writes' | 'swap' | 'stop' | 'replace' | 'text' | 'sql' | 'omit';

export interface Mutant {
  /** Stable id, e.g. `ref1.drop2`, `ref1.swap1-3`, `ref1.stop1`, `ref1.step2/destination=archive/old.txt`. */
  id: string;
  /** 0-based index of the reference solution it comes from. */
  solution: number;
  operator: MutantOperator;
  /** One line for people: what was changed. */
  description: string;
  steps: SolutionStep[];
  /** Where in the task file the mutated step is (the replaced argument, the dropped step): for ranges. */
  path: JsonPath;
}

const MAX_ID_VALUE = 32;
/** Dates, times and words of at least three letters, as a goal writes them. */
const GOAL_TOKENS = /\d{4}-\d{2}-\d{2}|\b\d{1,2}:\d{2}\b|[\p{L}][\p{L}\p{N}_-]{2,}/gu;

const isCall = (step: SolutionStep): step is ToolCall => 'tool' in step;

function canonical(value: unknown): string {
  return canonicalize(value) ?? JSON.stringify(value);
}

/** Whether a step changes state (for the mutants): an answer does, a call does unless its tool is read-only. */
export function isWrite(step: SolutionStep, registry: Registry): boolean {
  if (!isCall(step)) return true;
  return registry.tool(step.tool)?.declaration.annotations?.readOnlyHint !== true;
}

function idValue(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  if (text.length <= MAX_ID_VALUE && /^[\x21-\x7e]+(?: [\x21-\x7e]+)*$/.test(text)) return text;
  return `#${createHash('sha256').update(canonical(value)).digest('hex').slice(0, 8)}`;
}

function pointerOf(path: (string | number)[]): string {
  return path.map((p) => `/${String(p).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

/** Every scalar inside a value with its path (object keys and array indices). */
export function scalars(value: unknown, path: (string | number)[] = [], out: { path: (string | number)[]; value: string | number | boolean }[] = []) {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') out.push({ path, value });
  else if (Array.isArray(value)) value.forEach((v, i) => scalars(v, [...path, i], out));
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) scalars(v, [...path, k], out);
  return out;
}

type Schema = Record<string, unknown>;
const asSchema = (s: unknown): Schema | undefined => (s && typeof s === 'object' && !Array.isArray(s) ? (s as Schema) : undefined);

/**
 * The values of the initial state by "place": the path with array indices and map keys (a key the state
 * schema does not name, such as a file path under `files`) generalised, so that every file's content shares
 * one place, every flight's id another, every file path (a map key) a third.
 */
export class StatePlaces {
  /** canonical value → the places it occurs at */
  private readonly placesOf = new Map<string, Set<string>>();
  /** place → values there */
  private readonly valuesAt = new Map<string, (string | number)[]>();

  constructor(task: Task, registry: Registry) {
    for (const [namespace, state] of Object.entries(task.initial_state)) {
      const info = registry.get(namespace);
      this.walk(state, asSchema(info?.server.state_schema), namespace);
    }
  }

  private add(place: string, value: string | number): void {
    const key = canonical(value);
    let places = this.placesOf.get(key);
    if (!places) this.placesOf.set(key, (places = new Set()));
    places.add(place);
    let values = this.valuesAt.get(place);
    if (!values) this.valuesAt.set(place, (values = []));
    if (!values.some((v) => v === value)) values.push(value);
  }

  private walk(value: unknown, schema: Schema | undefined, place: string): void {
    if (typeof value === 'string' || typeof value === 'number') return this.add(place, value);
    if (Array.isArray(value)) {
      const items = asSchema(schema?.items);
      for (const item of value) this.walk(item, items, `${place}/[]`);
      return;
    }
    if (!value || typeof value !== 'object') return;
    const properties = asSchema(schema?.properties) ?? {};
    for (const [key, child] of Object.entries(value)) {
      if (Object.hasOwn(properties, key)) {
        this.walk(child, asSchema(properties[key]), `${place}/${key}`);
        continue;
      }
      // A key the schema does not name is data (a file path, a record id): its own place, and its value's.
      const patterns = asSchema(schema?.patternProperties);
      const additional = asSchema(schema?.additionalProperties) ?? (patterns ? asSchema(Object.values(patterns)[0]) : undefined);
      this.add(`${place}/{key}`, key);
      this.walk(child, additional, `${place}/{}`);
    }
  }

  /** Every key of the state the schema does not name (file paths, record ids), in document order. */
  dataKeys(): string[] {
    const out: string[] = [];
    for (const [place, values] of this.valuesAt) if (place.endsWith('/{key}')) for (const v of values) if (typeof v === 'string' && !out.includes(v)) out.push(v);
    return out;
  }

  /** Other values at the places `value` occurs at, of the same type. */
  siblings(value: string | number): (string | number)[] {
    const out: (string | number)[] = [];
    for (const place of this.placesOf.get(canonical(value)) ?? []) {
      for (const other of this.valuesAt.get(place) ?? []) if (typeof other === typeof value && other !== value && !out.includes(other)) out.push(other);
    }
    return out;
  }
}

/** The nearest candidate first (edit distance for text, difference for numbers), ties in value order. */
export function byNearness(current: string | number, candidates: (string | number)[]): (string | number)[] {
  const d = (c: string | number) => (typeof current === 'number' ? Math.abs(Number(c) - current) : distance(String(c), String(current)));
  return [...candidates].sort((a, b) => d(a) - d(b) || (String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0));
}

/** The enum of a top-level property of an input schema, if any. */
function enumOf(schema: Schema | undefined, key: string | number): unknown[] {
  const property = asSchema(asSchema(schema?.properties)?.[String(key)]);
  return Array.isArray(property?.enum) ? property.enum : [];
}

export function setAt(value: unknown, path: (string | number)[], replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path;
  if (Array.isArray(value)) return value.map((v, i) => (i === head ? setAt(v, rest, replacement) : v));
  const record = value as Record<string, unknown>;
  return { ...record, [head!]: setAt(record[head!], rest, replacement) };
}

function describeStep(step: SolutionStep): string {
  return isCall(step) ? step.tool : 'the final answer';
}

/**
 * Whether an `equivalent_mutants` entry covers a mutant: its id, or `<prefix>=*` for every replacement of one
 * argument (`ref1.step3/relations/1/relationType=*`: the relation type of that link is free).
 */
export function coversMutant(entry: string, id: string): boolean {
  return entry.endsWith('=*') ? id.startsWith(entry.slice(0, -1)) : entry === id;
}

/** For a `<prefix>=*` entry: whether the argument it names exists in the reference solutions (`ref1.step3/relations/1/relationType`). */
export function argumentExists(task: Task, entry: string): boolean {
  const m = /^ref(\d+)\.step(\d+)(\/.*)=\*$/.exec(entry);
  if (!m) return false;
  const step = task.reference_solutions[Number(m[1]) - 1]?.[Number(m[2]) - 1];
  if (!step || !isCall(step)) return false;
  let value: unknown = step.arguments ?? {};
  for (const token of m[3]!.slice(1).split('/').map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'))) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, token)) return false;
    value = (value as Record<string, unknown>)[token];
  }
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

/** Every mutant of every reference solution of `task`, in a stable order, duplicates removed. */
export function deriveMutants(task: Task, registry: Registry): Mutant[] {
  const places = new StatePlaces(task, registry);
  // Goal strings: its quoted values, files and ids; then its dates, times and words (the last resort).
  const named = goalValues(task.goal).map((v) => v.text);
  const tokens = [...new Set(task.goal.match(GOAL_TOKENS) ?? [])].filter((t) => !named.includes(t));
  const goalNumbers = extractNumbers(task.goal);
  // Reads change no state, so two sequences with the same writes in the same order leave the same end state:
  // mutants are told apart by their writes alone.
  const writesOf = (steps: SolutionStep[]) => canonical(steps.filter((step) => isWrite(step, registry)));
  const known = new Set<string>([writesOf([]), ...task.reference_solutions.map(writesOf), ...(task.counterexamples ?? []).map(writesOf)]);
  const mutants: Mutant[] = [];
  const add = (mutant: Mutant) => {
    const key = writesOf(mutant.steps);
    if (known.has(key)) return;
    known.add(key);
    mutants.push(mutant);
  };

  task.reference_solutions.forEach((steps, s) => {
    const ref = `ref${s + 1}`;
    const at = (i: number): JsonPath => ['reference_solutions', s, i];
    const writes = steps.map((step, i) => (isWrite(step, registry) ? i : -1)).filter((i) => i >= 0);
    const callWrites = writes.filter((i) => isCall(steps[i]!));

    for (const i of writes) {
      add({ id: `${ref}.drop${i + 1}`, solution: s, operator: 'drop', description: `drop step ${i + 1} (${describeStep(steps[i]!)})`, steps: steps.filter((_, j) => j !== i), path: at(i) });
    }
    if (callWrites.length >= 2) {
      add({ id: `${ref}.drop-writes`, solution: s, operator: 'drop-writes', description: `drop every write (${callWrites.map((i) => `step ${i + 1}`).join(', ')}), keep the reads`, steps: steps.filter((_, j) => !callWrites.includes(j)), path: ['reference_solutions', s] });
    }
    for (let w = 0; w + 1 < callWrites.length; w++) {
      const [i, j] = [callWrites[w]!, callWrites[w + 1]!];
      const swapped = steps.map((step, k) => (k === i ? steps[j]! : k === j ? steps[i]! : step));
      add({ id: `${ref}.swap${i + 1}-${j + 1}`, solution: s, operator: 'swap', description: `swap step ${i + 1} (${describeStep(steps[i]!)}) and step ${j + 1} (${describeStep(steps[j]!)})`, steps: swapped, path: at(i) });
    }
    for (let k = 1; k < steps.length; k++) {
      if (!writes.some((i) => i >= k)) continue;
      add({ id: `${ref}.stop${k}`, solution: s, operator: 'stop', description: `stop after step ${k} of ${steps.length}`, steps: steps.slice(0, k), path: at(k) });
    }
    for (const i of callWrites) {
      const step = steps[i] as ToolCall;
      const tool = registry.tool(step.tool);
      const inputSchema = asSchema(tool?.declaration.inputSchema);
      for (const { path, value } of scalars(step.arguments ?? {})) {
        let candidates: (string | number)[] = [];
        if (typeof value !== 'boolean') {
          // Nearest first within each source, sources in order: the state at the same place, the goal's
          // named values, its other tokens, the schema's enum. Prose the agent writes (a message, a reason: text
          // with spaces) is replaced only by other prose of the state at the same place, never by a goal word.
          const prose = typeof value === 'string' && /\s/.test(value.trim());
          const sources: unknown[][] = [
            places.siblings(value),
            ...(prose ? [] : typeof value === 'number' ? [goalNumbers] : [named, tokens]),
            path.length === 1 ? enumOf(inputSchema, path[0]!) : [],
          ];
          // A value that differs only in case is the same value to people (and to case-insensitive predicates).
          const other = (v: unknown): v is string | number =>
            typeof v === typeof value && v !== value && !(typeof v === 'string' && v.toLowerCase() === String(value).toLowerCase());
          candidates = sources.flatMap((source) => byNearness(value, source.filter(other)));
        }
        const replacements: unknown[] = typeof value === 'boolean' ? [!value] : [...new Set(candidates)];
        for (const replacement of replacements) {
          const args = setAt(step.arguments ?? {}, path, replacement) as Record<string, unknown>;
          if (tool && !tool.validateInput(args)) continue;
          const pointer = pointerOf(path);
          const mutated = steps.map((other, k) => (k === i ? { ...step, arguments: args } : other));
          add({
            id: `${ref}.step${i + 1}${pointer}=${idValue(replacement)}`,
            solution: s,
            operator: 'replace',
            description: `step ${i + 1} (${step.tool}): ${pointer.slice(1)} ${JSON.stringify(value)} → ${JSON.stringify(replacement)}`,
            steps: mutated,
            path: [...at(i), 'arguments', ...path],
          });
          break;
        }
      }
    }
    for (const i of callWrites) {
      const step = steps[i] as ToolCall;
      const tool = registry.tool(step.tool);
      const inputSchema = asSchema(tool?.declaration.inputSchema);
      const withStep = (replacement: ToolCall, extra: ToolCall[] = []) => steps.flatMap((other, k) => (k === i ? [replacement, ...extra] : [other]));
      const valid = (args: Record<string, unknown>) => !tool || tool.validateInput(args);
      for (const { path, value } of scalars(step.arguments ?? {})) {
        if (typeof value !== 'string') continue;
        const pointer = pointerOf(path);
        const argPath: JsonPath = [...at(i), 'arguments', ...path];
        if (SQL_WRITE.test(value)) {
          for (const m of sqlMutants(value)) {
            const args = setAt(step.arguments ?? {}, path, m.sql) as Record<string, unknown>;
            if (!valid(args)) continue;
            const extra = m.extra !== undefined ? [{ ...step, arguments: setAt(step.arguments ?? {}, path, m.extra) as Record<string, unknown> }] : [];
            add({ id: `${ref}.step${i + 1}${pointer}:${m.id}`, solution: s, operator: 'sql', description: `step ${i + 1} (${step.tool}): ${m.description}`, steps: withStep({ ...step, arguments: args }, extra), path: argPath });
          }
          continue;
        }
        if (!isWrittenText(value)) continue;
        const half = value.slice(0, Math.ceil(value.length / 2)).trimEnd();
        const texts: [string, string, string][] = [
          ['empty', '', 'nothing'],
          ['prefix', half, 'its first half'],
          ['goal', task.goal, "the goal's words"],
        ];
        for (const [name, text, what] of texts) {
          if (text === value) continue;
          const args = setAt(step.arguments ?? {}, path, text) as Record<string, unknown>;
          if (!valid(args)) continue;
          add({ id: `${ref}.step${i + 1}${pointer}:${name}`, solution: s, operator: 'text', description: `step ${i + 1} (${step.tool}): ${pointer.slice(1)} replaced by ${what}`, steps: withStep({ ...step, arguments: args }), path: argPath });
        }
      }
      const required = new Set(Array.isArray(inputSchema?.required) ? inputSchema.required.map(String) : []);
      for (const key of Object.keys(step.arguments ?? {})) {
        if (required.has(key)) continue;
        const args = Object.fromEntries(Object.entries(step.arguments ?? {}).filter(([k]) => k !== key));
        if (!valid(args)) continue;
        add({ id: `${ref}.step${i + 1}/${key}:omit`, solution: s, operator: 'omit', description: `step ${i + 1} (${step.tool}): the optional argument ${key} left out`, steps: withStep({ ...step, arguments: args }), path: [...at(i), 'arguments', key] });
      }
    }
  });
  return mutants;
}

/** Text an agent writes (content, a message, a comment), as opposed to an id, a name or a path: it has spaces or lines. */
function isWrittenText(value: string): boolean {
  return /\s/.test(value.trim());
}

/** A SQL argument that changes rows (what the SQL mutants take apart). */
const SQL_WRITE = /^\s*(?:[\s\S]*;\s*)?(?:UPDATE|DELETE)\b/i;

/** Statements of a SQL text, split on `;` outside quotes. */
export function sqlStatements(sql: string): string[] {
  const out: string[] = [];
  let current = '';
  let quote: string | undefined;
  for (const ch of sql) {
    if (quote) {
      if (ch === quote) quote = undefined;
    } else if (ch === "'" || ch === '"') quote = ch;
    else if (ch === ';') {
      if (current.trim()) out.push(current.trim());
      current = '';
      continue;
    }
    current += ch;
  }
  if (current.trim()) out.push(current.trim());
  return out;
}

interface SqlMutant {
  id: string;
  description: string;
  /** The SQL argument, mutated. */
  sql: string;
  /** A statement run by an extra call right after (the same tool). */
  extra?: string;
}

/**
 * SQL-aware mutants of the UPDATE and DELETE statements of a SQL text (the other statements kept as they
 * are): drop the WHERE, negate it (the other rows instead), change the first SET value, and an extra call
 * after it deleting or updating the rows the WHERE leaves out (the "did too much" a frame must catch).
 */
export function sqlMutants(sql: string): SqlMutant[] {
  const statements = sqlStatements(sql);
  const out: SqlMutant[] = [];
  statements.forEach((statement, k) => {
    const m = /^(UPDATE\s+(\S+)\s+SET\s+([\s\S]*?)|DELETE\s+FROM\s+(\S+))\s+WHERE\s+([\s\S]*?)(\s+RETURNING\s[\s\S]*)?$/i.exec(statement);
    if (!m) return;
    const [, head, updateTable, assignments, deleteTable, condition, returning = ''] = m;
    const table = (updateTable ?? deleteTable)!;
    const label = `sql${k + 1}`;
    const join = (replacement: string) => statements.map((other, j) => (j === k ? replacement : other)).join('; ');
    out.push({ id: `${label}-drop-where`, description: `statement ${k + 1} without its WHERE (every row)`, sql: join(`${head}${returning}`) });
    out.push({ id: `${label}-other-rows`, description: `statement ${k + 1} on the other rows (WHERE NOT (${condition}))`, sql: join(`${head} WHERE NOT (${condition})${returning}`) });
    if (assignments !== undefined) {
      const changed = changeFirstValue(assignments);
      if (changed !== undefined) out.push({ id: `${label}-set-value`, description: `statement ${k + 1} sets another value (${changed})`, sql: join(`UPDATE ${table} SET ${changed} WHERE ${condition}${returning}`) });
      out.push({ id: `${label}-extra-update`, description: `an extra UPDATE of the rows statement ${k + 1} leaves out`, sql, extra: `UPDATE ${table} SET ${assignments} WHERE NOT (${condition})` });
    }
    out.push({ id: `${label}-extra-delete`, description: `an extra DELETE of the rows statement ${k + 1} leaves out`, sql, extra: `DELETE FROM ${table} WHERE NOT (${condition})` });
  });
  return out;
}

/** The SET list with its first literal value changed: a number plus one, a string emptied. */
function changeFirstValue(assignments: string): string | undefined {
  const m = /=\s*('(?:[^']|'')*'|-?\d+(?:\.\d+)?)/.exec(assignments);
  if (!m) return undefined;
  const literal = m[1]!;
  const replacement = literal.startsWith("'") ? (literal === "''" ? "'x'" : "''") : String(Number(literal) + 1);
  return assignments.slice(0, m.index) + m[0].replace(literal, replacement) + assignments.slice(m.index + m[0].length);
}
