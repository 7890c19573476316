/**
 * Episodes as OpenTelemetry traces in OTLP/JSON (an `ExportTraceServiceRequest`, the body OTLP/HTTP takes
 * with `Content-Type: application/json`): one trace per episode, following the GenAI and MCP semantic
 * conventions.
 *
 *   invoke_agent {agent}        INTERNAL  the episode (gen_ai.operation.name invoke_agent, tokens, outcome)
 *     chat {model}              CLIENT    one per model turn (gen_ai.operation.name chat)
 *       tools/call {tool}       CLIENT    one per tool call (mcp.method.name tools/call, gen_ai.tool.*), a
 *                                         `mcpbench.fault` event when a fault was delivered
 *     judge                     INTERNAL  the predicate evaluated on the end state (the verdict tree)
 *
 * An agent without a model has no chat spans: its tool calls hang from the episode. The record keeps each
 * call's latency and each turn's, not their start times, so spans are laid end to end from the episode's
 * start (`mcpbench.timing` = `sequential` says so). Ids are derived from the work unit, so exporting a run
 * twice gives the same traces.
 */
import { createHash } from 'node:crypto';
import type { EpisodeRecord, RunRecord } from '../record/schema.ts';
import { resultText, turnsOf } from '../record/trace.ts';

type AnyValue = { stringValue: string } | { boolValue: boolean } | { intValue: string } | { doubleValue: number };

export interface OtlpAttribute {
  key: string;
  value: AnyValue;
}

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** 1 INTERNAL, 3 CLIENT. */
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: OtlpAttribute[];
  events: { timeUnixNano: string; name: string; attributes: OtlpAttribute[] }[];
  /** 0 UNSET, 1 OK, 2 ERROR. */
  status: { code: number; message?: string };
}

export interface OtlpTraceRequest {
  resourceSpans: {
    resource: { attributes: OtlpAttribute[] };
    scopeSpans: { scope: { name: string; version: string }; spans: OtlpSpan[] }[];
  }[];
}

const SPAN_KIND = { internal: 1, client: 3 } as const;
const STATUS = { unset: 0, ok: 1, error: 2 } as const;

function value(v: string | number | boolean): AnyValue {
  if (typeof v === 'boolean') return { boolValue: v };
  if (typeof v === 'number') return Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v };
  return { stringValue: v };
}

function attributes(values: Record<string, string | number | boolean | undefined>): OtlpAttribute[] {
  return Object.entries(values)
    .filter((e): e is [string, string | number | boolean] => e[1] !== undefined)
    .map(([key, v]) => ({ key, value: value(v) }));
}

const hex = (text: string, length: number) => createHash('sha256').update(text).digest('hex').slice(0, length);

/** Nanoseconds since the epoch as OTLP/JSON writes a fixed64: a decimal string. */
const nanos = (ms: number) => (BigInt(Math.round(ms * 1000)) * 1000n).toString();

const json = (v: unknown) => JSON.stringify(v) ?? 'null';

/** One episode's spans. */
export function episodeSpans(record: EpisodeRecord, goal?: string): OtlpSpan[] {
  const traceId = hex(`${record.run_id}/${record.work_unit}`, 32);
  const spanId = (label: string) => hex(`${traceId}/${label}`, 16);
  const start = Date.parse(record.started_at);
  const end = start + record.duration_ms;
  const at = (ms: number) => Math.min(ms, end);
  const model = record.model;
  const rootId = spanId('episode');
  const spans: OtlpSpan[] = [];
  const errored = record.status === 'agent_error' || record.status === 'infra_error';

  let clock = start;
  const toolSpan = (call: EpisodeRecord['calls'][number], parent: string): OtlpSpan => {
    const from = clock;
    clock += call.latency_ms;
    const failed = call.status !== 'ok';
    return {
      traceId,
      spanId: spanId(`call-${call.index}`),
      parentSpanId: parent,
      name: `tools/call ${call.tool}`,
      kind: SPAN_KIND.client,
      startTimeUnixNano: nanos(at(from)),
      endTimeUnixNano: nanos(at(clock)),
      attributes: attributes({
        'mcp.method.name': 'tools/call',
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': call.tool,
        'gen_ai.tool.call.id': `call-${call.index}`,
        'gen_ai.tool.type': 'extension',
        'gen_ai.tool.call.arguments': json(call.arguments),
        'gen_ai.tool.call.result': resultText(call.result),
        'error.type': failed ? (call.fault?.type ?? (call.status === 'tool-error' ? 'tool_error' : call.status)) : undefined,
        'mcpbench.call.status': call.status,
        'mcpbench.call.qualified': call.qualified,
        'mcpbench.fault.decided': call.decided,
      }),
      events: call.fault
        ? [{ timeUnixNano: nanos(at(from)), name: 'mcpbench.fault', attributes: attributes({ 'mcpbench.fault.type': call.fault.type, 'mcpbench.fault.executed': call.fault.executed, 'mcpbench.fault.detail': call.fault.detail }) }]
        : [],
      status: failed ? { code: STATUS.error, message: call.status } : { code: STATUS.unset },
    };
  };

  if (model) {
    for (const turn of turnsOf(record)) {
      const from = clock;
      clock += turn.latency_ms ?? 0;
      const id = spanId(`turn-${turn.index}`);
      const chat: OtlpSpan = {
        traceId,
        spanId: id,
        parentSpanId: rootId,
        name: `chat ${model.model}`,
        kind: SPAN_KIND.client,
        startTimeUnixNano: nanos(at(from)),
        endTimeUnixNano: '0',
        attributes: attributes({
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': model.protocol,
          'gen_ai.request.model': model.model,
          'mcpbench.turn': turn.index,
          'mcpbench.turn.latency_ms': turn.latency_ms,
          'mcpbench.turn.malformed_calls': turn.malformed.length || undefined,
        }),
        events: [],
        status: { code: STATUS.unset },
      };
      spans.push(chat);
      for (const call of turn.calls) spans.push(toolSpan(call, id));
      chat.endTimeUnixNano = nanos(at(clock));
    }
  } else for (const call of record.calls) spans.push(toolSpan(call, rootId));

  if (record.verdict) {
    spans.push({
      traceId,
      spanId: spanId('judge'),
      parentSpanId: rootId,
      name: 'judge',
      kind: SPAN_KIND.internal,
      startTimeUnixNano: nanos(at(clock)),
      endTimeUnixNano: nanos(end),
      attributes: attributes({
        'mcpbench.verdict.value': record.verdict.value ?? 'undecided',
        'mcpbench.verdict.tree': json(record.verdict),
        'mcpbench.end_state': record.end_state,
      }),
      events: [],
      status: { code: STATUS.unset },
    });
  }

  spans.unshift({
    traceId,
    spanId: rootId,
    name: `invoke_agent ${record.agent}`,
    kind: SPAN_KIND.internal,
    startTimeUnixNano: nanos(start),
    endTimeUnixNano: nanos(end),
    attributes: attributes({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': record.agent,
      'gen_ai.conversation.id': record.work_unit,
      'gen_ai.provider.name': model?.protocol,
      'gen_ai.request.model': model?.model,
      'gen_ai.usage.input_tokens': model ? Math.round(model.prompt_tokens) : undefined,
      'gen_ai.usage.output_tokens': model ? Math.round(model.completion_tokens) : undefined,
      'error.type': errored ? record.error?.code : undefined,
      'mcpbench.run_id': record.run_id,
      'mcpbench.work_unit': record.work_unit,
      'mcpbench.task_id': record.task_id,
      'mcpbench.task_hash': record.task_hash,
      'mcpbench.trial': record.trial,
      'mcpbench.variant': record.variant,
      'mcpbench.fault_profile': record.fault_profile,
      'mcpbench.perturbation': record.perturbation,
      'mcpbench.status': record.status,
      'mcpbench.passed': record.passed,
      'mcpbench.goal': record.goal ?? goal,
      'mcpbench.answer': record.answer,
      'mcpbench.cost': model?.cost ?? undefined,
      'mcpbench.currency': model?.cost != null ? (model.currency ?? 'USD') : undefined,
      'mcpbench.timing': 'sequential',
    }),
    events: [],
    status: errored ? { code: STATUS.error, message: record.error?.message ?? record.status } : { code: STATUS.unset },
  });
  return spans;
}

/** The episodes as one export request (one resource: the run; one scope: mcpbench); `goalOf`: the task's goal of an episode. */
export function toOtlp(records: readonly EpisodeRecord[], run: Pick<RunRecord, 'run_id' | 'mcpbench_version' | 'agent'>, goalOf: (record: EpisodeRecord) => string | undefined = () => undefined): OtlpTraceRequest {
  return {
    resourceSpans: [
      {
        resource: { attributes: attributes({ 'service.name': 'mcpbench', 'service.version': run.mcpbench_version, 'mcpbench.run_id': run.run_id, 'gen_ai.agent.name': run.agent }) },
        scopeSpans: [{ scope: { name: 'mcpbench', version: run.mcpbench_version ?? 'unknown' }, spans: records.flatMap((r) => episodeSpans(r, goalOf(r))) }],
      },
    ],
  };
}
