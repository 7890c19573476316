/**
 * The endpoint and command agents (the model agents are in model-agents.test.ts), each against a real MCP server on streamable HTTP shaped like
 * the gateway (two travel tools that record their calls; unknown names answered with an error): the
 * agents reach the task only through it, hand back the final answer, fail with clear messages, and stop
 * (killing their processes) when aborted.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createCommandAgent } from '../../server/src/runner/agents/command.ts';
import { agentDeadlineMs, buildAgentRequest, createEndpointAgent, DEFAULT_AGENT_TIMEOUT_MS } from '../../server/src/runner/agents/endpoint.ts';
import { createAjv } from '../../server/src/ajv.ts';
import { packageRoot } from '../../server/src/paths.ts';
import { closeHttp, contextFor, listen, SECRET_PREDICATE, SECRET_SOLUTION, SECRET_STATE, task, TOOLS, waitFor, withGateway } from './fake-gateway.ts';

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
