/**
 * Scripted model behaviours for the protocol simulations: an ORACLE model that knows each task's first
 * reference solution (looked up by the goal in the conversation's first user message) and replays it, one
 * call per turn, then answers; and the ways real models and endpoints deviate from that, each a wrapper
 * around the oracle. A benchmark of the agent loop runs every behaviour over the same tasks and compares its
 * pass rate with the well-behaved script's: a robust loop absorbs everything but what no loop can (an
 * endpoint that refuses, is gone, or keeps failing).
 *
 * A deviation that should happen once per conversation (a malformed call, a 503, a body that is not JSON)
 * is keyed by the goal and the assistant turn, so the retried request is served normally.
 */
import type { Task } from '../../server/src/tasks/model.ts';
import type { AnthropicStep } from './anthropic-simulation.ts';
import type { ScriptStep } from './openai-simulation.ts';

export interface PlannedCall {
  name: string;
  arguments: Record<string, unknown>;
}

export interface Plan {
  calls: PlannedCall[];
  answer: string;
}

/** What the oracle will do for a task: its first reference solution, tool names as the agent sees them. */
export function planFor(task: Task): Plan {
  const calls: PlannedCall[] = [];
  let answer = 'Done.';
  for (const step of task.reference_solutions[0] ?? []) {
    if ('answer' in step) answer = step.answer;
    else calls.push({ name: step.tool.replace('.', '_'), arguments: (step.arguments ?? {}) as Record<string, unknown> });
  }
  return { calls, answer };
}

export type Protocol = 'openai' | 'anthropic';

/** A model's move at one point of a conversation, independent of the protocol. */
export type Move =
  | { kind: 'calls'; calls: Array<{ id?: string; name?: string; arguments: Record<string, unknown> | string; objectArguments?: boolean }>; text?: string | null }
  | { kind: 'text'; text: string }
  | { kind: 'answer'; text: string }
  | { kind: 'http'; status: number; headers?: Record<string, string> }
  | { kind: 'not-json' }
  | { kind: 'empty' }
  | { kind: 'refusal' }
  | { kind: 'reset' };

export interface MoveContext {
  plan: Plan;
  /** Assistant turns so far in this conversation. */
  turn: number;
  /** True the first time this (conversation, turn, tag) is asked for: a deviation served once, then not. */
  once(tag: string): boolean;
}

/** Transport-level modifiers of a normal move: usage left out, a slow stream. */
export interface Delivery {
  noUsage?: boolean;
  slow?: { chunks: number; delayMs: number };
}

export interface Behaviour {
  name: string;
  /** Whether a robust loop can absorb it (same pass rate as the well-behaved script). */
  absorbable: boolean;
  /** Protocols it applies to. */
  protocols: readonly Protocol[];
  move(context: MoveContext): Move;
  delivery?(context: MoveContext): Delivery;
  /** Agent settings the run needs (profile keys: `max_retries`, `request_timeout_s` ...). */
  settings?: Record<string, unknown>;
  /** The run's base URL is a port nobody listens on. */
  unreachable?: boolean;
}

/** The oracle: the plan's next call, or its answer. */
export function wellBehaved({ plan, turn }: MoveContext): Move {
  const call = plan.calls[turn];
  return call ? { kind: 'calls', calls: [{ id: `call_${turn}`, name: call.name, arguments: call.arguments }] } : { kind: 'answer', text: plan.answer };
}

/** The oracle one turn late: its first turn was spent on a `flawed` version of the first call. */
function flawFirst(flaw: (call: PlannedCall) => Move) {
  return (context: MoveContext): Move => {
    const first = context.plan.calls[0];
    if (context.turn === 0 && first) return flaw(first);
    return wellBehaved({ ...context, turn: first ? context.turn - 1 : context.turn });
  };
}

/** The oracle's calls written as text in a format, one call per turn. */
function asText(render: (call: PlannedCall) => string) {
  return (context: MoveContext): Move => {
    const move = wellBehaved(context);
    if (move.kind !== 'calls') return move;
    const call = context.plan.calls[context.turn]!;
    return { kind: 'text', text: render(call) };
  };
}

/** The oracle, except that the first request of each turn gets `deviation` once. */
function oncePerTurn(tag: string, deviation: Move) {
  return (context: MoveContext): Move => (context.once(`${tag}:${context.turn}`) ? deviation : wellBehaved(context));
}

const json = (value: unknown) => JSON.stringify(value);
const both = ['openai', 'anthropic'] as const;

export const BEHAVIOURS: Behaviour[] = [
  { name: 'well-behaved', absorbable: true, protocols: both, move: wellBehaved },
  { name: 'text: hermes <tool_call>', absorbable: true, protocols: both, move: asText((c) => `<tool_call>\n${json({ name: c.name, arguments: c.arguments })}\n</tool_call>`) },
  { name: 'text: llama3 JSON', absorbable: true, protocols: both, move: asText((c) => json({ name: c.name, parameters: c.arguments })) },
  { name: 'text: llama3 <|python_tag|>', absorbable: true, protocols: ['openai'], move: asText((c) => `<|python_tag|>${json({ name: c.name, parameters: c.arguments })}<|eom_id|>`) },
  { name: 'text: mistral [TOOL_CALLS]', absorbable: true, protocols: ['openai'], move: asText((c) => `[TOOL_CALLS] ${json([{ name: c.name, arguments: c.arguments, id: 'a1b2c3d4e' }])}`) },
  { name: 'text: fenced JSON', absorbable: true, protocols: both, move: asText((c) => `I will call a tool.\n\`\`\`json\n${json({ name: c.name, arguments: c.arguments })}\n\`\`\``) },
  {
    name: 'bad JSON arguments first',
    absorbable: true,
    protocols: both,
    // A trailing comma: invalid JSON whatever the arguments (`{"a":1,}`, `{,}`).
    move: flawFirst((c) => ({ kind: 'calls', calls: [{ id: 'call_bad', name: c.name, arguments: `${json(c.arguments).slice(0, -1)},}` }] })),
  },
  { name: 'call without a name first', absorbable: true, protocols: both, move: flawFirst((c) => ({ kind: 'calls', calls: [{ id: 'call_noname', arguments: c.arguments }] })) },
  { name: 'unknown tool first', absorbable: true, protocols: both, move: flawFirst(() => ({ kind: 'calls', calls: [{ id: 'call_ghost', name: 'ghost_delete_everything', arguments: {} }] })) },
  {
    name: 'calls without ids',
    absorbable: true,
    protocols: both,
    move: (context) => {
      const move = wellBehaved(context);
      return move.kind === 'calls' ? { ...move, calls: move.calls.map(({ id: _id, ...call }) => call) } : move;
    },
  },
  {
    name: 'arguments as an object',
    absorbable: true,
    protocols: ['openai'],
    move: (context) => {
      const move = wellBehaved(context);
      return move.kind === 'calls' ? { ...move, calls: move.calls.map((call) => ({ ...call, objectArguments: true })) } : move;
    },
  },
  {
    name: 'null content with calls',
    absorbable: true,
    protocols: ['openai'],
    move: (context) => {
      const move = wellBehaved(context);
      return move.kind === 'calls' ? { ...move, text: null } : move;
    },
  },
  { name: '503 once per turn', absorbable: true, protocols: both, move: oncePerTurn('503', { kind: 'http', status: 503 }) },
  { name: '429 once per turn', absorbable: true, protocols: both, move: oncePerTurn('429', { kind: 'http', status: 429, headers: { 'retry-after': '0' } }) },
  { name: 'non-JSON body once per turn', absorbable: true, protocols: both, move: oncePerTurn('html', { kind: 'not-json' }) },
  { name: 'empty choices once per turn', absorbable: true, protocols: both, move: oncePerTurn('empty', { kind: 'empty' }) },
  { name: 'connection reset once per turn', absorbable: true, protocols: both, move: oncePerTurn('reset', { kind: 'reset' }) },
  { name: 'slow stream', absorbable: true, protocols: both, move: wellBehaved, delivery: () => ({ slow: { chunks: 4, delayMs: 100 } }) },
  {
    name: 'slow stream past the timeout once',
    absorbable: true,
    protocols: both,
    move: wellBehaved,
    delivery: (context) => (context.turn === 0 && context.once('slow') ? { slow: { chunks: 4, delayMs: 600 } } : {}),
    settings: { request_timeout_s: 1 },
  },
  { name: 'usage absent', absorbable: true, protocols: both, move: wellBehaved, delivery: () => ({ noUsage: true }) },
  { name: '503 always', absorbable: false, protocols: both, move: () => ({ kind: 'http', status: 503 }), settings: { max_retries: 1 } },
  { name: 'content filter', absorbable: false, protocols: both, move: () => ({ kind: 'refusal' }) },
  { name: 'connection refused', absorbable: false, protocols: both, move: wellBehaved, unreachable: true, settings: { max_retries: 1 } },
  { name: 'token budget 1 token', absorbable: false, protocols: both, move: wellBehaved, settings: { max_tokens_per_episode: 1 } },
];

// ---------------------------------------------------------------------------------------------------------
// From a move to each protocol's step

export function openAIStep(move: Move, delivery: Delivery = {}): ScriptStep {
  const usage = delivery.noUsage ? { usage: null } : {};
  const slow = delivery.slow ? { slow: delivery.slow } : {};
  switch (move.kind) {
    case 'calls':
      return { message: { ...(move.text !== undefined ? { content: move.text } : {}), tool_calls: move.calls }, ...usage, ...slow };
    case 'text':
    case 'answer':
      return { message: { content: move.text }, ...usage, ...slow };
    case 'http':
      return { status: move.status, ...(move.headers ? { headers: move.headers } : {}) };
    case 'not-json':
      return { body: '<html><body><h1>502 Bad Gateway</h1></body></html>' };
    case 'empty':
      return { emptyChoices: true, ...usage };
    case 'refusal':
      return { message: { content: '' }, finish_reason: 'content_filter', ...usage };
    case 'reset':
      return { reset: true };
  }
}

export function anthropicStep(move: Move, delivery: Delivery = {}): AnthropicStep {
  const usage = delivery.noUsage ? { usage: null } : {};
  const slow = delivery.slow ? { slow: delivery.slow } : {};
  switch (move.kind) {
    case 'calls':
      return {
        message: {
          ...(move.text ? { text: move.text } : {}),
          tool_uses: move.calls.map((call) => ({ ...(call.id !== undefined ? { id: call.id } : {}), ...(call.name !== undefined ? { name: call.name } : {}), input: call.arguments })),
        },
        ...usage,
        ...slow,
      };
    case 'text':
    case 'answer':
      return { message: { text: move.text }, ...usage, ...slow };
    case 'http':
      return { status: move.status, ...(move.headers ? { headers: move.headers } : {}) };
    case 'not-json':
      return { body: '<html><body><h1>502 Bad Gateway</h1></body></html>' };
    case 'empty':
      return { notAMessage: true, ...usage };
    case 'refusal':
      return { message: { text: 'I cannot help with that.' }, stop_reason: 'refusal', ...usage };
    case 'reset':
      return { reset: true };
  }
}

/** The goal of a conversation: its first user message's text, in either protocol. */
export function goalOf(body: { messages: Array<{ role: string; content: unknown }> }): string {
  const first = body.messages.find((m) => m.role === 'user');
  const content = first?.content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((b: { text?: string }) => b.text ?? '').join('');
  return '';
}

/**
 * A script for a simulation: the behaviour's move for the conversation each request belongs to. `plans`
 * maps a goal (as shown to the agent) to its plan; an unknown goal is answered with text, never a call.
 */
export function scriptFor<Step>(behaviour: Behaviour, plans: ReadonlyMap<string, Plan>, toStep: (move: Move, delivery?: Delivery) => Step): (index: number, body: any) => Step {
  const served = new Set<string>();
  return (_index, body) => {
    const goal = goalOf(body);
    const plan = plans.get(goal) ?? { calls: [], answer: 'I do not know this task.' };
    const turn = body.messages.filter((m: { role: string }) => m.role === 'assistant').length;
    const context: MoveContext = {
      plan,
      turn,
      once: (tag) => {
        const key = `${goal}\u0000${tag}`;
        if (served.has(key)) return false;
        served.add(key);
        return true;
      },
    };
    return toStep(behaviour.move(context), behaviour.delivery?.(context));
  };
}
