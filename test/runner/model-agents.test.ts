/**
 * The model agents (`openai`, `anthropic`) against the local protocol simulations, through a gateway-shaped
 * MCP server: every shape a real model writes its calls in, every way a real endpoint fails, and the
 * accounting (tokens the meter counts equal the tokens the simulation served; cost from the price).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentError, type AgentContext } from '../../server/src/runner/agents/agent.ts';
import { createAnthropicAgent } from '../../server/src/runner/agents/anthropic.ts';
import { createOpenAIAgent, DEFAULT_SYSTEM_PROMPT } from '../../server/src/runner/agents/openai.ts';
import { modelSettings, resolveModelSettings, SettingsError, type ModelAgentSettings } from '../../server/src/runner/agents/settings.ts';
import { costOf, ModelMeter, priceFor, type ModelRecord } from '../../server/src/runner/agents/usage.ts';
import { startAnthropicSimulation } from '../simulations/anthropic-simulation.ts';
import { startOpenAISimulation } from '../simulations/openai-simulation.ts';
import type { SimulationServer } from '../simulations/http.ts';
import { contextFor, TOOLS, waitFor, withGateway, type FakeGateway } from './fake-gateway.ts';
import { AGENT_ERROR_CODES, type AgentErrorCode } from '../../server/src/record/schema.ts';

const fast = { retryBaseMs: 1 };

function openai(llm: SimulationServer, fields: Partial<ModelAgentSettings> = {}, apiKey?: string) {
  return createOpenAIAgent(modelSettings('openai', { base_url: llm.baseUrl, model: 'test-model', ...fields }), { ...fast, ...(apiKey ? { apiKey } : {}) });
}

function anthropic(llm: SimulationServer, fields: Partial<ModelAgentSettings> = {}, apiKey = 'sk-ant-test') {
  return createAnthropicAgent(modelSettings('anthropic', { base_url: llm.baseUrl, model: 'claude-test', ...fields }), { ...fast, apiKey });
}

function metered(gateway: FakeGateway, extra: Partial<AgentContext> = {}): AgentContext & { meter: ModelMeter } {
  return { ...contextFor(gateway), meter: new ModelMeter(), ...extra } as AgentContext & { meter: ModelMeter };
}

async function withOpenAI(script: Parameters<typeof startOpenAISimulation>[0], body: (llm: SimulationServer, gateway: FakeGateway) => Promise<void>): Promise<void> {
  await withGateway(async (gateway) => {
    const llm = await startOpenAISimulation(script);
    try {
      await body(llm, gateway);
    } finally {
      await llm.close();
    }
  });
}

async function rejectsWith(promise: Promise<unknown>, code: AgentErrorCode | 'gateway-unreachable', message?: RegExp): Promise<AgentError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof AgentError, `expected an AgentError, got ${(error as Error)?.stack}`);
    assert.equal(error.code, code, error.message);
    assert.equal(error.toRecord().code, code);
    if (message) assert.match(error.message, message);
    return error;
  }
  assert.fail(`expected the agent to fail with ${code}`);
}

/** The meter's totals equal what the simulation put in the bodies it delivered. */
function assertServedEqualsCounted(record: ModelRecord | undefined, llm: SimulationServer): void {
  assert.ok(record);
  const { prompt_tokens, completion_tokens, cached_tokens, cache_write_tokens } = llm.served;
  assert.deepEqual(
    { prompt_tokens: record.prompt_tokens, completion_tokens: record.completion_tokens, cached_tokens: record.cached_tokens, cache_write_tokens: record.cache_write_tokens },
    { prompt_tokens, completion_tokens, cached_tokens, cache_write_tokens },
  );
  assert.equal(record.responses_without_usage, llm.served.responses - llm.served.with_usage);
}

// ---- openai: the conversation

test('openai: tool calls through the gateway, results fed back, a 429 survived, settings and the episode seed sent, tokens counted', async () => {
  await withOpenAI(
    [
      { status: 429, error: 'Rate limit reached', headers: { 'retry-after': '0' } },
      { message: { tool_calls: [{ id: 'call_search', name: 'travel_search_flights', arguments: { from: 'AMS', to: 'LIS' } }] } },
      {
        message: {
          content: 'Holding the cheapest one.',
          tool_calls: [
            { id: 'call_hold', name: 'travel_hold_flight', arguments: { flight_id: 'AA-500' } },
            { id: 'call_ghost', name: 'travel_cancel_everything', arguments: {} },
          ],
        },
      },
      { message: { content: 'I put a hold on AA-500 (300 EUR).' } },
    ],
    async (llm, gateway) => {
      const agent = openai(llm, { temperature: 0, top_p: 0.9, max_tokens: 256, extra_body: { top_k: 20 } }, 'sk-test');
      const context = metered(gateway, { seed: 7, trial: 2 });
      const outcome = await agent.run(context);
      assert.deepEqual(outcome, { answer: 'I put a hold on AA-500 (300 EUR).' });
      assert.deepEqual(gateway.calls, [
        { name: 'travel_search_flights', arguments: { from: 'AMS', to: 'LIS' } },
        { name: 'travel_hold_flight', arguments: { flight_id: 'AA-500' } },
        { name: 'travel_cancel_everything', arguments: {} },
      ]);

      assert.equal(llm.requests.length, 4, 'the 429 was retried once, then three turns');
      assert.deepEqual(llm.requests[1]!.body, llm.requests[0]!.body, 'the retry resends the same request');
      const first = llm.requests[0]!;
      assert.equal(first.path, '/v1/chat/completions');
      assert.equal(first.headers.authorization, 'Bearer sk-test');
      assert.deepEqual(
        { model: first.body.model, temperature: first.body.temperature, top_p: first.body.top_p, max_tokens: first.body.max_tokens, seed: first.body.seed, top_k: first.body.top_k },
        { model: 'test-model', temperature: 0, top_p: 0.9, max_tokens: 256, seed: 9, top_k: 20 },
        'the run seed plus the trial is the sampling seed',
      );
      assert.deepEqual(first.body.tools, TOOLS.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.inputSchema } })));
      assert.deepEqual(first.body.messages, [
        { role: 'system', content: DEFAULT_SYSTEM_PROMPT },
        { role: 'user', content: 'Find the cheapest AMS to LIS flight and hold it, please.' },
      ]);
      const third = llm.requests[3]!.body.messages;
      assert.equal(third.length, 7);
      assert.equal(third[2].tool_calls[0].id, 'call_search');
      assert.deepEqual(JSON.parse(third[3].content), [{ id: 'AA-500', price: 300 }, { id: 'BB-700', price: 450 }]);
      assert.deepEqual([third[5].tool_call_id, third[5].content], ['call_hold', 'hold H-1 on AA-500']);
      assert.match(third[6].content, /^Error: unknown tool travel_cancel_everything/, 'the error goes back to the model');

      const record = context.meter.record()!;
      assert.deepEqual([record.requests, record.retries, record.turns, record.end], [4, 1, 3, 'answer']);
      assert.deepEqual(record.calls.map((c) => [c.turn, c.format, c.name, c.status]), [
        [0, 'native', 'travel_search_flights', 'sent'],
        [1, 'native', 'travel_hold_flight', 'sent'],
        [1, 'native', 'travel_cancel_everything', 'sent'],
      ]);
      assert.ok(record.prompt_tokens > 0 && record.cached_tokens > 0 && record.completion_tokens > 0);
      assertServedEqualsCounted(record, llm);
      assert.equal(record.cost, null, 'no price, no cost');
    },
  );
});

test('openai: a call with broken JSON, a call without a name and arguments that are not an object go back as errors; the loop goes on', async () => {
  await withOpenAI(
    [
      {
        message: {
          tool_calls: [
            { id: 'c1', name: 'travel_hold_flight', arguments: '{"flight_id": "AA-5' },
            { id: 'c2', arguments: { flight_id: 'AA-500' } },
            { id: 'c3', name: 'travel_hold_flight', arguments: '["AA-500"]' },
          ],
        },
      },
      { message: { tool_calls: [{ id: 'c4', name: 'travel_hold_flight', arguments: { flight_id: 'AA-500' } }] } },
      { message: { content: 'done' } },
    ],
    async (llm, gateway) => {
      const context = metered(gateway);
      const outcome = await openai(llm).run(context);
      assert.equal(outcome.answer, 'done');
      assert.deepEqual(gateway.calls, [{ name: 'travel_hold_flight', arguments: { flight_id: 'AA-500' } }], 'only the well-formed call reached the gateway');
      const messages = llm.requests[1]!.body.messages;
      assert.deepEqual(messages[2].tool_calls.map((c: { id: string; function: { arguments: string } }) => [c.id, c.function.arguments]), [['c1', '{}'], ['c3', '{}']], 'named calls echoed with arguments a strict server accepts');
      assert.match(messages[3].content, /^Error: Your call to travel_hold_flight was not run: the arguments are not valid JSON .*You wrote: \{"flight_id": "AA-5/);
      assert.match(messages[4].content, /^Error: Your call to travel_hold_flight was not run: the arguments must be a JSON object, not an array/);
      assert.equal(messages[5].role, 'user');
      assert.match(messages[5].content, /^Error: A tool call without a function name was not run.*Call one of the tools by its name: travel_search_flights, travel_hold_flight/);
      const record = context.meter.record()!;
      assert.deepEqual(record.calls.map((c) => [c.status, c.problem]), [['malformed', 'bad-json'], ['malformed', 'no-name'], ['malformed', 'arguments-not-object'], ['sent', undefined]]);
    },
  );
});

test('openai: calls without ids, with repeated ids, with object arguments and content null all work', async () => {
  await withOpenAI(
    [
      { message: { content: null, tool_calls: [{ name: 'travel_search_flights', arguments: { from: 'AMS', to: 'LIS' }, objectArguments: true }, { name: 'travel_hold_flight', arguments: { flight_id: 'AA-500' } }] } },
      { message: { tool_calls: [{ id: 'same', name: 'travel_hold_flight', arguments: { flight_id: 'A' } }, { id: 'same', name: 'travel_hold_flight', arguments: { flight_id: 'B' } }] } },
      { message: { content: 'held' } },
    ],
    async (llm, gateway) => {
      assert.equal((await openai(llm).run(contextFor(gateway))).answer, 'held');
      assert.deepEqual(gateway.calls.map((c) => c.arguments), [{ from: 'AMS', to: 'LIS' }, { flight_id: 'AA-500' }, { flight_id: 'A' }, { flight_id: 'B' }]);
      assert.deepEqual(llm.requests[1]!.body.messages[2].tool_calls.map((c: { id: string }) => c.id), ['call_0_0', 'call_0_1'], 'ids made up where none were given');
      assert.deepEqual(llm.requests[2]!.body.messages.filter((m: { role: string }) => m.role === 'tool').slice(2).map((m: { tool_call_id: string }) => m.tool_call_id), ['same', 'call_1_1']);
    },
  );
});

test('openai: tool calls written as text in each format are run, recorded with their format, and answered in a user message', async () => {
  const hold = { flight_id: 'AA-500' };
  const cases: Array<[string, string]> = [
    ['hermes', `<tool_call>\n${JSON.stringify({ name: 'travel_hold_flight', arguments: hold })}\n</tool_call>`],
    ['llama3', JSON.stringify({ name: 'travel_hold_flight', parameters: hold })],
    ['llama3', `<|python_tag|>${JSON.stringify({ name: 'travel_hold_flight', parameters: hold })}`],
    ['mistral', `[TOOL_CALLS] ${JSON.stringify([{ name: 'travel_hold_flight', arguments: hold }])}`],
    ['fenced-json', `Holding it.\n\`\`\`json\n${JSON.stringify({ name: 'travel_hold_flight', arguments: hold })}\n\`\`\``],
  ];
  for (const [format, content] of cases) {
    await withOpenAI([{ message: { content } }, { message: { content: 'held' } }], async (llm, gateway) => {
      const context = metered(gateway);
      assert.equal((await openai(llm).run(context)).answer, 'held', format);
      assert.deepEqual(gateway.calls, [{ name: 'travel_hold_flight', arguments: hold }], format);
      const messages = llm.requests[1]!.body.messages;
      assert.deepEqual(messages[2], { role: 'assistant', content }, 'the assistant text goes back as the model wrote it');
      assert.equal(messages[3].role, 'user');
      assert.match(messages[3].content, format === 'hermes' ? /^<tool_response>\n\{"name":"travel_hold_flight","content":"hold H-1 on AA-500"\}/ : /^Result of travel_hold_flight:\nhold H-1 on AA-500/);
      assert.deepEqual(context.meter.record()!.calls.map((c) => c.format), [format]);
    });
  }
  // --tool-call-format native reads no text: the tag is the final answer.
  await withOpenAI([{ message: { content: cases[0]![1] } }], async (llm, gateway) => {
    assert.equal((await openai(llm, { tool_call_format: 'native' }).run(contextFor(gateway))).answer, cases[0]![1]);
    assert.equal(gateway.calls.length, 0);
  });
});

test('openai: stops after max_turns without an answer when the model never stops calling tools', async () => {
  await withOpenAI(
    (index) => ({ message: { tool_calls: [{ id: `c${index}`, name: 'travel_search_flights', arguments: { from: 'AMS', to: 'LIS' } }] } }),
    async (llm, gateway) => {
      const context = metered(gateway);
      assert.deepEqual(await openai(llm, { max_turns: 3 }).run(context), {});
      assert.equal(llm.requests.length, 3);
      assert.equal(gateway.calls.length, 3);
      assert.equal(context.meter.record()!.end, 'max-turns');
    },
  );
});

test('openai: the token budget stops the episode before the next tool call, with the reason (no error: the agent ran out)', async () => {
  await withOpenAI(
    (index) => ({ message: { tool_calls: [{ id: `c${index}`, name: 'travel_search_flights', arguments: {} }] }, usage: { prompt_tokens: 400, completion_tokens: 100 } }),
    async (llm, gateway) => {
      const context = metered(gateway);
      const outcome = await openai(llm, { max_tokens_per_episode: 1200 }).run(context);
      assert.equal(outcome.answer, undefined);
      assert.equal(outcome.stopped?.code, 'token-budget');
      assert.match(outcome.stopped.message, /used 1500 tokens, its budget is 1200/);
      assert.equal(llm.requests.length, 3);
      assert.equal(gateway.calls.length, 2, 'the call of the turn that crossed the budget was not run');
      const record = context.meter.record()!;
      assert.deepEqual([record.end, record.prompt_tokens + record.completion_tokens, record.max_tokens_per_episode], ['token-budget', 1500, 1200]);
    },
  );
});

// ---- openai: the endpoint failing

test('openai: 5xx, bodies that are not JSON, empty choices and slow streams are retried and absorbed', async () => {
  const call = { message: { tool_calls: [{ id: 'c1', name: 'travel_hold_flight', arguments: { flight_id: 'AA-500' } }] } };
  await withOpenAI(
    [
      { status: 503, error: 'overloaded' },
      { body: '<html><body>502 Bad Gateway</body></html>' },
      { emptyChoices: true },
      { ...call, slow: { chunks: 5, delayMs: 20 } },
      { reset: true },
      { message: { content: 'held' }, usage: null },
    ],
    async (llm, gateway) => {
      const context = metered(gateway);
      assert.equal((await openai(llm).run(context)).answer, 'held');
      assert.equal(gateway.calls.length, 1);
      const record = context.meter.record()!;
      assert.deepEqual([record.requests, record.retries, record.turns], [6, 4, 2]);
      assertServedEqualsCounted(record, llm);
      assert.equal(record.responses_without_usage, 1, 'the last answer carried no usage');
    },
  );
});

test('openai: each endpoint failure that outlasts the retries is a typed agent error with its reason', async () => {
  const cases: Array<[Parameters<typeof startOpenAISimulation>[0], AgentErrorCode, RegExp, number, number | undefined]> = [
    [() => ({ status: 503, error: 'model overloaded' }), 'model-5xx', /failed after 3 attempts; last: HTTP 503: .*model overloaded/, 3, 503],
    [() => ({ status: 429, error: 'slow down', headers: { 'retry-after': '0' } }), 'model-rate-limited', /HTTP 429/, 3, 429],
    [() => ({ body: 'Internal proxy error' }), 'model-non-json', /not JSON: Internal proxy error/, 3, 200],
    [() => ({ emptyChoices: true }), 'model-empty-response', /choices: \[\]/, 3, 200],
    [() => ({ status: 401, error: 'Incorrect API key provided' }), 'model-rejected', /HTTP 401: .*Incorrect API key/, 1, 401],
    [() => ({ message: { content: '' }, finish_reason: 'content_filter' }), 'model-content-filter', /content_filter/, 1, undefined],
    [() => ({ status: 400, error: 'The response was filtered', code: 'content_filter' }), 'model-content-filter', /filtered/, 1, 400],
  ];
  for (const [script, code, message, requests, status] of cases) {
    assert.ok((AGENT_ERROR_CODES as readonly string[]).includes(code), `${code} is a documented code`);
    await withOpenAI(script, async (llm, gateway) => {
      const error = await rejectsWith(openai(llm, { max_retries: 2 }).run(contextFor(gateway)), code, message);
      assert.equal(llm.requests.length, requests, code);
      const record = error.toRecord();
      assert.equal(record.kind, 'agent');
      assert.equal(record.http_status, status, code);
      if (requests > 1) assert.equal(record.attempts, requests, code);
      assert.equal(gateway.calls.length, 0);
    });
  }
});

test('openai: requests that time out or cannot connect are retried, then fail with the reason', async () => {
  await withOpenAI(
    () => ({ hang: true }),
    async (llm, gateway) => {
      await rejectsWith(openai(llm, { request_timeout_s: 0.05, max_retries: 1 }).run(contextFor(gateway)), 'model-timeout', /failed after 2 attempts; last: no answer within 50 ms/);
      assert.equal(llm.requests.length, 2);
      await llm.close();
      await rejectsWith(openai(llm, { max_retries: 1 }).run(contextFor(gateway)), 'model-unreachable', /ECONNREFUSED/);
    },
  );
});

test('openai: abort while the model is thinking stops the episode with the abort reason', async () => {
  await withOpenAI([{ hang: true }], async (llm, gateway) => {
    const controller = new AbortController();
    const context = { ...metered(gateway), signal: controller.signal };
    const run = openai(llm).run(context);
    await waitFor(() => llm.requests.length === 1);
    controller.abort(new Error('episode interrupted'));
    await assert.rejects(run, /episode interrupted/);
    assert.equal(context.meter.record()!.end, 'aborted');
  });
});

// ---- anthropic

test('anthropic: tool_use blocks through the gateway, tool_result blocks back, cache usage and cost counted, no seed sent', async () => {
  await withGateway(async (gateway) => {
    const llm = await startAnthropicSimulation(
      [
        { status: 529, error: 'Overloaded' },
        { message: { text: 'Searching.', tool_uses: [{ id: 'toolu_1', name: 'travel_search_flights', input: { from: 'AMS', to: 'LIS' } }] } },
        { message: { tool_uses: [{ id: 'toolu_2', name: 'travel_hold_flight', input: { flight_id: 'AA-500' } }, { id: 'toolu_3', name: 'travel_nope', input: {} }] } },
        { message: { text: 'Held AA-500.' } },
      ],
      { apiKey: 'sk-ant-test' },
    );
    try {
      const price = { input: 3, output: 15, cached_input: 0.3, cache_write: 3.75 };
      const context = metered(gateway, { seed: 5, trial: 0 });
      const agent = anthropic(llm, { temperature: 0.5, prices: { file: 'p.json', currency: 'USD', model: price } });
      assert.deepEqual(await agent.run(context), { answer: 'Held AA-500.' });
      assert.deepEqual(gateway.calls.map((c) => c.name), ['travel_search_flights', 'travel_hold_flight', 'travel_nope']);
      const first = llm.requests[0]!;
      assert.equal(first.path, '/v1/messages');
      assert.equal(first.headers['anthropic-version'], '2023-06-01');
      assert.equal(first.body.seed, undefined, 'the Messages API has no seed (and refuses unknown fields)');
      assert.deepEqual([first.body.max_tokens, first.body.temperature, first.body.system], [4096, 0.5, DEFAULT_SYSTEM_PROMPT]);
      assert.deepEqual(first.body.tools[0], { name: TOOLS[0]!.name, description: TOOLS[0]!.description, input_schema: TOOLS[0]!.inputSchema });
      const last = llm.requests[3]!.body.messages;
      assert.deepEqual(last.map((m: { role: string }) => m.role), ['user', 'assistant', 'user', 'assistant', 'user']);
      assert.deepEqual(last[2].content[0], { type: 'tool_result', tool_use_id: 'toolu_1', content: JSON.stringify([{ id: 'AA-500', price: 300 }, { id: 'BB-700', price: 450 }]) });
      assert.deepEqual(last[4].content[1].is_error, true);
      const record = context.meter.record()!;
      assert.equal(record.protocol, 'anthropic');
      assertServedEqualsCounted(record, llm);
      assert.ok(record.cache_write_tokens > 0 && record.cached_tokens > 0);
      assert.equal(record.cost, costOf(record, price));
      assert.equal(record.currency, 'USD');
    } finally {
      await llm.close();
    }
  });
});

test('anthropic: text calls, a tool_use without a name or with broken input, a non-message body; a refusal is a model-content-filter error', async () => {
  await withGateway(async (gateway) => {
    const llm = await startAnthropicSimulation([
      { notAMessage: true },
      { message: { text: `<tool_call>{"name": "travel_search_flights", "arguments": {"from": "AMS"}}</tool_call>` } },
      { message: { tool_uses: [{ id: 'toolu_a', input: { flight_id: 'AA-500' } }, { id: 'toolu_b', name: 'travel_hold_flight', input: '{"flight_id": ' }] } },
      { message: { tool_uses: [{ name: 'travel_hold_flight', input: { flight_id: 'AA-500' } }] } },
      { message: { text: 'Held.' } },
    ]);
    try {
      const context = metered(gateway);
      assert.equal((await anthropic(llm).run(context)).answer, 'Held.');
      assert.deepEqual(gateway.calls.map((c) => c.name), ['travel_search_flights', 'travel_hold_flight']);
      const messages = llm.requests[4]!.body.messages;
      assert.deepEqual(messages[2].content[0].text.startsWith('Result of travel_search_flights') || messages[2].content[0].text.startsWith('<tool_response>'), true);
      assert.deepEqual(messages[3].content.map((b: { type: string; id?: string; input?: unknown }) => [b.type, b.id, b.input]), [['tool_use', 'toolu_b', {}]]);
      assert.deepEqual(messages[4].content.map((b: { type: string }) => b.type), ['tool_result', 'text']);
      assert.match(messages[4].content[1].text, /without a function name/);
      assert.equal(messages[5].content[0].id, 'call_2_0', 'a made-up id for the block that had none');
      assert.deepEqual(context.meter.record()!.calls.map((c) => `${c.format}:${c.status}`), ['hermes:sent', 'native:malformed', 'native:malformed', 'native:sent']);
    } finally {
      await llm.close();
    }
    const refusing = await startAnthropicSimulation(() => ({ message: { text: 'I cannot help with that.' }, stop_reason: 'refusal' }));
    try {
      await rejectsWith(anthropic(refusing).run(contextFor(gateway)), 'model-content-filter', /refusal/);
      assert.equal(refusing.requests.length, 1);
    } finally {
      await refusing.close();
    }
  });
});

// ---- settings, prices

test('settings: flags over the profile file over the environment over the defaults; paths relative to the file; the key never recorded', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcpbench-settings-'));
  try {
    writeFileSync(join(dir, 'prompt.txt'), 'Be brief.\n');
    writeFileSync(join(dir, 'prices.json'), JSON.stringify({ currency: 'EUR', models: { 'qwen*': { input: 0.1, output: 0.2 }, 'qwen-7b': { input: 1, output: 2 } } }));
    writeFileSync(join(dir, 'qwen.json'), JSON.stringify({ agent: 'openai', model: 'qwen-7b', temperature: 0.7, top_p: 0.8, system_prompt_file: 'prompt.txt', prices: 'prices.json', tool_call_format: 'hermes', api_key_env: 'LOCAL_KEY' }));
    const env = { MCPBENCH_OPENAI_BASE_URL: 'http://127.0.0.1:8080/v1', MCPBENCH_OPENAI_MODEL: 'env-model', MCPBENCH_AGENT_TEMPERATURE: '0.1', MCPBENCH_AGENT_MAX_TURNS: '9', MCPBENCH_AGENT_EXTRA_BODY: '{"min_p": 0.05}', LOCAL_KEY: 'secret' };
    const { settings, apiKey, warnings } = resolveModelSettings('openai', { cwd: '/', env, configFile: join(dir, 'qwen.json'), flags: { top_p: 0.5 } });
    assert.equal(apiKey, 'secret');
    assert.deepEqual(warnings, []);
    assert.deepEqual(settings, {
      base_url: 'http://127.0.0.1:8080/v1',
      model: 'qwen-7b',
      api_key_env: 'LOCAL_KEY',
      temperature: 0.7,
      top_p: 0.5,
      max_turns: 9,
      request_timeout_s: 120,
      system_prompt: 'Be brief.',
      system_prompt_file: join(dir, 'prompt.txt'),
      extra_body: { min_p: 0.05 },
      tool_call_format: 'hermes',
      max_retries: 4,
      prices: { file: join(dir, 'prices.json'), currency: 'EUR', model: { input: 1, output: 2 } },
    });
    assert.ok(!JSON.stringify(settings).includes('secret'));
    assert.throws(() => resolveModelSettings('anthropic', { cwd: '/', env, configFile: join(dir, 'qwen.json') }), /profile for --agent openai, not anthropic/);
    assert.throws(() => resolveModelSettings('openai', { cwd: '/', env: {} }), (e: Error) => e instanceof SettingsError && /no model.*MCPBENCH_OPENAI_MODEL/.test(e.message));
    assert.throws(() => resolveModelSettings('openai', { cwd: '/', env: { MCPBENCH_AGENT_TEMPERATURE: 'hot' }, flags: { model: 'm' } }), /MCPBENCH_AGENT_TEMPERATURE/);
    assert.throws(() => resolveModelSettings('openai', { cwd: '/', env: {}, flags: { model: 'm', extra_body: { messages: [] } } }), /extra_body may not set messages/);
    assert.throws(() => resolveModelSettings('openai', { cwd: '/', env: {}, flags: { model: 'm', temperature: 5 } }), /--temperature/);
    writeFileSync(join(dir, 'bad.json'), JSON.stringify({ model: 'm', temprature: 1 }));
    assert.throws(() => resolveModelSettings('openai', { cwd: '/', env: {}, configFile: join(dir, 'bad.json') }), /bad\.json: .*temprature/);
    const anthropicDefaults = resolveModelSettings('anthropic', { cwd: '/', env: { MCPBENCH_ANTHROPIC_MODEL: 'claude-x', ANTHROPIC_API_KEY: 'k' } });
    assert.deepEqual([anthropicDefaults.settings.base_url, anthropicDefaults.settings.max_tokens, anthropicDefaults.apiKey], ['https://api.anthropic.com/v1', 4096, 'k']);
    const unpriced = resolveModelSettings('openai', { cwd: dir, env: {}, flags: { model: 'llama', prices: 'prices.json' } });
    assert.deepEqual(unpriced.warnings, [`${join(dir, 'prices.json')} has no price for model llama: its cost is not counted`]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('prices: an exact name first, else the longest prefix* key; cost per million tokens with cached and cache-write prices', () => {
  const file = { currency: 'USD', models: { 'gpt-4o*': { input: 2.5, output: 10 }, 'gpt-4o-mini*': { input: 0.15, output: 0.6, cached_input: 0.075 }, 'gpt-4o-mini': { input: 1, output: 1 } } };
  assert.deepEqual(priceFor(file, 'gpt-4o-mini'), { input: 1, output: 1 });
  assert.deepEqual(priceFor(file, 'gpt-4o-mini-2024-07-18'), { input: 0.15, output: 0.6, cached_input: 0.075 });
  assert.deepEqual(priceFor(file, 'gpt-4o-2024-08-06'), { input: 2.5, output: 10 });
  assert.equal(priceFor(file, 'o3'), undefined);
  const usage = { prompt_tokens: 1_000_000, cached_tokens: 400_000, cache_write_tokens: 100_000, completion_tokens: 200_000 };
  assert.equal(costOf(usage, { input: 3, output: 15, cached_input: 0.3, cache_write: 3.75 }), 0.5 * 3 + 0.4 * 0.3 + 0.1 * 3.75 + 0.2 * 15);
  assert.equal(costOf(usage, { input: 2, output: 4 }), 1 * 2 + 0.2 * 4, 'cached and cache-write tokens at the input price when none is given');
});
