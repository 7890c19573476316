/**
 * Sandboxes: a server under bubblewrap cannot reach a listener on the host's loopback and cannot write
 * outside its sandbox (a plain process can, which shows the probe would notice); a server that crashes or
 * hangs is reported with its stderr and never hangs the caller; container arguments are built right.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { seedSimulation, STATE_FILE } from '../../server/src/mcp/simulation.ts';
import { connectServer, ServerError, startServer } from '../../server/src/runner/launch.ts';
import { prepareWritable, probeBackends, sandboxed, serverConfinement, underTmp, type SandboxBackend } from '../../server/src/runner/sandbox.ts';
import { packageRoot } from '../../server/src/paths.ts';
import { probeConfinement } from '../../server/src/runner/confinement.ts';

const bwrapWorks = probeBackends().find((b) => b.backend === 'bwrap')!.works;

/** Runs a probe script under a backend: it tries the host listener and a write outside the sandbox. */
function probe(backend: SandboxBackend, port: number, sandbox: string, outside: string) {
  const script = `
    const net = require('node:net'), fs = require('node:fs');
    const out = {};
    try { fs.writeFileSync(${JSON.stringify(outside)}, 'escaped'); out.outside = 'written'; } catch (e) { out.outside = e.code; }
    try { fs.writeFileSync('inside.txt', 'ok'); out.inside = 'written'; } catch (e) { out.inside = e.code; }
    const socket = net.connect(${port}, '127.0.0.1');
    socket.setTimeout(3000);
    const done = (r) => { out.network = r; console.log(JSON.stringify(out)); process.exit(0); };
    socket.on('connect', () => done('connected'));
    socket.on('error', (e) => done(e.code));
    socket.on('timeout', () => done('timeout'));`;
  const confinement = serverConfinement(sandbox);
  prepareWritable(confinement, backend);
  const spec = sandboxed(backend, { command: process.execPath, args: ['-e', script], env: { PATH: '/usr/bin:/bin' } }, confinement);
  const result = spawnSync(spec.command, spec.args, { cwd: sandbox, env: spec.env, encoding: 'utf8', timeout: 20_000 });
  assert.equal(result.status, 0, result.stderr);
  return JSON.parse(result.stdout.trim().split('\n').pop()!);
}

test('bubblewrap: no host loopback, no writes outside the sandbox (a plain process can do both)', { skip: bwrapWorks ? false : 'bwrap does not work on this machine (.ci/run installs it)' }, async () => {
  const listener = createServer((socket) => socket.end());
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const port = (listener.address() as { port: number }).port;
  const work = mkdtempSync(join(tmpdir(), 'mcpbench-isolation-'));
  // Outside every sandbox but writable by this user: the package's dist/ folder, which a server sees read-only
  // (the package root itself is not what to aim at: in a checkout under /tmp its path inside the sandbox is on
  // the sandbox's own private /tmp, where a write lands harmlessly).
  const outside = join(packageRoot(), 'dist', `.sandbox-escape-${process.pid}`);
  try {
    const plain = probe('process', port, mkdtempSync(join(work, 'p-')), outside);
    assert.deepEqual(plain, { outside: 'written', inside: 'written', network: 'connected' }, 'the control can reach both');
    rmSync(outside, { force: true });
    const confined = probe('bwrap', port, mkdtempSync(join(work, 'b-')), outside);
    assert.equal(confined.inside, 'written');
    assert.notEqual(confined.outside, 'written');
    assert.equal(existsSync(outside), false, 'nothing was written outside the sandbox');
    assert.notEqual(confined.network, 'connected');
  } finally {
    listener.close();
    rmSync(outside, { force: true });
    rmSync(work, { recursive: true, force: true });
  }
});

test('a simulated server runs under the default backend and keeps its state in the sandbox', async () => {
  const registry = await loadRegistry();
  const info = registry.get('travel')!;
  const sandbox = mkdtempSync(join(tmpdir(), 'mcpbench-travel-'));
  seedSimulation(info, { flights: [{ id: 'AA-500', origin: 'LON', dest: 'PAR', date: '2026-01-05', price: 300, seats_left: 2 }] }, sandbox);
  const server = await startServer(info, sandbox, { startTimeoutMs: 20_000 });
  try {
    assert.equal((await server.listTools()).length, info.server.tools.length);
    const held = await server.callTool('hold_flight', { flight_id: 'AA-500' });
    assert.equal(held.isError, undefined);
  } finally {
    await server.close();
  }
  const state = JSON.parse(readFileSync(join(sandbox, STATE_FILE), 'utf8'));
  assert.equal(state.flights[0].seats_left, 1);
  assert.equal(state.reservations['AA-500'].status, 'held');
  rmSync(sandbox, { recursive: true, force: true });
});

test('a server that crashes at start is reported with the tail of its stderr', async () => {
  const registry = await loadRegistry();
  const sandbox = mkdtempSync(join(tmpdir(), 'mcpbench-crash-'));
  writeFileSync(join(sandbox, STATE_FILE), '{ this is not json');
  await assert.rejects(startServer(registry.get('travel')!, sandbox, { startTimeoutMs: 20_000 }), (error: unknown) => {
    assert.ok(error instanceof ServerError);
    assert.match(error.message, /travel server failed to start/);
    assert.match(error.stderrTail, /JSON/);
    return true;
  });
  rmSync(sandbox, { recursive: true, force: true });
});

test('a server that never answers times out instead of hanging the caller', async () => {
  const sandbox = mkdtempSync(join(tmpdir(), 'mcpbench-hang-'));
  const started = Date.now();
  const hanging = { command: process.execPath, args: ['-e', 'console.error("stuck before initialize"); setInterval(() => {}, 1000)'] };
  await assert.rejects(connectServer('hang', hanging, sandbox, 'process', { startTimeoutMs: 1500 }), (error: unknown) => {
    assert.ok(error instanceof ServerError);
    assert.match(error.message, /did not start within 1500 ms|timed out/i);
    assert.match(error.stderrTail, /stuck before initialize/);
    return true;
  });
  assert.ok(Date.now() - started < 10_000);
  rmSync(sandbox, { recursive: true, force: true });
});

test('container backends: no network, read-only root, no capabilities, an unprivileged user, limits, only the runtime and the sandbox mounted', () => {
  for (const engine of ['docker', 'podman'] as const) {
    const confinement = serverConfinement('/sb/x');
    const spec = sandboxed(engine, { command: process.execPath, args: ['/pkg/dist/cli.js', 'serve', 'travel', '--dir', '/sb/x'], env: { HOME: '/sb/x', SECRET_API_KEY: 'k' } }, confinement, 'node:20-bookworm-slim');
    // A supervisor runs the engine client (and removes the container when it is signalled).
    assert.equal(spec.command, process.execPath);
    assert.deepEqual(spec.args.slice(2, 5), [engine, spec.container!.name, 'run']);
    const args = spec.args.slice(5).join(' ');
    assert.match(args, /^--rm -i --init --pull never --log-driver none --name mcpbench-sandbox-\d+-[0-9a-f]+ --label mcpbench\.sandbox=\d+ --network none --hostname mcpbench-sandbox --read-only --cap-drop ALL --security-opt no-new-privileges --user \d+:\d+ /);
    assert.match(args, / --pids-limit \d+ --memory \d+ (--ulimit nproc=\S+ --ulimit nofile=\S+ )?--ulimit fsize=\d+:\d+ --ulimit data=\d+:\d+ --ulimit core=0:0 --tmpfs \/tmp:rw,size=\d+,mode=1777 /);
    assert.match(args, new RegExp(`--volume ${join(packageRoot(), 'dist').replace(/[/.]/g, '\\$&')}:[^ ]+:ro`));
    assert.doesNotMatch(args, new RegExp(`--volume ${packageRoot().replace(/[/.]/g, '\\$&')}:`), 'not the whole checkout');
    assert.match(args, /--volume \/sb\/x:\/sb\/x:rw --workdir \/sb\/x/);
    // Variable names only: values stay out of the command line (and out of `ps`); HOME, a name the engine reads itself, by value.
    assert.match(args, /--env HOME=\/sb\/x --env SECRET_API_KEY node:20-bookworm-slim node \/pkg\/dist\/cli\.js serve travel --dir \/sb\/x$/);
    assert.doesNotMatch(args, /=k\b/);
    assert.equal(spec.env?.SECRET_API_KEY, 'k');
  }
});

test('bubblewrap: what the server needs from under /tmp (a checkout, a Node) is bound back read-only over the private /tmp', () => {
  assert.deepEqual(underTmp(['/tmp/ci', '/tmp/ci/node_modules/node/bin', '/usr/local/bin', '/tmp/ci']), ['/tmp/ci']);
  assert.deepEqual(underTmp(['/work/main', '/usr/bin']), []);
  const args = sandboxed('bwrap', { command: process.execPath, args: ['x.js'] }, serverConfinement('/tmp/sb')).args;
  const tmpfs = args.indexOf('/tmp', args.indexOf('--tmpfs'));
  const sandbox = args.lastIndexOf('--bind');
  assert.ok(tmpfs > 0 && sandbox > tmpfs, 'the sandbox is bound after the private /tmp');
  for (const path of [join(packageRoot(), 'dist'), join(packageRoot(), 'node_modules')]) {
    const at = args.findIndex((a, i) => a === '--ro-bind' && args[i + 1] === path);
    assert.ok(at > tmpfs, `${path} is bound after the private /tmp`);
  }
});

test('doctor: the confinement is probed from inside: bubblewrap has loopback only, no capabilities and limits; a plain process has none of it', { skip: bwrapWorks ? false : 'bwrap does not work on this machine (.ci/run installs it)', timeout: 60_000 }, async () => {
  const confined = await probeConfinement('bwrap');
  assert.ok(!('error' in confined), JSON.stringify(confined));
  assert.match(confined.network, /^loopback only/);
  assert.match(confined.filesystem, /no checkout beyond what runs; no host \S+; writes outside its folder never reach the host/);
  assert.match(confined.user, /^uid 65534 inside, .*capabilities none$/);
  assert.match(confined.limits, /^processes 256, file size 1 GiB, data 4 GiB$/);
  const plain = await probeConfinement('process');
  assert.ok(!('error' in plain));
  assert.match(plain.network, /^the host's network/);
  assert.match(plain.filesystem, /CAN write outside its folder/);
});
