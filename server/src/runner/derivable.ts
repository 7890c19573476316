/**
 * Solutions an agent can derive: every value a reference solution passes to a tool that names something in
 * the data (a token of the initial state: an id, a channel, a file, a customer) must be one the agent can
 * know at that point: it is in the goal, in the result of an earlier call of the same solution (as check's
 * reference episode recorded it), or in the tool's schema (an enum, a default, a constant). Otherwise the
 * reference solution knows something no agent can, and the task measures luck (finding
 * `underivable-argument`, on the argument's exact place).
 *
 * Values are compared by tokens (runs of letters, digits and `_`, case-insensitive); a token counts when it
 * is distinctive (three characters or more, or two with a digit) and occurs in the initial state: free text
 * the agent writes (a message, a note) holds words of its own, which is fine.
 */
import type { Registry } from '../mcp/registry.ts';
import type { JsonPath } from '../tasks/document.ts';
import type { Task } from '../tasks/model.ts';
import type { EpisodeResult } from './types.ts';

const TOKEN = /[\p{L}\p{N}_]+/gu;
/** A value up to this long is shown whole in the finding; a longer one by its first unknown token. */
const MAX_SHOWN = 40;

function tokens(text: string): string[] {
  return (text.match(TOKEN) ?? []).map((t) => t.toLowerCase());
}

function distinctive(token: string): boolean {
  return token.length >= 3 || (token.length === 2 && /\p{N}/u.test(token));
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

export interface UnderivableArgument {
  /** Where the argument is in the task file. */
  path: JsonPath;
  /** The value no agent can know (or, in a long value, its first unknown token), as the solution writes it. */
  unknown: string;
  solution: number;
  step: number;
}

/**
 * The arguments of the reference solutions that name data the agent cannot know yet, judged on check's
 * reference episodes at no faults (their recorded results are what an agent would have seen).
 */
export function underivableArguments(task: Task, registry: Registry, results: readonly EpisodeResult[]): UnderivableArgument[] {
  const inState = new Set(tokens(JSON.stringify(task.initial_state)).filter(distinctive));
  const fromGoal = tokens(task.goal);
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
          return distinctive(token) && inState.has(token) && !known.has(token) && !fromSchema.has(token);
        });
        if (missing !== undefined) found.push({ path: ['reference_solutions', s, j, 'arguments', ...path], unknown: text.length <= MAX_SHOWN ? text : missing, solution: s, step: j });
      }
      // What this call returned is known from the next step on.
      const record = episode.calls[call++];
      if (record) for (const token of tokens(resultText(record.result))) known.add(token);
    });
  });
  return found;
}
