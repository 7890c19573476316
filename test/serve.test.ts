/**
 * dist/serve.js, the lean server entry every episode starts (one per namespace): it serves the same tools as
 * `mcpbench serve`, and refuses bad arguments with a message and exit code 2.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { loadRegistry } from '../server/src/mcp/registry.ts';

const serveJs = join(__dirname, '..', 'dist', 'serve.js');

test('serve.js lists the namespace file\'s tools and answers a call on the seeded state', async () => {
  const sandbox = mkdtempSync(join(tmpdir(), 'mcpbench-serve-'));
  const state = join(sandbox, '..', `serve-${process.pid}.json`);
  writeFileSync(state, JSON.stringify({ flights: [{ id: 'AA-500', origin: 'LON', dest: 'PAR', date: '2026-01-05', price: 300, seats_left: 10 }] }));
  const client = new Client({ name: 'mcpbench-test', version: '0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [serveJs, 'travel', '--state', state, '--dir', sandbox], stderr: 'pipe' }));
  try {
    const { tools } = await client.listTools();
    const declared = (await loadRegistry()).get('travel')!.server.tools.map((t) => t.name);
    assert.deepEqual(tools.map((t) => t.name).sort(), [...declared].sort());
    const result = await client.callTool({ name: 'search_flights', arguments: { origin: 'LON', dest: 'PAR', date: '2026-01-05' } });
    assert.match(JSON.stringify(result.content), /AA-500/);
  } finally {
    await client.close();
    rmSync(sandbox, { recursive: true, force: true });
    rmSync(state, { force: true });
  }
});

test('serve.js refuses an unknown namespace and a missing --dir with exit code 2', () => {
  const unknown = spawnSync(process.execPath, [serveJs, 'nosuch', '--dir', tmpdir()], { encoding: 'utf8', input: '' });
  assert.equal(unknown.status, 2);
  assert.match(unknown.stderr, /unknown namespace nosuch: known are .*travel/);
  const usage = spawnSync(process.execPath, [serveJs, 'travel'], { encoding: 'utf8', input: '' });
  assert.equal(usage.status, 2);
  assert.match(usage.stderr, /usage: serve\.js <namespace> --dir SANDBOX/);
});
