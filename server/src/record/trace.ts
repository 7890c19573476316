/**
 * An episode's record read as a timeline: its model turns with the tool calls each made, each call's result
 * as text, and whether a run's tasks are private (a sealed set). Read by the episode viewer (scoring/), the
 * exports (traces/) and the extension alike.
 */
import type { AttemptedCallRecord, CallRecord, EpisodeRecord, RunRecord } from './schema.ts';

/** Whether the run measured a sealed set (its task files are entries of `*.sealed.json`). */
export function isSealedRun(config: Pick<RunRecord, 'task_files'>): boolean {
  return config.task_files.some((file) => file.includes('.sealed.json'));
}

/** One model turn (or, for an agent without a model, one call): the calls it made and how long it took. */
export interface TraceTurn {
  /** 0-based turn. */
  index: number;
  /** Milliseconds of the model request that produced the turn (model agents only). */
  latency_ms?: number;
  /** The gateway calls it made, in order. */
  calls: CallRecord[];
  /** Calls it wrote that the agent refused before the gateway (malformed). */
  malformed: AttemptedCallRecord[];
}

/**
 * The episode's turns. A model agent's attempted calls carry their turn; the `sent` ones reached the gateway in
 * order, so the k-th sent call is the gateway's k-th call. Gateway calls left over (an agent whose attempts
 * were not all recorded) go to the last turn. Without a model record, each call is a turn of its own.
 */
export function turnsOf(record: EpisodeRecord): TraceTurn[] {
  const model = record.model;
  if (!model) return record.calls.map((call, index) => ({ index, calls: [call], malformed: [] }));
  const count = Math.max(model.turns, model.turn_latency_ms.length, ...model.calls.map((c) => c.turn + 1), record.calls.length > 0 ? 1 : 0);
  const turns: TraceTurn[] = Array.from({ length: count }, (_, index) => ({
    index,
    ...(model.turn_latency_ms[index] !== undefined ? { latency_ms: model.turn_latency_ms[index] } : {}),
    calls: [],
    malformed: [],
  }));
  let next = 0;
  for (const attempt of model.calls) {
    const turn = turns[attempt.turn]!;
    if (attempt.status === 'malformed') turn.malformed.push(attempt);
    else if (next < record.calls.length) turn.calls.push(record.calls[next++]!);
  }
  for (; next < record.calls.length; next++) turns[turns.length - 1]!.calls.push(record.calls[next]!);
  return turns;
}

/** A tool result as text: the text parts of an MCP CallToolResult, else its JSON. */
export function resultText(result: unknown): string {
  if (typeof result === 'object' && result !== null && 'content' in result && Array.isArray(result.content)) {
    const texts = result.content.map((part: unknown) => (typeof part === 'object' && part !== null && 'text' in part && typeof part.text === 'string' ? part.text : JSON.stringify(part)));
    return texts.join('\n');
  }
  return typeof result === 'string' ? result : (JSON.stringify(result) ?? 'null');
}

