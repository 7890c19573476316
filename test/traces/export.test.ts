/**
 * `mcpbench export`: a real model run (the openai agent against the local simulation, faults injected)
 * exported as ATIF trajectories and as OTLP/JSON. ATIF is checked against the format's schema (strict, as
 * Harbor's models); OTLP against the OpenTelemetry protobuf definitions as compiled in the OpenTelemetry JS
 * SDK's @opentelemetry/otlp-transformer (a field or type the proto does not have fails the round trip). A
 * sealed run's export leaves its private task content out unless asked.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { openRun } from '../../server/src/record/run-folder.ts';
import type { EpisodeRecord } from '../../server/src/record/schema.ts';
import { latestByWorkUnit } from '../../server/src/record/work-units.ts';
import { loadRunTasks } from '../../server/src/tasks/load.ts';
import { AtifTrajectorySchema, type AtifTrajectory } from '../../server/src/traces/atif.ts';
import { resultText, turnsOf } from '../../server/src/record/trace.ts';
import { PRIVATE } from '../../server/src/traces/episode-trace.ts';
import { exportRun } from '../../server/src/traces/export.ts';
import type { OtlpTraceRequest } from '../../server/src/traces/otlp.ts';
import { runCli } from '../../server/src/cli/main.ts';
import { modelRun, type ModelRun } from './model-run.ts';

// The protobufjs static module compiled from opentelemetry-proto, as the SDK ships it.
const requireCjs = createRequire(__filename);
const { opentelemetry } = requireCjs('@opentelemetry/otlp-transformer/build/src/generated/root.js');
const ExportTraceServiceRequest = opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

let run: ModelRun;
let sealed: ModelRun;

before(async () => {
  run = await modelRun({ faults: 'empty-only', faultRate: 0.6, seed: 11 });
  sealed = await modelRun({ sealed: true, seed: 3 });
});

after(() => {
  for (const r of [run, sealed]) if (r) rmSync(r.work, { recursive: true, force: true });
});

const standing = (directory: string): EpisodeRecord[] => latestByWorkUnit([...openRun(directory).episodes]);

function readTrajectories(folder: string): Map<string, AtifTrajectory> {
  return new Map(readdirSync(folder).map((name) => [name.replace(/\.json$/, ''), AtifTrajectorySchema.parse(JSON.parse(readFileSync(join(folder, name), 'utf8')))]));
}

test('the run the exports are made of is a model run with faults delivered', () => {
  const records = standing(run.directory);
  assert.equal(records.length, 3);
  assert.ok(records.every((r) => r.model && r.model.turns > 1), 'every episode has model turns');
  assert.ok(records.some((r) => r.calls.some((c) => c.fault)), 'some call carries a fault');
});

test('atif: one trajectory per episode, valid, with the goal, every turn, every call and its result, tokens and cost', () => {
  const out = join(run.work, 'atif');
  const result = exportRun(run.directory, { format: 'atif', out });
  assert.deepEqual([result.episodes, result.redacted], [3, false]);
  const trajectories = readTrajectories(out);
  const tasks = loadRunTasks(openRun(run.directory).config);
  for (const record of standing(run.directory)) {
    const t = trajectories.get(record.work_unit);
    assert.ok(t, `a trajectory for ${record.task_id}`);
    assert.equal(t.schema_version, 'ATIF-v1.7');
    assert.deepEqual([t.steps[0]!.source, t.steps[0]!.message], ['user', tasks.get(record.task_hash)!.goal]);
    const agentSteps = t.steps.filter((s) => s.source === 'agent');
    assert.equal(agentSteps.length, turnsOf(record).length + (record.answer !== undefined && turnsOf(record).at(-1)!.calls.length > 0 ? 1 : 0));
    const calls = agentSteps.flatMap((s) => s.tool_calls ?? []);
    assert.deepEqual(calls.map((c) => c.function_name), record.calls.map((c) => c.tool));
    assert.deepEqual(calls.map((c) => c.arguments), record.calls.map((c) => c.arguments));
    const observed = agentSteps.flatMap((s) => s.observation?.results ?? []);
    assert.deepEqual(observed.map((o) => o.content), record.calls.map((c) => resultText(c.result)));
    assert.deepEqual(calls.filter((c) => c.extra?.fault).map((c) => c.tool_call_id), record.calls.filter((c) => c.fault).map((c) => `call-${c.index}`));
    assert.equal(t.steps.at(-1)!.message, record.answer ?? '');
    assert.equal(t.final_metrics?.total_prompt_tokens, record.model!.prompt_tokens);
    assert.equal(t.final_metrics?.total_completion_tokens, record.model!.completion_tokens);
    assert.equal(t.final_metrics?.total_cost_usd, record.model!.cost);
    assert.equal((t.extra?.mcpbench as { status: string }).status, record.status);
  }
});

test('atif: the schema refuses what the format forbids (unknown fields, steps out of order, a result of no call)', () => {
  const [t] = readTrajectories(join(run.work, 'atif')).values();
  assert.ok(t);
  const broken = [
    { ...t, unknown_field: 1 },
    { ...t, steps: t.steps.map((s, i) => ({ ...s, step_id: i + 2 })) },
    { ...t, steps: [{ ...t.steps[0]!, tool_calls: [] }] },
    { ...t, steps: t.steps.map((s) => (s.observation ? { ...s, observation: { results: [{ source_call_id: 'nobody', content: 'x' }] } } : s)) },
  ];
  broken.forEach((value, i) => assert.equal(AtifTrajectorySchema.safeParse(value).success, false, `broken trajectory ${i} refused`));
});

/** OTLP/JSON as protobufjs reads JSON-mapped messages: trace and span ids are hex in OTLP/JSON, bytes in proto. */
function hexIdsToBytes(request: OtlpTraceRequest): unknown {
  return {
    resourceSpans: request.resourceSpans.map((rs) => ({
      ...rs,
      scopeSpans: rs.scopeSpans.map((ss) => ({
        ...ss,
        spans: ss.spans.map((s) => ({ ...s, traceId: Buffer.from(s.traceId, 'hex'), spanId: Buffer.from(s.spanId, 'hex'), ...(s.parentSpanId ? { parentSpanId: Buffer.from(s.parentSpanId, 'hex') } : {}) })),
      })),
    })),
  };
}

/** Proto3 defaults left out: empty lists and messages, zero enums (a status UNSET). */
function withoutDefaults(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutDefaults);
  if (typeof value !== 'object' || value === null) return value;
  const kept = Object.entries(value)
    .map(([k, v]) => [k, withoutDefaults(v)] as const)
    .filter(([k, v]) => !(Array.isArray(v) && v.length === 0) && !(typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0) && !(k === 'code' && v === 0));
  return Object.fromEntries(kept);
}

function bytesToHex(value: unknown): unknown {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('hex');
  if (Array.isArray(value)) return value.map(bytesToHex);
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, bytesToHex(v)]));
  return value;
}

test('otlp: an ExportTraceServiceRequest the OpenTelemetry proto reads back field for field, one trace per episode', () => {
  const file = join(run.work, 'otlp.json');
  exportRun(run.directory, { format: 'otlp', out: file });
  const request = JSON.parse(readFileSync(file, 'utf8')) as OtlpTraceRequest;
  const asProto = hexIdsToBytes(request);
  const message = ExportTraceServiceRequest.fromObject(asProto);
  const decoded = ExportTraceServiceRequest.decode(ExportTraceServiceRequest.encode(message).finish());
  const back = bytesToHex(ExportTraceServiceRequest.toObject(decoded, { longs: String, enums: Number, bytes: Buffer, defaults: false }));
  // Every field the export wrote is one the proto has, of its type (proto3 leaves out fields at their default).
  assert.deepEqual(withoutDefaults(back), withoutDefaults(request));
  // The check can fail: a field the proto does not have, or a kind it does not have, does not come back.
  const roundTrip = (r: OtlpTraceRequest) => withoutDefaults(bytesToHex(ExportTraceServiceRequest.toObject(ExportTraceServiceRequest.fromObject(hexIdsToBytes(r)), { longs: String, enums: Number, bytes: Buffer })));
  const span0 = request.resourceSpans[0]!.scopeSpans[0]!.spans[0]!;
  for (const bad of [{ ...span0, startTimeUnixNanos: span0.startTimeUnixNano }, { ...span0, attributes: [{ key: 'k', value: { stringVal: 'v' } }] }]) {
    const wrong = { resourceSpans: [{ ...request.resourceSpans[0]!, scopeSpans: [{ ...request.resourceSpans[0]!.scopeSpans[0]!, spans: [bad as OtlpTraceRequest['resourceSpans'][0]['scopeSpans'][0]['spans'][0]] }] }] };
    assert.notDeepEqual(roundTrip(wrong), withoutDefaults(wrong));
  }

  const spans = request.resourceSpans[0]!.scopeSpans[0]!.spans;
  const records = standing(run.directory);
  const traces = new Map<string, typeof spans>();
  for (const span of spans) traces.set(span.traceId, [...(traces.get(span.traceId) ?? []), span]);
  assert.equal(traces.size, records.length);
  const attr = (span: (typeof spans)[number], key: string) => {
    const v = span.attributes.find((a) => a.key === key)?.value;
    return v && Object.values(v)[0];
  };
  for (const trace of traces.values()) {
    const ids = new Set(trace.map((s) => s.spanId));
    const roots = trace.filter((s) => !s.parentSpanId);
    assert.equal(roots.length, 1);
    assert.ok(trace.every((s) => !s.parentSpanId || ids.has(s.parentSpanId)), 'every parent is in the trace');
    const record = records.find((r) => r.work_unit === attr(roots[0]!, 'mcpbench.work_unit'))!;
    assert.equal(attr(roots[0]!, 'gen_ai.operation.name'), 'invoke_agent');
    assert.equal(attr(roots[0]!, 'gen_ai.usage.input_tokens'), String(record.model!.prompt_tokens));
    const chats = trace.filter((s) => attr(s, 'gen_ai.operation.name') === 'chat');
    assert.equal(chats.length, turnsOf(record).length);
    const tools = trace.filter((s) => attr(s, 'mcp.method.name') === 'tools/call');
    assert.deepEqual(tools.map((s) => attr(s, 'gen_ai.tool.name')), record.calls.map((c) => c.tool));
    assert.ok(tools.every((s) => chats.some((c) => c.spanId === s.parentSpanId)), 'a tool call hangs from its model turn');
    assert.deepEqual(tools.map((s) => s.events.map((e) => e.name)), record.calls.map((c) => (c.fault ? ['mcpbench.fault'] : [])));
    assert.equal(trace.filter((s) => s.name === 'judge').length, 1);
    for (const s of trace) assert.ok(BigInt(s.startTimeUnixNano) <= BigInt(s.endTimeUnixNano), `${s.name} ends after it starts`);
  }
  // The same run exported twice is the same traces.
  exportRun(run.directory, { format: 'otlp', out: join(run.work, 'again.json') });
  assert.equal(readFileSync(join(run.work, 'again.json'), 'utf8'), readFileSync(file, 'utf8'));
});

test('a sealed run: its export leaves out goals, arguments, results and answers unless --include-private', () => {
  const records = standing(sealed.directory);
  assert.ok(records.length > 0 && records.every((r) => r.passed));
  const secrets = records.flatMap((r) => [r.answer, ...r.calls.map((c) => resultText(c.result))]).filter((s): s is string => typeof s === 'string' && s.length > 8);
  assert.ok(secrets.length > 0);
  const hidden = exportRun(sealed.directory, { format: 'otlp', out: join(sealed.work, 'otlp.json') });
  assert.equal(hidden.redacted, true);
  const text = readFileSync(join(sealed.work, 'otlp.json'), 'utf8');
  for (const secret of secrets) assert.ok(!text.includes(JSON.stringify(secret).slice(1, -1)), `not in the export: ${secret.slice(0, 40)}`);
  assert.ok(text.includes(PRIVATE.replace(/"/g, '\\"')));
  exportRun(sealed.directory, { format: 'atif', out: join(sealed.work, 'atif') });
  for (const t of readTrajectories(join(sealed.work, 'atif')).values()) {
    assert.equal(t.steps[0]!.message, PRIVATE);
    assert.ok(t.steps.flatMap((s) => s.observation?.results ?? []).every((o) => o.content === PRIVATE));
  }
  const shown = exportRun(sealed.directory, { format: 'otlp', out: join(sealed.work, 'private.json'), includePrivate: true });
  assert.equal(shown.redacted, false);
  const full = readFileSync(join(sealed.work, 'private.json'), 'utf8');
  assert.ok(secrets.every((secret) => full.includes(JSON.stringify(secret).slice(1, -1))));
});

test('mcpbench export: writes into the run folder by default, says where; an unknown episode is a usage error', async () => {
  let stdout = '';
  let stderr = '';
  const io = { stdout: (t: string) => (stdout += t), stderr: (t: string) => (stderr += t), cwd: run.work };
  assert.equal(await runCli(['export', run.directory, '--format', 'atif'], io), 0, stderr);
  assert.match(stdout, /3 episodes exported as atif: .*atif/);
  assert.equal(readdirSync(join(run.directory, 'atif')).length, 3);
  const [first] = standing(run.directory);
  assert.equal(await runCli(['export', run.directory, '--format', 'otlp', '--episode', first!.work_unit.slice(0, 12)], io), 0, stderr);
  const one = JSON.parse(readFileSync(join(run.directory, 'otlp.json'), 'utf8')) as OtlpTraceRequest;
  assert.equal(new Set(one.resourceSpans[0]!.scopeSpans[0]!.spans.map((s) => s.traceId)).size, 1);
  assert.equal(await runCli(['export', run.directory, '--format', 'otlp', '--episode', 'ffffffffffff0000'], io), 2);
  assert.match(stderr, /no episode has a work unit starting with ffffffffffff0000/);
  assert.equal(await runCli(['export', run.directory, '--format', 'csv'], io), 2);
});
