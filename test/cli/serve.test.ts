/**
 * dist/serve.js, the lean server entry every episode starts (one per namespace): it serves the same tools as
 * `mcpbench serve`, and refuses bad arguments with a message and exit code 2. dist/serve-boot.js, which the
 * runner starts, runs it from V8's code cache and serves exactly the same, also when the cache is rejected.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { loadRegistry } from '../../server/src/mcp/registry.ts';

const serveJs = join(__dirname, '..', '..', 'dist', 'serve.js');

async function listsAndAnswers(entry: string) {
  const sandbox = mkdtempSync(join(tmpdir(), 'mcpbench-serve-'));
  const state = join(sandbox, '..', `serve-${process.pid}.json`);
  writeFileSync(state, JSON.stringify({ flights: [{ id: 'AA-500', origin: 'LON', dest: 'PAR', date: '2026-01-05', price: 300, seats_left: 10 }] }));
  const client = new Client({ name: 'mcpbench-test', version: '0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: ['--liftoff-only', entry, 'travel', '--state', state, '--dir', sandbox], stderr: 'pipe' }));
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
}

test('serve.js lists the namespace file\'s tools and answers a call on the seeded state', () => listsAndAnswers(serveJs));

test('serve-boot.js serves the same from the build\'s code cache', (t) => {
  const boot = join(__dirname, '..', '..', 'dist', 'serve-boot.js');
  if (!existsSync(`${serveJs}.v8cache`)) return t.skip('no code cache: npm run build makes it');
  return listsAndAnswers(boot);
});

test('serve-boot.js serves the same when V8 rejects the code cache', async () => {
  // Inside the checkout: serve.js finds the package (schemas/) above its own folder.
  const dist = mkdtempSync(join(__dirname, '..', '..', '.test-boot-'));
  try {
    copyFileSync(serveJs, join(dist, 'serve.js'));
    copyFileSync(join(__dirname, '..', '..', 'dist', 'serve-boot.js'), join(dist, 'serve-boot.js'));
    writeFileSync(join(dist, 'serve.js.v8cache'), Buffer.from('not a V8 code cache'));
    await listsAndAnswers(join(dist, 'serve-boot.js'));
  } finally {
    rmSync(dist, { recursive: true, force: true });
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
