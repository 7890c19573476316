import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startEndpointServer, type AgentRequest } from '../../client/src/endpoint-server.ts';

const request: AgentRequest = {
  task_id: 't', goal: 'do it', max_steps: 3, deadline_ms: 60_000,
  available_tools: [{ name: 'fs_read', inputSchema: { type: 'object' } }],
  gateway: { url: 'http://127.0.0.1:1/mcp', transport: 'streamable-http' },
};

test('the endpoint answers a request in the hosted-endpoint format', async () => {
  const seen: AgentRequest[] = [];
  const server = await startEndpointServer(async (r) => (seen.push(r), { answer: `done ${r.task_id}` }));
  try {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    const response = await fetch(server.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(request) });
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { answer: 'done t' });
    assert.deepEqual(seen, [request]);
    const bad = await fetch(server.url, { method: 'POST', body: '{"goal": 1}' });
    assert.equal(bad.status, 400);
    const failing = await startEndpointServer(async () => {
      throw new Error('no model');
    });
    try {
      const r = await fetch(failing.url, { method: 'POST', body: JSON.stringify(request) });
      assert.equal(r.status, 500);
      assert.deepEqual(await r.json(), { error: 'no model' });
    } finally {
      await failing.close();
    }
  } finally {
    await server.close();
  }
});

test('the handler sees an abort when the runner hangs up', async () => {
  let aborted!: Promise<unknown>;
  const server = await startEndpointServer((_, signal) => {
    aborted = new Promise((resolve) => signal.addEventListener('abort', () => resolve(signal.reason)));
    return aborted.then(() => ({}));
  });
  try {
    const controller = new AbortController();
    const pending = fetch(server.url, { method: 'POST', body: JSON.stringify(request), signal: controller.signal }).catch((e: Error) => e);
    while (!aborted) await new Promise((r) => setTimeout(r, 10));
    controller.abort();
    assert.match(String(await aborted), /closed the request/);
    assert.ok((await pending) instanceof Error);
  } finally {
    await server.close();
  }
});
