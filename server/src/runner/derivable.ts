/**
 * Solutions an agent can derive: every value a reference solution passes to a tool that names something in
 * the data (a token of the initial state: an id, a channel, a file, a customer) must be one the agent can
 * know at that point: it is in the goal, in the result of an earlier call of the same solution (as check's
 * reference episode recorded it), or in the tool's schema (an enum, a default, a constant). Otherwise the
 * reference solution knows something no agent can, and the task measures luck (finding
 * `underivable-argument`, on the argument's exact place).
 *
 * Values are compared by tokens (runs of letters, digits and `_`, case-insensitive). A token counts when it
 * looks like an identifier (a number of two digits or more, a digit, an `_`, or a capital after the first
 * letter in a token of three or more: `C0OPS`, `warehouse_code`, `112`, `LON`; not SQL's `ON`) and occurs in
 * the initial state; plain words are the agent's own
 * (free text it writes, a message, a note), which is fine. Dates and times the goal writes in words ("Tuesday
 * 2 June 2026 at 1 pm") are known in their ISO forms too (`2026-06-02`, `13:00`).
 */
import type { Registry } from '../mcp/registry.ts';
import type { Task } from '../tasks/model.ts';
import { extractDates } from '../mcp/answer/predicates.ts';
import type { JsonPath } from '../json-values.ts';
import type { EpisodeRecord } from '../record/schema.ts';

const TOKEN = /[\p{L}\p{N}_]+/gu;
/** A value up to this long is shown whole in the finding, next to its unknown token. */
const MAX_SHOWN = 40;

function tokens(text: string): string[] {
  return (text.match(TOKEN) ?? []).map((t) => t.toLowerCase());
}

/** Whether a token (as written) looks like an identifier rather than a word of prose. */
function identifierLike(token: string): boolean {
  return (/\p{N}/u.test(token) && token.length >= 2) || token.includes('_') || (token.length >= 3 && /^.+\p{Lu}/u.test(token));
}

/** Times of day a text names ("1 pm", "3:45 pm", "13:00", "noon"), as HH:MM. */
export function timesIn(text: string): string[] {
  const out: string[] = [];
  const pad = (n: number) => String(n).padStart(2, '0');
  for (const m of text.matchAll(/\b(\d{1,2})(?::(\d{2}))?\s*([ap])\.?m\.?(?![\p{L}])/giu)) {
    const hour = (Number(m[1]) % 12) + (m[3]!.toLowerCase() === 'p' ? 12 : 0);
    if (hour < 24) out.push(`${pad(hour)}:${m[2] ?? '00'}`);
  }
  for (const m of text.matchAll(/\b([01]?\d|2[0-3]):([0-5]\d)\b/g)) out.push(`${pad(Number(m[1]))}:${m[2]}`);
  if (/\bnoon\b/i.test(text)) out.push('12:00');
  if (/\bmidnight\b/i.test(text)) out.push('00:00');
  return out;
}

/** Every enum, default and const value anywhere in a JSON Schema, as text. */
function schemaValues(schema: unknown, out: string[] = []): string[] {
  if (Array.isArray(schema)) for (const s of schema) schemaValues(s, out);
  else if (schema && typeof schema === 'object') {
    for (const [key, value] of Object.entries(schema)) {
      if (key === 'enum' && Array.isArray(value)) out.push(...value.map((v) => JSON.stringify(v)));
      else if (key === 'default' || key === 'const') out.push(JSON.stringify(value));
      else schemaValues(value, out);
    }
  }
  return out;
}

function scalars(value: unknown, path: (string | number)[] = [], out: { path: (string | number)[]; value: string | number }[] = []) {
  if (typeof value === 'string' || typeof value === 'number') out.push({ path, value });
  else if (Array.isArray(value)) value.forEach((v, i) => scalars(v, [...path, i], out));
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) scalars(v, [...path, k], out);
  return out;
}

/** The text an agent reads in a call's result: its text content (and structured content), else its JSON. */
function resultText(result: unknown): string {
  const parts: string[] = [];
  const visit = (value: unknown): void => {
    if (typeof value === 'string') parts.push(value);
    else if (typeof value === 'number' || typeof value === 'boolean') parts.push(String(value));
    else if (Array.isArray(value)) value.forEach(visit);
    else if (value && typeof value === 'object') for (const [key, v] of Object.entries(value)) (parts.push(key), visit(v));
  };
  visit(result);
  return parts.join('\n');
}

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

/** The two-digit numbers of the months a text names ("March 2026" → `03`). */
function monthsIn(text: string): string[] {
  const words = new Set(tokens(text));
  return MONTHS.flatMap((month, i) => (words.has(month) || (month.length > 4 && words.has(month.slice(0, 3))) ? [String(i + 1).padStart(2, '0')] : []));
}

/** The tokens a text tells the agent: its own, and those of the ISO forms of the dates, months and times it writes in words. */
function knownTokens(text: string): string[] {
  return tokens([text, ...extractDates(text), ...monthsIn(text), ...timesIn(text)].join(' '));
}

export interface UnderivableArgument {
  /** Where the argument is in the task file. */
  path: JsonPath;
  /** The part of the value no agent can know (its first unknown token), as the solution writes it. */
  unknown: string;
  /** The whole value, when it is short enough to show. */
  value?: string;
  solution: number;
  step: number;
}

/**
 * The arguments of the reference solutions that name data the agent cannot know yet, judged on check's
 * reference episodes at no faults (their recorded results are what an agent would have seen).
 */
export function underivableArguments(task: Task, registry: Registry, results: readonly EpisodeRecord[]): UnderivableArgument[] {
  const inState = new Set(tokens(JSON.stringify(task.initial_state)));
  const fromGoal = knownTokens(task.goal);
  const found: UnderivableArgument[] = [];
  task.reference_solutions.forEach((steps, s) => {
    const episode = [...results].reverse().find((r) => r.task_id === task.id && r.variant === `reference:${s}` && r.fault_profile === 'none' && r.status !== 'infra_error');
    if (!episode) return;
    const known = new Set(fromGoal);
    let call = 0;
    steps.forEach((step, j) => {
      if (!('tool' in step)) return;
      const fromSchema = new Set(tokens(schemaValues(registry.tool(step.tool)?.declaration.inputSchema).join(' ')));
      for (const { path, value } of scalars(step.arguments ?? {})) {
        const text = String(value);
        const missing = (text.match(TOKEN) ?? []).find((t) => {
          const token = t.toLowerCase();
          return identifierLike(t) && inState.has(token) && !known.has(token) && !fromSchema.has(token);
        });
        if (missing !== undefined) found.push({ path: ['reference_solutions', s, j, 'arguments', ...path], unknown: missing, value: text.length <= MAX_SHOWN ? text : undefined, solution: s, step: j });
      }
      // What this call returned is known from the next step on.
      const record = episode.calls[call++];
      if (record) for (const token of knownTokens(resultText(record.result))) known.add(token);
    });
  });
  return found;
}
