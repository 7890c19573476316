/**
 * The gateway in front of a real simulated travel server (a plain child process), driven by an MCP SDK
 * client over streamable HTTP as an agent would: it exposes exactly the task's tools, refuses unlisted
 * tools and calls past the budget, applies every fault type as faults.ts documents, reports infrastructure
 * failures, and replays the same trace under the same seed. Needs dist/cli.js (`node esbuild.mjs`).
 */
import { StreamClientTransport } from '../stream-client-transport.ts';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { loadRegistry, type Registry } from '../../server/src/mcp/registry.ts';
import { decideFault } from '../../server/src/runner/faults.ts';
import { Gateway } from '../../server/src/runner/gateway.ts';
import { startServer, type RunningServer } from '../../server/src/runner/launch.ts';
import { seedNamespace, snapshotNamespace } from '../../server/src/runner/state.ts';
import { TaskSchema, type Task } from '../../server/src/tasks/model.ts';
import { FAULT_TYPES, type FaultProfile, type FaultType, type FaultOptions } from '../../server/src/record/faults.ts';
import type { CallRecord } from '../../server/src/record/schema.ts';
import type { CallStart } from '../../server/src/runner/events.ts';

const FLIGHTS = [
  { id: 'BA-200', origin: 'LON', dest: 'PAR', date: '2026-01-05', price: 500, seats_left: 10 },
  { id: 'AA-500', origin: 'LON', dest: 'PAR', date: '2026-01-05', price: 300, seats_left: 10 },
];
const SEARCH = { origin: 'LON', dest: 'PAR', date: '2026-01-05' };
const FAST: Partial<FaultOptions> = { timeoutMs: 5, latencyMs: 5, retryAfterMs: 1000, cascadeLength: 2 };

function makeTask(overrides: { max_steps?: number; available_tools?: string[] } = {}): Task {
  return TaskSchema.parse({
    id: 'travel-gateway-test-001',
    server: 'travel',
    category: 'composition',
    difficulty: 'easy',
    max_steps: overrides.max_steps ?? 20,
    goal: 'Book the cheapest flight from LON to PAR on 2026-01-05 for Bob.',
    initial_state: { travel: { flights: FLIGHTS } },
    available_tools: overrides.available_tools ?? ['travel.search_flights', 'travel.hold_flight', 'travel.confirm_booking'],
    success_predicate: { 'travel.reservationConfirmed': { flight_id: 'AA-500', passenger: 'Bob' } },
    reference_solutions: [[{ tool: 'travel.hold_flight', arguments: { flight_id: 'AA-500' } }]],
  });
}

let registryPromise: Promise<Registry> | undefined;
const registry = () => (registryPromise ??= loadRegistry());

interface Episode {
  gateway: Gateway;
  client: Client;
  server: RunningServer;
  onCalls: CallRecord[];
  /** What the gateway reported, in order: `started <index>` as a call arrives, `answered <index>` as it finishes. */
  reported: string[];
  started: CallStart[];
  /** What the agent got: the tool result, or the JSON-RPC error its client raised. */
  call(name: string, args?: Record<string, unknown>): Promise<{ result: CallToolResult } | { error: { code: number; message: string } }>;
  reservations(): Promise<Record<string, { status: string }>>;
}

async function episode(
  setup: { task?: Task; profile?: FaultProfile; seed?: number; options?: Partial<FaultOptions> },
  body: (e: Episode) => Promise<void>,
): Promise<void> {
  const reg = await registry();
  const info = reg.get('travel')!;
  const task = setup.task ?? makeTask();
  const sandbox = mkdtempSync(join(tmpdir(), 'mcpbench-gateway-'));
  await seedNamespace(info, { flights: FLIGHTS }, sandbox);
  const server = await startServer(info, sandbox, { backend: 'process', startTimeoutMs: 20_000 });
  const onCalls: CallRecord[] = [];
  const reported: string[] = [];
  const started: CallStart[] = [];
  const gateway = new Gateway({
    task,
    registry: reg,
    servers: new Map([['travel', server]]),
    ...(setup.profile && { faults: { profile: setup.profile, seed: setup.seed ?? 1, trial: 0, options: { ...FAST, ...setup.options } } }),
    onCallStarted: (c) => {
      started.push(c);
      reported.push(`started ${c.index}`);
    },
    onCall: (c) => {
      onCalls.push(c);
      reported.push(`answered ${c.index}`);
    },
  });
  const client = new Client({ name: 'test-agent', version: '0' });
  try {
    const { url } = await gateway.listen();
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    await body({
      gateway,
      client,
      server,
      onCalls,
      reported,
      started,
      call: async (name, args = {}) => {
        try {
          return { result: (await client.callTool({ name, arguments: args })) as CallToolResult };
        } catch (error) {
          if (error instanceof McpError) return { error: { code: error.code, message: error.message } };
          throw error;
        }
      },
      reservations: async () => ((await snapshotNamespace(info, sandbox)) as { reservations: Record<string, { status: string }> }).reservations,
    });
  } finally {
    await client.close().catch(() => undefined);
    await gateway.close();
    await server.close();
    rmSync(sandbox, { recursive: true, force: true });
  }
}

/** Every call gets `type`. */
const always = (type: FaultType): FaultProfile => ({ name: `${type}-always`, failure_rate: 1, fault_weights: { [type]: 1 } });

/** A seed under which calls 0.. of the test task get exactly `pattern` (found with decideFault itself). */
function seedFor(profile: FaultProfile, pattern: (FaultType | undefined)[]): number {
  for (let seed = 0; seed < 100_000; seed++) {
    if (pattern.every((want, callIndex) => decideFault(profile, { seed, taskId: makeTask().id, trial: 0, callIndex }) === want)) return seed;
  }
  throw new Error('no seed gives that pattern');
}

const text = (r: { result: CallToolResult } | { error: unknown }): string => {
  assert.ok('result' in r, `expected a tool result, got ${JSON.stringify(r)}`);
  const first = r.result.content[0];
  return first?.type === 'text' ? first.text : '';
};
const isError = (r: { result: CallToolResult } | { error: unknown }) => 'result' in r && r.result.isError === true;
const withoutLatency = (calls: CallRecord[]) => JSON.stringify(calls.map(({ latency_ms: _latency, ...rest }) => rest));

test('the gateway lists exactly the available tools as <ns>_<tool>, with their declared schema and annotations', async () => {
  await episode({}, async ({ client }) => {
    const reg = await registry();
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ['travel_search_flights', 'travel_hold_flight', 'travel_confirm_booking']);
    for (const tool of tools) {
      const declared = reg.tool(tool.name.replace('_', '.'))!.declaration;
      assert.equal(tool.description, declared.description);
      assert.deepEqual(tool.inputSchema, declared.inputSchema);
      assert.deepEqual(tool.annotations, declared.annotations);
      assert.equal(tool.outputSchema, undefined, 'no outputSchema: data faults must reach the agent, not trip its client');
    }
  });
});

test('a listed tool whose namespace has no running server is refused when the gateway is built', async () => {
  const reg = await registry();
  assert.throws(
    () => new Gateway({ task: makeTask({ available_tools: ['travel.search_flights', 'calendar.book_meeting'] }), registry: reg, servers: new Map() }),
    /no running server for namespace "travel"/,
  );
  assert.throws(() => new Gateway({ task: makeTask({ available_tools: ['travel.fly_me'] }), registry: reg, servers: new Map() }), /travel\.fly_me is not declared/);
});

test('without faults a call is forwarded and answered as the server answers, recorded in order', async () => {
  await episode({}, async ({ gateway, server, call, onCalls, reservations }) => {
    const searched = await call('travel_search_flights', SEARCH);
    assert.deepEqual(searched, { result: await server.callTool('search_flights', SEARCH) });
    const held = await call('travel_hold_flight', { flight_id: 'AA-500' });
    assert.equal(isError(held), false);
    const unknown = await call('travel_hold_flight', { flight_id: 'ZZ-999' });
    assert.match(text(unknown), /Unknown flight id "ZZ-999"/);
    assert.equal((await reservations())['AA-500']?.status, 'held');

    const calls = gateway.calls();
    assert.deepEqual(calls.map((c) => [c.index, c.tool, c.qualified, c.status]), [
      [0, 'travel_search_flights', 'travel.search_flights', 'ok'],
      [1, 'travel_hold_flight', 'travel.hold_flight', 'ok'],
      [2, 'travel_hold_flight', 'travel.hold_flight', 'tool-error'],
    ]);
    assert.deepEqual(calls[1]!.arguments, { flight_id: 'AA-500' });
    assert.deepEqual(calls[1]!.result, 'result' in held ? held.result : undefined);
    assert.ok(calls.every((c) => c.fault === undefined && c.latency_ms >= 0));
    assert.deepEqual(onCalls, calls);
    assert.deepEqual(gateway.counts(), { tool_calls: 3, unlisted: 0, over_budget: 0, errors_seen: 1 });
    assert.equal(gateway.infraError(), undefined);
  });
});

test('unlisted tools (invented, of another namespace, or of the task namespace but not listed) are refused and counted', async () => {
  await episode({ task: makeTask({ max_steps: 1 }) }, async ({ gateway, call }) => {
    for (const name of ['travel_cancel_everything', 'calendar_book_meeting', 'travel_get_itinerary', 'travel.search_flights']) {
      const answer = await call(name, {});
      assert.ok(isError(answer), name);
      assert.match(text(answer), new RegExp(`Unknown tool "${name.replace('.', '\\.')}".*travel_search_flights, travel_hold_flight, travel_confirm_booking`));
    }
    // Unlisted calls do not spend the budget: the one allowed call still goes through.
    assert.equal(isError(await call('travel_search_flights', SEARCH)), false);
    assert.deepEqual(gateway.calls().map((c) => [c.status, c.qualified]), [
      ['unlisted', undefined],
      ['unlisted', undefined],
      ['unlisted', undefined],
      ['unlisted', undefined],
      ['ok', 'travel.search_flights'],
    ]);
    assert.deepEqual(gateway.counts(), { tool_calls: 1, unlisted: 4, over_budget: 0, errors_seen: 4 });
  });
});

test('after max_steps calls nothing more is forwarded', async () => {
  await episode({ task: makeTask({ max_steps: 2 }) }, async ({ gateway, call, reservations }) => {
    await call('travel_search_flights', SEARCH);
    await call('travel_hold_flight', { flight_id: 'AA-500' });
    const refused = await call('travel_hold_flight', { flight_id: 'BA-200' });
    assert.match(text(refused), /Step budget exhausted: this task allows 2 tool calls/);
    assert.deepEqual(Object.keys(await reservations()), ['AA-500'], 'the third call never reached the server');
    assert.deepEqual(gateway.calls().map((c) => c.status), ['ok', 'ok', 'over-budget']);
    assert.equal(gateway.budgetExceeded(), true);
    assert.deepEqual(gateway.counts(), { tool_calls: 2, unlisted: 0, over_budget: 1, errors_seen: 1 });
  });
});

test('TransientTimeout: a timeout error after the delay; the server did not run the call unless timeoutExecutes', async () => {
  for (const timeoutExecutes of [false, true]) {
    await episode({ profile: always('TransientTimeout'), options: { timeoutExecutes } }, async ({ gateway, call, reservations }) => {
      const answer = await call('travel_hold_flight', { flight_id: 'AA-500' });
      assert.ok('error' in answer);
      assert.equal(answer.error.code, -32001);
      assert.match(answer.error.message, /Request timed out/);
      assert.equal((await reservations())['AA-500']?.status, timeoutExecutes ? 'held' : undefined);
      const [record] = gateway.calls();
      assert.equal(record!.status, 'fault');
      assert.deepEqual(record!.fault, { type: 'TransientTimeout', executed: timeoutExecutes, detail: 'no answer within 5 ms' });
      assert.deepEqual(record!.result, { error: { code: -32001, message: 'Request timed out: no answer from the travel server within 5 ms' } });
      assert.equal(gateway.counts().errors_seen, 1);
    });
  }
});

test('HighLatency: the real result, late', async () => {
  await episode({ profile: always('HighLatency') }, async ({ gateway, server, call, reservations }) => {
    const answer = await call('travel_search_flights', SEARCH);
    assert.deepEqual(answer, { result: await server.callTool('search_flights', SEARCH) });
    await call('travel_hold_flight', { flight_id: 'AA-500' });
    assert.equal((await reservations())['AA-500']?.status, 'held');
    assert.deepEqual(gateway.calls().map((c) => [c.status, c.fault]), [
      ['fault', { type: 'HighLatency', executed: true, detail: 'delayed by 5 ms' }],
      ['fault', { type: 'HighLatency', executed: true, detail: 'delayed by 5 ms' }],
    ]);
    assert.equal(gateway.counts().errors_seen, 0);
  });
});

test('ConnectionReset: a JSON-RPC transport error, not an isError result; the call never reached the server', async () => {
  await episode({ profile: always('ConnectionReset') }, async ({ gateway, call, reservations }) => {
    const answer = await call('travel_hold_flight', { flight_id: 'AA-500' });
    assert.ok('error' in answer, 'the agent client raised an error');
    assert.equal(answer.error.code, -32000);
    assert.match(answer.error.message, /ECONNRESET/);
    assert.deepEqual(await reservations(), {});
    assert.deepEqual(gateway.calls()[0]!.fault, { type: 'ConnectionReset', executed: false });
  });
});

test('SoftRateLimit: 429 with retry_after_ms; the namespace stays limited within the window and recovers after it', async () => {
  const profile: FaultProfile = { name: 'soft', failure_rate: 0.5, fault_weights: { SoftRateLimit: 1 } };
  let clock = 1_000;
  await episode(
    { profile, seed: seedFor(profile, ['SoftRateLimit', undefined, undefined]), options: { retryAfterMs: 1000, now: () => clock } },
    async ({ gateway, call, reservations }) => {
      const first = await call('travel_hold_flight', { flight_id: 'AA-500' });
      assert.ok(isError(first));
      assert.match(text(first), /^429 Too Many Requests: .*retry_after_ms: 1000/);
      assert.deepEqual('result' in first && first.result.structuredContent, { error: 'rate_limited', status: 429, retry_after_ms: 1000 });
      clock += 999;
      const retriedTooSoon = await call('travel_hold_flight', { flight_id: 'AA-500' });
      assert.match(text(retriedTooSoon), /^429 Too Many Requests/);
      assert.deepEqual(await reservations(), {});
      clock += 1;
      const afterBackOff = await call('travel_hold_flight', { flight_id: 'AA-500' });
      assert.equal(isError(afterBackOff), false);
      assert.equal((await reservations())['AA-500']?.status, 'held');
      assert.deepEqual(gateway.calls().map((c) => [c.status, c.fault]), [
        ['fault', { type: 'SoftRateLimit', executed: false, detail: 'retry_after_ms=1000' }],
        ['fault', { type: 'SoftRateLimit', executed: false, detail: 'within the retry-after window of call 0' }],
        ['ok', undefined],
      ]);
    },
  );
});

test('HardRateLimit: this and every later call to the namespace fail, whatever later decisions say', async () => {
  const profile: FaultProfile = { name: 'hard', failure_rate: 0.5, fault_weights: { HardRateLimit: 1 } };
  await episode({ profile, seed: seedFor(profile, ['HardRateLimit', undefined, undefined, undefined]) }, async ({ gateway, call, reservations }) => {
    for (let i = 0; i < 4; i++) {
      const answer = await call('travel_hold_flight', { flight_id: 'AA-500' });
      assert.match(text(answer), /^429 Too Many Requests: the travel API quota of this account is exhausted/);
    }
    assert.deepEqual(await reservations(), {});
    assert.deepEqual(gateway.calls().map((c) => c.fault?.detail), [
      'the namespace stays rate-limited for the rest of the episode',
      'the travel namespace is rate-limited since call 0',
      'the travel namespace is rate-limited since call 0',
      'the travel namespace is rate-limited since call 0',
    ]);
    assert.equal(gateway.counts().errors_seen, 4);
  });
});

test('PartialResponse: the call runs, the agent gets half the text and no structured content', async () => {
  await episode({ profile: always('PartialResponse') }, async ({ gateway, server, call }) => {
    const genuine = await server.callTool('search_flights', SEARCH);
    const genuineText = (genuine.content[0] as { text: string }).text;
    const answer = await call('travel_search_flights', SEARCH);
    assert.ok('result' in answer);
    assert.deepEqual(answer.result, { content: [{ type: 'text', text: genuineText.slice(0, Math.floor(genuineText.length / 2)) }] });
    assert.throws(() => JSON.parse(text(answer)), 'the payload is truncated');
    assert.deepEqual(gateway.calls()[0]!.fault, {
      type: 'PartialResponse',
      executed: true,
      detail: `kept ${Math.floor(genuineText.length / 2)} of ${genuineText.length} characters`,
    });
  });
});

test('SchemaDrift: the call runs, field names are renamed in structured content and JSON text', async () => {
  await episode({ profile: always('SchemaDrift') }, async ({ gateway, call }) => {
    const answer = await call('travel_search_flights', SEARCH);
    assert.ok('result' in answer);
    const expected = { flights: FLIGHTS.map((f) => ({ identifier: f.id, from: f.origin, destination: f.dest, day: f.date, cost: f.price, seats_remaining: f.seats_left })) };
    assert.deepEqual(answer.result.structuredContent, expected);
    assert.deepEqual(JSON.parse(text(answer)), expected);
    assert.equal(gateway.calls()[0]!.fault?.type, 'SchemaDrift');
    assert.match(gateway.calls()[0]!.fault!.detail!, /seats_left→seats_remaining/);
  });
});

test('StaleData: a read replays an earlier result of the same arguments, in preference to other arguments', async () => {
  const profile: FaultProfile = { name: 'stale', failure_rate: 0.5, fault_weights: { StaleData: 1 } };
  await episode({ profile, seed: seedFor(profile, [undefined, undefined, undefined, 'StaleData']) }, async ({ gateway, server, call }) => {
    await call('travel_search_flights', { ...SEARCH, date: '2026-01-06' });
    const before = await call('travel_search_flights', SEARCH);
    await call('travel_hold_flight', { flight_id: 'AA-500' });
    const stale = await call('travel_search_flights', SEARCH);
    assert.deepEqual(stale, before, 'the agent sees the seat count from before its own hold');
    assert.notDeepEqual(stale, { result: await server.callTool('search_flights', SEARCH) });
    assert.deepEqual(gateway.calls()[3]!.fault, { type: 'StaleData', executed: false, detail: 'replayed the result of call 1' });
  });
});

test('StaleData: writes and reads with no earlier result are not faulted; otherwise another query\'s result is replayed', async () => {
  await episode({ profile: always('StaleData') }, async ({ gateway, call, reservations }) => {
    const first = await call('travel_search_flights', SEARCH); // nothing earlier: forwarded, not faulted
    await call('travel_hold_flight', { flight_id: 'AA-500' }); // a write is never stale
    assert.equal((await reservations())['AA-500']?.status, 'held');
    assert.deepEqual(await call('travel_search_flights', { ...SEARCH, date: '2026-01-06' }), first);
    assert.deepEqual(gateway.calls().map((c) => [c.status, c.fault]), [
      ['ok', undefined],
      ['ok', undefined],
      ['fault', { type: 'StaleData', executed: false, detail: 'replayed the result of call 0' }],
    ]);
    // Every call had StaleData decided; only the last could be delivered. The trace says both.
    assert.deepEqual(gateway.calls().map((c) => [c.decided, c.fault?.type]), [
      ['StaleData', undefined],
      ['StaleData', undefined],
      ['StaleData', 'StaleData'],
    ]);
  });
});

test('EmptyResponse: the call runs (its effect happens) and the agent gets an empty content list', async () => {
  await episode({ profile: always('EmptyResponse') }, async ({ gateway, call, reservations }) => {
    assert.deepEqual(await call('travel_hold_flight', { flight_id: 'AA-500' }), { result: { content: [] } });
    assert.equal((await reservations())['AA-500']?.status, 'held');
    // A server error passes through: there was no successful body to lose.
    assert.match(text(await call('travel_hold_flight', { flight_id: 'ZZ-1' })), /Unknown flight id/);
    assert.deepEqual(gateway.calls().map((c) => [c.status, c.fault?.type, c.fault?.executed]), [
      ['fault', 'EmptyResponse', true],
      ['tool-error', undefined, undefined],
    ]);
  });
});

test('CascadingFailure: the faulted call and the next cascadeLength calls fail with a server error, then calls succeed', async () => {
  const profile: FaultProfile = { name: 'cascade', failure_rate: 0.5, fault_weights: { CascadingFailure: 1 } };
  await episode({ profile, seed: seedFor(profile, ['CascadingFailure', undefined, undefined, undefined]) }, async ({ gateway, call }) => {
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await call('travel_search_flights', SEARCH));
    assert.deepEqual(answers.map(isError), [true, true, true, false]);
    assert.match(text(answers[0]!), /^503 Service Unavailable/);
    assert.deepEqual(gateway.calls().map((c) => c.fault?.detail), [
      'the next 2 calls fail too',
      'cascade 1 of 2 after call 0',
      'cascade 2 of 2 after call 0',
      undefined,
    ]);
  });
});

test('a call is reported as it arrives and again as it is answered: a timeout being injected is a call in flight', async () => {
  await episode({ profile: always('TransientTimeout'), options: { timeoutMs: 300 } }, async ({ call, reported, started, onCalls }) => {
    const pending = call('travel_search_flights', SEARCH);
    // While the injected timeout runs, the call is known and not answered.
    while (!reported.includes('started 0')) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.deepEqual(reported, ['started 0']);
    assert.deepEqual({ ...started[0], started_at: undefined }, { index: 0, tool: 'travel_search_flights', qualified: 'travel.search_flights', arguments: SEARCH, started_at: undefined });
    assert.ok(!Number.isNaN(Date.parse(started[0]!.started_at)));
    await pending;
    assert.deepEqual(reported, ['started 0', 'answered 0']);
    assert.equal(onCalls[0]!.fault?.type, 'TransientTimeout');
    // A call to a tool the task does not list is reported too, without a qualified name.
    await call('travel_cancel_everything', {});
    assert.deepEqual(reported.slice(2), ['started 1', 'answered 1']);
    assert.equal(started[1]!.qualified, undefined);
  });
});

test('a server that fails on its own is an infra-error, not an agent error', async () => {
  await episode({}, async ({ gateway, server, call }) => {
    assert.equal(isError(await call('travel_search_flights', SEARCH)), false);
    await server.close(); // the server is gone mid-episode
    const answer = await call('travel_search_flights', SEARCH);
    assert.ok('error' in answer);
    assert.equal(gateway.calls()[1]!.status, 'infra-error');
    assert.ok(gateway.infraError() instanceof Error);
    assert.match(gateway.infraError()!.message, /travel call search_flights failed/);
  });
});

test('the same seed replays the same trace byte for byte; another seed does not', async () => {
  const mix: FaultProfile = { name: 'everything', failure_rate: 0.6, fault_weights: Object.fromEntries(FAULT_TYPES.map((t) => [t, 1])) };
  const script: [string, Record<string, unknown>][] = [
    ['travel_search_flights', SEARCH],
    ['travel_hold_flight', { flight_id: 'AA-500' }],
    ['travel_search_flights', SEARCH],
    ['travel_confirm_booking', { flight_id: 'AA-500', passenger: 'Bob', payment_info: 'visa' }],
    ['travel_get_itinerary', {}],
    ['travel_hold_flight', { flight_id: 'BA-200' }],
    ['travel_search_flights', { ...SEARCH, date: '2026-01-06' }],
    ['travel_search_flights', SEARCH],
    ['travel_confirm_booking', { flight_id: 'BA-200', passenger: 'Ann', payment_info: 'visa' }],
    ['travel_hold_flight', { flight_id: 'AA-500' }],
    ['travel_search_flights', SEARCH],
    ['travel_search_flights', SEARCH],
  ];
  const run = async (seed: number) => {
    let trace = '';
    // A frozen clock: a soft rate limit lasts the episode, so nothing depends on timing.
    await episode({ profile: mix, seed, options: { now: () => 0 } }, async ({ gateway, call }) => {
      for (const [name, args] of script) await call(name, args);
      trace = withoutLatency(gateway.calls());
    });
    return trace;
  };
  const first = await run(7);
  assert.equal(await run(7), first);
  assert.ok(JSON.parse(first).some((c: CallRecord) => c.fault), 'the trace has faults');
  assert.notEqual(await run(8), first);
});


test('stdio and several HTTP sessions (a reconnect) share one trace and one budget', async () => {
  await episode({ task: makeTask({ max_steps: 3 }) }, async ({ gateway, client, call }) => {
    await call('travel_search_flights', SEARCH);
    await client.close();
    const { url } = await gateway.listen();
    const again = new Client({ name: 'reconnected', version: '0' });
    await again.connect(new StreamableHTTPClientTransport(new URL(url)));
    await again.callTool({ name: 'travel_hold_flight', arguments: { flight_id: 'AA-500' } });

    const toGateway = new PassThrough();
    const fromGateway = new PassThrough();
    await gateway.serveStdio({ stdin: toGateway, stdout: fromGateway });
    const stdioClient = new Client({ name: 'stdio-agent', version: '0' });
    await stdioClient.connect(new StreamClientTransport(fromGateway, toGateway));
    assert.deepEqual((await stdioClient.listTools()).tools.map((t) => t.name), gateway.tools.map((t) => t.name));
    await stdioClient.callTool({ name: 'travel_search_flights', arguments: SEARCH });
    const over = (await stdioClient.callTool({ name: 'travel_search_flights', arguments: SEARCH })) as CallToolResult;
    assert.equal(over.isError, true);
    await stdioClient.close();
    await again.close();
    assert.deepEqual(gateway.calls().map((c) => [c.index, c.status]), [
      [0, 'ok'],
      [1, 'ok'],
      [2, 'ok'],
      [3, 'over-budget'],
    ]);
  });
});

test('the gateway stops listening when closed', async () => {
  const reg = await registry();
  // Nothing is called here, so a stand-in for the server will do.
  const gateway = new Gateway({ task: makeTask(), registry: reg, servers: new Map([['travel', {} as RunningServer]]) });
  const { url } = await gateway.listen();
  const reply = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  assert.notEqual(reply.status, 0);
  await gateway.close();
  await assert.rejects(fetch(url, { method: 'POST', body: '{}' }));
});

test('a distractor namespace given as a starter starts on its first call only, once, and serves that call', async () => {
  const reg = await registry();
  const calendar = reg.get('calendar')!;
  const sandbox = mkdtempSync(join(tmpdir(), 'mcpbench-gateway-lazy-'));
  let starts = 0;
  let started: RunningServer | undefined;
  const startCalendar = async () => {
    starts++;
    await seedNamespace(calendar, undefined, sandbox);
    started = await startServer(calendar, sandbox, { backend: 'process', startTimeoutMs: 20_000 });
    return started;
  };
  let pending: Promise<RunningServer> | undefined;
  const handle = () => (pending ??= startCalendar());
  const task = makeTask({ available_tools: ['travel.search_flights', 'travel.hold_flight', 'calendar.list_meetings'] });
  const travelSandbox = mkdtempSync(join(tmpdir(), 'mcpbench-gateway-'));
  const travel = reg.get('travel')!;
  await seedNamespace(travel, { flights: FLIGHTS }, travelSandbox);
  const server = await startServer(travel, travelSandbox, { backend: 'process', startTimeoutMs: 20_000 });
  const gateway = new Gateway({ task, registry: reg, servers: new Map<string, RunningServer | (() => Promise<RunningServer>)>([['travel', server], ['calendar', handle]]) });
  const client = new Client({ name: 'test-agent', version: '0' });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL((await gateway.listen()).url)));
    assert.deepEqual((await client.listTools()).tools.map((t) => t.name).sort(), ['calendar_list_meetings', 'travel_hold_flight', 'travel_search_flights']);
    await client.callTool({ name: 'travel_search_flights', arguments: SEARCH });
    assert.equal(starts, 0, 'listing tools and calling the task\'s own tools start no distractor server');
    const first = (await client.callTool({ name: 'calendar_list_meetings', arguments: { start_date: '2026-01-01', end_date: '2026-01-31' } })) as CallToolResult;
    assert.notEqual(first.isError, true, JSON.stringify(first));
    await client.callTool({ name: 'calendar_list_meetings', arguments: { start_date: '2026-02-01', end_date: '2026-02-28' } });
    assert.equal(starts, 1);
    assert.deepEqual(gateway.calls().map((c) => [c.tool, c.status]), [['travel_search_flights', 'ok'], ['calendar_list_meetings', 'ok'], ['calendar_list_meetings', 'ok']]);
  } finally {
    await client.close().catch(() => undefined);
    await gateway.close();
    await server.close();
    await started?.close();
    rmSync(sandbox, { recursive: true, force: true });
    rmSync(travelSandbox, { recursive: true, force: true });
  }
});
