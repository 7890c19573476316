/**
 * One episode as a trace, the common ground of every export: its model turns with the tool calls each turn
 * made (record/trace.ts, which the episode viewer reads too), and what a sealed run keeps private.
 *
 * What the record holds decides what a trace can say: the gateway's calls (arguments, results, faults,
 * latency), a model agent's turns (latency per turn, the calls it attempted with their turn, tokens and cost
 * as totals), the verdict tree with its evidence and the final answer. The model's text between calls and the
 * end state itself are not in the record, so no export invents them.
 */
import type { EpisodeRecord, NodeVerdict } from '../record/schema.ts';


/** What stands in for private task content in the export of a sealed run. */
export const PRIVATE = '[private: a sealed task; export with --include-private to include it]';

function redactVerdict(node: NodeVerdict): NodeVerdict {
  const { evidence, children, ...rest } = node;
  return { ...rest, ...(evidence !== undefined ? { evidence: PRIVATE } : {}), ...(children ? { children: children.map(redactVerdict) } : {}) };
}

/**
 * The episode with its private task content replaced by `PRIVATE`: the goal shown, every call's arguments and
 * result, the final answer, the verdict's evidence and leaf arguments' traces in error messages. What is left
 * is the shape of the episode: tools, statuses, faults, timings, tokens, cost and the verdict's values.
 */
export function redactEpisode(record: EpisodeRecord): EpisodeRecord {
  const { goal, answer, verdict, perturbed, ...rest } = record;
  return {
    ...rest,
    ...(goal !== undefined ? { goal: PRIVATE } : {}),
    ...(answer !== undefined ? { answer: PRIVATE } : {}),
    ...(verdict ? { verdict: redactVerdict(verdict) } : {}),
    calls: record.calls.map((call) => ({ ...call, arguments: PRIVATE, result: PRIVATE, ...(call.fault?.detail !== undefined ? { fault: { ...call.fault, detail: PRIVATE } } : {}) })),
    ...(record.error ? { error: { ...record.error, message: record.error.message, ...(record.error.stderr_tail !== undefined ? { stderr_tail: PRIVATE } : {}) } } : {}),
  };
}
