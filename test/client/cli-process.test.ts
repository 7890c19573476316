import assert from 'node:assert/strict';
import { test } from 'node:test';
import { execCli, startCli } from '../../client/src/cli-process.ts';
import type { RunEvent } from '../../server/src/engine/protocol.ts';

const script = (body: string) => ['-e', body];

test('stdout events and other lines are separated; stderr goes to the log', async () => {
  const events: RunEvent[] = [];
  let log = '';
  const run = startCli({
    command: process.execPath,
    args: script(`console.log(JSON.stringify({type:'run-started',run_id:'x',tasks:[],episodes:0,agent:'a',fault_profile:'none',seed:1})); console.log('hello'); console.error('warn');`),
    cwd: process.cwd(),
    onEvent: (e) => events.push(e),
    onLog: (t) => (log += t),
  });
  const exit = await run.exited;
  assert.equal(exit.code, 0);
  assert.equal(exit.cancelled, false);
  assert.deepEqual(events.map((e) => e.type), ['run-started']);
  assert.match(log, /hello\n/);
  assert.match(log, /warn/);
});

test('cancel sends SIGINT; a process that ignores it is killed', async () => {
  const polite = startCli({ command: process.execPath, args: script(`process.on('SIGINT',()=>{console.error('stopping');process.exit(130)}); console.log('ready'); setInterval(()=>{},1000)`), cwd: process.cwd(), onEvent: () => undefined, onLog: (t) => t.includes('ready') && polite.cancel() });
  const a = await polite.exited;
  assert.deepEqual([a.code, a.cancelled], [130, true]);

  const stubborn = startCli({ command: process.execPath, args: script(`process.on('SIGINT',()=>{}); console.log('ready'); setInterval(()=>{},1000)`), cwd: process.cwd(), killGraceMs: 50, onEvent: () => undefined, onLog: (t) => t.includes('ready') && stubborn.cancel() });
  const b = await stubborn.exited;
  assert.deepEqual([b.signal, b.cancelled], ['SIGKILL', true]);
});

test('a command that does not exist ends with an error, not a hang', async () => {
  const exit = await startCli({ command: '/nonexistent/mcpbench', args: [], cwd: process.cwd(), onEvent: () => undefined }).exited;
  assert.ok(exit.error);
});

test('execCli collects what a short command printed, its exit code, and reports a missing command', async () => {
  let streamed = '';
  const result = await execCli({ command: process.execPath, args: script(`console.log(JSON.stringify({ok:true})); console.error('note'); process.exit(1)`), cwd: process.cwd(), onStderr: (t) => (streamed += t) });
  assert.deepEqual([result.code, JSON.parse(result.stdout), result.stderr.trim(), streamed.trim()], [1, { ok: true }, 'note', 'note']);
  const missing = await execCli({ command: '/nonexistent/mcpbench', args: [], cwd: process.cwd() });
  assert.ok(missing.error);
  assert.equal(missing.code, null);
});
