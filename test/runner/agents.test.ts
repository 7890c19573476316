/**
 * The openai, endpoint and command agents, each against a real MCP server on streamable HTTP shaped like
 * the gateway (two travel tools that record their calls; unknown names answered with an error): the
 * agents reach the task only through it, hand back the final answer, fail with clear messages, and stop
 * (killing their processes) when aborted.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { AgentContext } from '../../server/src/runner/agents/agent.ts';
import { createCommandAgent } from '../../server/src/runner/agents/command.ts';
import { agentDeadlineMs, buildAgentRequest, createEndpointAgent, DEFAULT_AGENT_TIMEOUT_MS } from '../../server/src/runner/agents/endpoint.ts';
import { createOpenAIAgent, DEFAULT_OPENAI_BASE_URL, openAIOptionsFromEnv } from '../../server/src/runner/agents/openai.ts';
import { createAjv } from '../../server/src/tasks/ajv.ts';
import type { Task } from '../../server/src/tasks/model.ts';
import { packageRoot } from '../../server/src/paths.ts';
import { startScriptedOpenAIServer } from './scripted-openai-server.ts';

// ---- A gateway-shaped MCP server: exactly the task's tools as `<ns>_<tool>`, every call recorded.

const TOOLS: Tool[] = [
  {
    name: 'travel_search_flights',
    description: 'Search flights between two airports on a date.',
    inputSchema: {
      type: 'object',
      properties: { from: { type: 'string' }, to: { type: 'string' }, date: { type: 'string' } },
      required: ['from', 'to'],
    },
  },
  {
    name: 'travel_hold_flight',
    description: 'Put a hold on a flight.',
    inputSchema: { type: 'object', properties: { flight_id: { type: 'string' } }, required: ['flight_id'] },
  },
];

interface FakeGateway {
  url: string;
  calls: Array<{ name: string; arguments: unknown }>;
  close(): Promise<void>;
}

async function startGateway(): Promise<FakeGateway> {
  const calls: FakeGateway['calls'] = [];
  // Stateless streamable HTTP: a fresh MCP server per request, as the SDK's stateless example does.
  const http = createServer(async (req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    const server = new Server({ name: 'fake-gateway', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS }));
    server.setRequestHandler(CallToolRequestSchema, (request) => {
      const { name, arguments: args } = request.params;
      calls.push({ name, arguments: args });
      if (name === 'travel_search_flights') {
        return { content: [{ type: 'text', text: JSON.stringify([{ id: 'AA-500', price: 300 }, { id: 'BB-700', price: 450 }]) }] };
      }
      if (name === 'travel_hold_flight') {
        return { content: [{ type: 'text', text: `hold H-1 on ${String((args as { flight_id?: unknown })?.flight_id)}` }] };
      }
      return { isError: true, content: [{ type: 'text', text: `unknown tool ${name}: not one of the task's tools` }] };
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  const port = await listen(http);
  return { url: `http://127.0.0.1:${port}/mcp`, calls, close: () => closeHttp(http) };
}

async function listen(server: HttpServer): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function closeHttp(server: HttpServer): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

// Strings that exist only in what the agent must not see.
const SECRET_STATE = 'SECRET-INITIAL-STATE-7f3a';
const SECRET_PREDICATE = 'SECRET-PREDICATE-91c2';
const SECRET_SOLUTION = 'SECRET-SOLUTION-4b8e';

const task: Task = {
  id: 'travel-hold-cheapest-001',
  server: 'travel',
  category: 'composition',
  difficulty: 'easy',
  max_steps: 6,
  goal: 'Find the cheapest flight from AMS to LIS and put a hold on it.',
  initial_state: { travel: { note: SECRET_STATE } },
  available_tools: ['travel.search_flights', 'travel.hold_flight'],
  success_predicate: { 'travel.flightHeld': { flight_id: SECRET_PREDICATE } },
  reference_solutions: [[{ tool: 'travel.hold_flight', arguments: { flight_id: SECRET_SOLUTION } }]],
  counterexamples: [[{ tool: 'travel.hold_flight', arguments: { flight_id: 'BB-700' } }]],
};

function contextFor(gateway: FakeGateway, signal: AbortSignal = new AbortController().signal): AgentContext {
  return {
    task,
    goal: 'Find the cheapest AMS to LIS flight and hold it, please.',
    gateway: { url: gateway.url, tools: TOOLS },
    variant: 'agent',
    signal,
  };
}

async function withGateway(body: (gateway: FakeGateway) => Promise<void>): Promise<void> {
  const gateway = await startGateway();
  try {
    await body(gateway);
  } finally {
    await gateway.close();
  }
}

// ---- openai

test('openai: performs the scripted tool calls through the gateway, feeds results back, survives a 429, answers', async () => {
  await withGateway(async (gateway) => {
    const llm = await startScriptedOpenAIServer([
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
    ]);
    try {
      const agent = createOpenAIAgent({ baseUrl: llm.baseUrl, model: 'test-model', apiKey: 'sk-test', temperature: 0, retryBaseMs: 1 });
      const outcome = await agent.run(contextFor(gateway));
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
      assert.equal(first.body.model, 'test-model');
      assert.equal(first.body.temperature, 0);
      assert.deepEqual(
        first.body.tools,
        TOOLS.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.inputSchema } })),
      );
      assert.deepEqual(first.body.messages.map((m: { role: string }) => m.role), ['system', 'user']);
      assert.equal(first.body.messages[1].content, 'Find the cheapest AMS to LIS flight and hold it, please.', 'the goal as shown');

      const second = llm.requests[2]!.body.messages;
      assert.equal(second.length, 4);
      assert.equal(second[2].role, 'assistant');
      assert.equal(second[2].tool_calls[0].id, 'call_search');
      assert.equal(second[3].role, 'tool');
      assert.equal(second[3].tool_call_id, 'call_search');
      assert.deepEqual(JSON.parse(second[3].content), [{ id: 'AA-500', price: 300 }, { id: 'BB-700', price: 450 }]);

      const third = llm.requests[3]!.body.messages;
      assert.equal(third.length, 7);
      assert.equal(third[4].content, 'Holding the cheapest one.');
      assert.deepEqual([third[5].tool_call_id, third[5].content], ['call_hold', 'hold H-1 on AA-500']);
      assert.equal(third[6].tool_call_id, 'call_ghost');
      assert.match(third[6].content, /^Error: unknown tool travel_cancel_everything/, 'the error goes back to the model');
    } finally {
      await llm.close();
    }
  });
});

test('openai: arguments that are not JSON are answered with an error and never reach the gateway', async () => {
  await withGateway(async (gateway) => {
    const llm = await startScriptedOpenAIServer([
      { message: { tool_calls: [{ id: 'c1', name: 'travel_hold_flight', arguments: '{"flight_id": "AA-5' }] } },
      { message: { tool_calls: [{ id: 'c2', name: 'travel_hold_flight', arguments: { flight_id: 'AA-500' } }] } },
      { message: { content: 'done' } },
    ]);
    try {
      const outcome = await createOpenAIAgent({ baseUrl: llm.baseUrl, model: 'm' }).run(contextFor(gateway));
      assert.equal(outcome.answer, 'done');
      assert.deepEqual(gateway.calls, [{ name: 'travel_hold_flight', arguments: { flight_id: 'AA-500' } }]);
      const toolMessage = llm.requests[1]!.body.messages[3];
      assert.equal(toolMessage.tool_call_id, 'c1');
      assert.match(toolMessage.content, /^Error: the arguments of travel_hold_flight are not valid JSON/);
      assert.equal(llm.requests[0]!.headers.authorization, undefined, 'no key, no authorization header');
    } finally {
      await llm.close();
    }
  });
});

test('openai: stops after maxTurns without an answer when the model never stops calling tools', async () => {
  await withGateway(async (gateway) => {
    const llm = await startScriptedOpenAIServer((index) => ({
      message: { tool_calls: [{ id: `c${index}`, name: 'travel_search_flights', arguments: { from: 'AMS', to: 'LIS' } }] },
    }));
    try {
      const outcome = await createOpenAIAgent({ baseUrl: llm.baseUrl, model: 'm', maxTurns: 3 }).run(contextFor(gateway));
      assert.deepEqual(outcome, {});
      assert.equal(llm.requests.length, 3);
      assert.equal(gateway.calls.length, 3);
    } finally {
      await llm.close();
    }
  });
});

test('openai: a server that keeps failing with 503 fails the episode after the retries, with the status', async () => {
  await withGateway(async (gateway) => {
    const llm = await startScriptedOpenAIServer(() => ({ status: 503, error: 'model overloaded' }));
    try {
      const agent = createOpenAIAgent({ baseUrl: llm.baseUrl, model: 'm', maxRetries: 2, retryBaseMs: 1 });
      await assert.rejects(agent.run(contextFor(gateway)), /failed after 3 attempts; last: HTTP 503: .*model overloaded/);
      assert.equal(llm.requests.length, 3);
      assert.equal(gateway.calls.length, 0);
    } finally {
      await llm.close();
    }
  });
});

test('openai: requests that time out or cannot connect are retried, then fail with the reason', async () => {
  await withGateway(async (gateway) => {
    const llm = await startScriptedOpenAIServer(() => ({ hang: true }));
    try {
      const slow = createOpenAIAgent({ baseUrl: llm.baseUrl, model: 'm', requestTimeoutMs: 50, maxRetries: 1, retryBaseMs: 1 });
      await assert.rejects(slow.run(contextFor(gateway)), /failed after 2 attempts; last: no answer within 50 ms/);
      assert.equal(llm.requests.length, 2);
    } finally {
      await llm.close();
    }
    const closed = createOpenAIAgent({ baseUrl: llm.baseUrl, model: 'm', maxRetries: 1, retryBaseMs: 1 });
    await assert.rejects(closed.run(contextFor(gateway)), /failed after 2 attempts; last: .*ECONNREFUSED/);
  });
});

test('openai: a 401 is not retried and names the status', async () => {
  await withGateway(async (gateway) => {
    const llm = await startScriptedOpenAIServer(() => ({ status: 401, error: 'Incorrect API key provided' }));
    try {
      const agent = createOpenAIAgent({ baseUrl: llm.baseUrl, model: 'm', retryBaseMs: 1 });
      await assert.rejects(agent.run(contextFor(gateway)), /HTTP 401: .*Incorrect API key/);
      assert.equal(llm.requests.length, 1);
    } finally {
      await llm.close();
    }
  });
});

test('openai: abort while the model is thinking stops the episode with the abort reason', async () => {
  await withGateway(async (gateway) => {
    const llm = await startScriptedOpenAIServer([{ hang: true }]);
    try {
      const controller = new AbortController();
      const run = createOpenAIAgent({ baseUrl: llm.baseUrl, model: 'm' }).run(contextFor(gateway, controller.signal));
      await waitFor(() => llm.requests.length === 1);
      controller.abort(new Error('episode interrupted'));
      await assert.rejects(run, /episode interrupted/);
    } finally {
      await llm.close();
    }
  });
});

test('openai: options come from the environment, flags override them, a model is required', () => {
  assert.deepEqual(
    openAIOptionsFromEnv({ MCPBENCH_OPENAI_BASE_URL: 'http://127.0.0.1:8080/v1', MCPBENCH_OPENAI_MODEL: 'qwen', OPENAI_API_KEY: 'k' }),
    { baseUrl: 'http://127.0.0.1:8080/v1', model: 'qwen', apiKey: 'k' },
  );
  assert.deepEqual(openAIOptionsFromEnv({ MCPBENCH_OPENAI_MODEL: 'qwen' }, { model: 'llama', maxTurns: 5 }), {
    baseUrl: DEFAULT_OPENAI_BASE_URL,
    model: 'llama',
    maxTurns: 5,
  });
  assert.throws(() => openAIOptionsFromEnv({ OPENAI_API_KEY: 'k' }), /MCPBENCH_OPENAI_MODEL/);
});

// ---- endpoint

const schemasDir = join(packageRoot(), 'schemas');
const requestSchema = JSON.parse(readFileSync(join(schemasDir, 'endpoint-request.schema.json'), 'utf8'));
const responseSchema = JSON.parse(readFileSync(join(schemasDir, 'endpoint-response.schema.json'), 'utf8'));

test('endpoint schemas: documented, and their own examples validate', () => {
  const ajv = createAjv();
  for (const schema of [requestSchema, responseSchema]) {
    assert.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema');
    for (const key of ['title', 'description', 'examples']) assert.ok(schema[key], `${schema.$id} has no ${key}`);
    for (const [name, property] of Object.entries(schema.properties as Record<string, Record<string, unknown>>)) {
      for (const key of ['title', 'description', 'examples']) assert.ok(property[key], `${schema.$id}: ${name} has no ${key}`);
    }
    const validate = ajv.compile(schema);
    for (const example of schema.examples) assert.ok(validate(example), JSON.stringify(validate.errors));
  }
  const validateResponse = ajv.compile(responseSchema);
  assert.equal(validateResponse({ answer: 42 }), false, 'a non-string answer is rejected');
});

test('endpoint: POSTs the task without predicate or solutions; the endpoint works through the gateway and answers', async () => {
  await withGateway(async (gateway) => {
    const received: Array<{ headers: Record<string, unknown>; raw: string }> = [];
    const endpoint = createServer(async (req, res) => {
      let raw = '';
      for await (const chunk of req) raw += chunk;
      received.push({ headers: req.headers, raw });
      // The participant's agent: connect to the gateway named in the payload and do the work there.
      const payload = JSON.parse(raw);
      const client = new Client({ name: 'hosted-agent', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(payload.gateway.url)));
      const result = await client.callTool({ name: 'travel_hold_flight', arguments: { flight_id: 'AA-500' } });
      await client.close();
      const text = (result.content as Array<{ text: string }>)[0]!.text;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ answer: `done: ${text}`, usage: { steps: 1 } }));
    });
    const port = await listen(endpoint);
    try {
      const agent = createEndpointAgent({ url: `http://127.0.0.1:${port}/run`, timeoutMs: 5000, headers: { authorization: 'Bearer team-7' } });
      const outcome = await agent.run(contextFor(gateway));
      assert.deepEqual(outcome, { answer: 'done: hold H-1 on AA-500' });
      assert.deepEqual(gateway.calls, [{ name: 'travel_hold_flight', arguments: { flight_id: 'AA-500' } }]);

      assert.equal(received.length, 1);
      const { headers, raw } = received[0]!;
      assert.equal(headers.authorization, 'Bearer team-7');
      assert.match(String(headers['content-type']), /application\/json/);
      const payload: Record<string, unknown> = JSON.parse(raw);
      const validate = createAjv().compile(requestSchema);
      assert.ok(validate(payload), JSON.stringify(validate.errors));
      assert.deepEqual(Object.keys(payload).sort(), ['available_tools', 'deadline_ms', 'gateway', 'goal', 'max_steps', 'task_id']);
      assert.deepEqual(payload, {
        task_id: 'travel-hold-cheapest-001',
        goal: 'Find the cheapest AMS to LIS flight and hold it, please.',
        available_tools: TOOLS.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
        max_steps: 6,
        gateway: { url: gateway.url, transport: 'streamable-http' },
        deadline_ms: 5000,
      });
      for (const secret of [SECRET_STATE, SECRET_PREDICATE, SECRET_SOLUTION, 'BB-700', 'success_predicate', 'reference_solutions']) {
        assert.ok(!raw.includes(secret), `the payload leaks ${secret}`);
      }
    } finally {
      await closeHttp(endpoint);
    }
  });
});

test('endpoint: the deadline is the agent timeout, lowered to the task timeout when that is shorter', () => {
  const base = contextFor({ url: 'http://127.0.0.1:1/mcp', calls: [], close: async () => {} });
  const timed = { ...base, task: { ...task, timeout_s: 2.5 } };
  assert.equal(agentDeadlineMs(base, undefined), DEFAULT_AGENT_TIMEOUT_MS);
  assert.equal(agentDeadlineMs(base, 10_000), 10_000);
  assert.equal(agentDeadlineMs(timed, 10_000), 2500);
  assert.equal(agentDeadlineMs(timed, 1000), 1000);
  assert.equal(buildAgentRequest(timed, agentDeadlineMs(timed, 10_000)).deadline_ms, 2500);
});

test('endpoint: a non-2xx status, a body that is not JSON, or a bad answer fails the episode clearly', async () => {
  await withGateway(async (gateway) => {
    const replies = [
      { status: 503, body: 'overloaded, try later' },
      { status: 200, body: '<html>hello</html>' },
      { status: 200, body: JSON.stringify({ answer: 42 }) },
      { status: 200, body: JSON.stringify({ note: 'no answer needed' }) },
    ];
    let next = 0;
    const endpoint = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const reply = replies[next++]!;
        res.writeHead(reply.status, { 'content-type': 'application/json' });
        res.end(reply.body);
      });
    });
    const port = await listen(endpoint);
    try {
      const agent = createEndpointAgent({ url: `http://127.0.0.1:${port}/` });
      await assert.rejects(agent.run(contextFor(gateway)), /HTTP 503: overloaded, try later/);
      await assert.rejects(agent.run(contextFor(gateway)), /not JSON: <html>hello<\/html>/);
      await assert.rejects(agent.run(contextFor(gateway)), /"answer" that is not a string/);
      assert.deepEqual(await agent.run(contextFor(gateway)), {});
    } finally {
      await closeHttp(endpoint);
    }
  });
});

test('endpoint: abort stops waiting for an endpoint that never answers; so does the timeout', async () => {
  await withGateway(async (gateway) => {
    let requests = 0;
    const endpoint = createServer(() => {
      requests++;
    });
    const port = await listen(endpoint);
    try {
      const controller = new AbortController();
      const run = createEndpointAgent({ url: `http://127.0.0.1:${port}/` }).run(contextFor(gateway, controller.signal));
      await waitFor(() => requests === 1);
      controller.abort(new Error('run interrupted'));
      await assert.rejects(run, /run interrupted/);
      await assert.rejects(
        createEndpointAgent({ url: `http://127.0.0.1:${port}/`, timeoutMs: 50 }).run(contextFor(gateway)),
        /did not answer within 50 ms/,
      );
    } finally {
      await closeHttp(endpoint);
    }
  });
});

// ---- command

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'mcpbench-agent-'));
}

const AGENT_SCRIPT = `
const { createRequire } = require('node:module');
const sdk = createRequire(${JSON.stringify(join(packageRoot(), 'package.json'))});
const { Client } = sdk('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = sdk('@modelcontextprotocol/sdk/client/streamableHttp.js');
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => (input += chunk));
process.stdin.on('end', async () => {
  const payload = JSON.parse(input);
  const tools = JSON.parse(process.env.MCPBENCH_TOOLS).map((t) => t.name);
  console.log('thinking about: ' + process.env.MCPBENCH_GOAL);
  console.log('MCPBENCH_ANSWER: a draft that is not the last answer line');
  const client = new Client({ name: 'user-agent', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(process.env.MCPBENCH_GATEWAY_URL)));
  const result = await client.callTool({ name: tools[0], arguments: { from: 'AMS', to: 'LIS' } });
  await client.close();
  const cheapest = JSON.parse(result.content[0].text)[0].id;
  console.log('MCPBENCH_ANSWER: ' + [payload.task_id, process.env.MCPBENCH_TASK_ID, process.env.MCPBENCH_MAX_STEPS, cheapest].join(' '));
  console.log('bye');
});
`;

test('command: the process gets the env and stdin contract, calls the gateway, and its last answer line is the answer', async () => {
  await withGateway(async (gateway) => {
    const dir = tempDir();
    try {
      const script = join(dir, 'agent.cjs');
      writeFileSync(script, AGENT_SCRIPT);
      const agent = createCommandAgent({ command: [process.execPath, script], cwd: dir, timeoutMs: 20_000 });
      const outcome = await agent.run(contextFor(gateway));
      assert.deepEqual(outcome, { answer: 'travel-hold-cheapest-001 travel-hold-cheapest-001 6 AA-500' });
      assert.deepEqual(gateway.calls, [{ name: 'travel_search_flights', arguments: { from: 'AMS', to: 'LIS' } }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

test('command: a shell command string runs; no answer line means no answer; env is passed through', async () => {
  await withGateway(async (gateway) => {
    const agent = createCommandAgent({ command: 'test "$TEAM" = seven && echo "goal=$MCPBENCH_GOAL"', env: { TEAM: 'seven' } });
    assert.deepEqual(await agent.run(contextFor(gateway)), {});
    const failing = createCommandAgent({ command: 'test "$TEAM" = seven', env: { TEAM: 'eight' } });
    await assert.rejects(failing.run(contextFor(gateway)), /exited with code 1/);
  });
});

test('command: a non-zero exit fails the episode with the stderr tail', async () => {
  await withGateway(async (gateway) => {
    const script = "console.log('MCPBENCH_ANSWER: never mind'); console.error('boom: OPENAI_API_KEY is not set'); process.exit(3);";
    const agent = createCommandAgent({ command: [process.execPath, '-e', script] });
    await assert.rejects(agent.run(contextFor(gateway)), (error: Error) => {
      assert.match(error.message, /^command agent exited with code 3; stderr:\nboom: OPENAI_API_KEY is not set$/);
      return true;
    });
  });
});

test('command: a program that does not exist fails with a clear message', async () => {
  await withGateway(async (gateway) => {
    const agent = createCommandAgent({ command: ['/nonexistent/mcpbench-agent'] });
    await assert.rejects(agent.run(contextFor(gateway)), /could not start \/nonexistent\/mcpbench-agent: .*ENOENT/);
  });
});

/** A script that writes its pid and a grandchild's pid to a file, then runs until killed. */
function stubbornScript(pidFile: string, ignoreTerm: boolean): string {
  return `
const { spawn } = require('node:child_process');
const fs = require('node:fs');
${ignoreTerm ? "process.on('SIGTERM', () => {});" : ''}
const grandchild = spawn(process.execPath, ['-e', ${JSON.stringify(`${ignoreTerm ? "process.on('SIGTERM', () => {});" : ''} setInterval(() => {}, 1000)`)}], { stdio: 'ignore' });
fs.writeFileSync(${JSON.stringify(pidFile)} + '.tmp', JSON.stringify([process.pid, grandchild.pid]));
fs.renameSync(${JSON.stringify(pidFile)} + '.tmp', ${JSON.stringify(pidFile)});
setInterval(() => {}, 1000);
`;
}

test('command: abort kills the process and everything it spawned', async () => {
  await withGateway(async (gateway) => {
    const dir = tempDir();
    try {
      const pidFile = join(dir, 'pids.json');
      const controller = new AbortController();
      const agent = createCommandAgent({ command: [process.execPath, '-e', stubbornScript(pidFile, false)] });
      const run = agent.run(contextFor(gateway, controller.signal));
      await waitFor(() => existsSync(pidFile));
      const pids = JSON.parse(readFileSync(pidFile, 'utf8')) as number[];
      assert.ok(pids.every(alive), 'both processes run before the abort');
      controller.abort(new Error('Ctrl-C'));
      await assert.rejects(run, /Ctrl-C/);
      await waitFor(() => !pids.some(alive));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

test('command: on timeout a process that ignores SIGTERM is killed after the grace period', async () => {
  await withGateway(async (gateway) => {
    const dir = tempDir();
    try {
      const pidFile = join(dir, 'pids.json');
      const script = `${stubbornScript(pidFile, true)}; console.error('still working');`;
      const agent = createCommandAgent({ command: [process.execPath, '-e', script], timeoutMs: 3000, killGraceMs: 100 });
      await assert.rejects(agent.run(contextFor(gateway)), /timed out after 3000 ms and was killed; stderr:\nstill working/);
      const pids = JSON.parse(readFileSync(pidFile, 'utf8')) as number[];
      await waitFor(() => !pids.some(alive));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// ---- helpers

/** Whether a process exists and is not a zombie waiting for a parent that will never reap it. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Polls a condition that another process or server makes true; fails (not hangs) if it never does. */
async function waitFor(condition: () => boolean, limitMs = 10_000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > limitMs) throw new Error('the condition never became true');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
