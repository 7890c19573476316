/**
 * The attack corpus: a hostile command agent and a hostile server try what an attacker would (read the set
 * key and API keys from the environment, read files outside the sandbox, write outside it, reach a listener
 * on the host's loopback or a host Unix socket, get to a host that is not allowed through the egress proxy,
 * fork without bound, fill the disk), each confined as `mcpbench run` confines it. Every attempt must fail
 * and be visible in the episode's record (the agent's answer, the egress trace); an allowed model endpoint
 * on loopback must still work through the proxy. An unconfined control run shows the probes would notice.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createNetServer, type Server as NetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../server/src/cli/main.ts';
import { loadRegistry } from '../server/src/mcp/registry.ts';
import { packageRoot } from '../server/src/paths.ts';
import { AGENT_SANDBOX_NONE_WARNING, createCommandAgent, type AgentSandboxOptions } from '../server/src/runner/agents/command.ts';
import type { Agent } from '../server/src/runner/agents/agent.ts';
import { runEpisode } from '../server/src/runner/episode.ts';
import { CALLS_PAST_BUDGET } from '../server/src/runner/gateway.ts';
import { AGENT_LIMITS, prepareWritable, probeBackends, sandboxed, SERVER_LIMITS, serverConfinement, serverEnvironment } from '../server/src/runner/sandbox.ts';
import type { EpisodeResult } from '../server/src/runner/types.ts';
import { canonicalHash } from '../server/src/tasks/hash.ts';
import type { Task } from '../server/src/tasks/model.ts';

const bwrapWorks = probeBackends().find((b) => b.backend === 'bwrap')!.works;
const skip = bwrapWorks ? false : 'bwrap does not work on this machine (.ci/run installs it)';
const SECRETS = { MCPBENCH_SET_KEY: 'set-key-0123456789abcdef', OPENAI_API_KEY: 'sk-attack-corpus', GITHUB_TOKEN: 'ghp_attack_corpus' };

const taskFile = join(packageRoot(), 'test', 'fixtures', 'tasks', 'travel', 'travel-cheapest-flight-001.json');
const task = JSON.parse(readFileSync(taskFile, 'utf8')) as Task;

/**
 * The probe every hostile process runs (plain Node, no dependencies): each attempt's outcome by name, as one
 * JSON line prefixed `MCPBENCH_ANSWER:` (the command agent's answer line). argv[2] is a JSON of targets.
 */
const PROBE = String.raw`
const fs = require('node:fs'), net = require('node:net'), http = require('node:http'), cp = require('node:child_process');
const t = JSON.parse(process.argv[process.argv.length - 1]);
const out = {};
const attempt = (name, fn) => { try { out[name] = fn(); } catch (e) { out[name] = e.code || e.message; } };
attempt('env', () => Object.keys(process.env).filter((k) => /KEY|TOKEN|SECRET/.test(k) && k !== 'MCPBENCH_SCRATCH').join(',') || 'none');
for (const [name, path] of Object.entries(t.read)) attempt('read_' + name, () => { const text = fs.readFileSync(path, 'utf8'); return text.length ? 'read' : 'empty'; });
attempt('write_outside', () => (fs.writeFileSync(t.outside, 'escaped'), 'written'));
attempt('write_here', () => (fs.writeFileSync('probe-write.txt', 'x'), 'written'));
const connect = (opts) => new Promise((res) => { const s = net.connect(opts); s.setTimeout(3000); s.on('connect', () => { s.destroy(); res('connected'); }); s.on('error', (e) => res(e.code)); s.on('timeout', () => { s.destroy(); res('timeout'); }); });
const viaProxy = (method, target) => new Promise((res) => {
  const proxy = process.env.HTTP_PROXY;
  if (!proxy) return res('no proxy');
  const u = new URL(proxy);
  const req = http.request({ host: u.hostname, port: u.port, method, path: target, headers: { host: method === 'CONNECT' ? target : new URL(target).host } });
  req.on('connect', (resp, socket) => { socket.destroy(); res(resp.statusCode); });
  req.on('response', (resp) => { let body = ''; resp.on('data', (c) => (body += c)); resp.on('end', () => res(resp.statusCode + (body.startsWith('model:') ? ' ' + body : ''))); });
  req.on('error', (e) => res(e.code));
  req.end();
});
(async () => {
  out.loopback = await connect({ host: '127.0.0.1', port: t.port });
  out.unix = await connect({ path: t.socket });
  if (t.proxy) {
    out.proxy_connect = await viaProxy('CONNECT', 'example.com:443');
    out.proxy_loopback = await viaProxy('GET', 'http://127.0.0.1:' + t.port + '/');
    out.proxy_model = await viaProxy('GET', t.model);
  }
  if (t.heavy) {
    // Fork without bound: a shell forks children until the kernel refuses (they die with the sandbox).
    const bomb = cp.spawnSync('/bin/sh', ['-c', 'n=0; while [ $n -lt 2000 ]; do sleep 10 >/dev/null 2>&1 & n=$((n+1)); done; echo $n'], { encoding: 'utf8' });
    out.fork_error = /Cannot fork/.test(bomb.stderr) ? 'EAGAIN' : 'forked ' + bomb.stdout.trim();
    out.processes = fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p)).length;
    // Fill the disk: the private /tmp until it is full.
    let written = 0;
    const chunk = Buffer.alloc(1 << 20, 120);
    try { const fd = fs.openSync('/tmp/fill', 'w'); for (;;) { fs.writeSync(fd, chunk); written += chunk.length; if (written > 4 * 1024 * 1024 * 1024) break; } } catch (e) { out.fill_error = e.code; }
    out.fill_mib = Math.round(written / (1 << 20));
  }
  console.log('MCPBENCH_ANSWER: ' + JSON.stringify(out));
  process.exit(0);
})();
`;

interface Host {
  work: string;
  /** Connections the host's listeners accepted: none may come from a confined process. */
  connections: { loopback: number; unix: number; model: number };
  loopbackPort: number;
  socket: string;
  modelUrl: string;
  modelHost: string;
  targets(extra: Record<string, unknown>): Record<string, unknown>;
  close(): Promise<void>;
}

/** What an attacker would go for: planted secrets, the sealed set, the checkout, host listeners. */
async function hostile(): Promise<Host> {
  const work = mkdtempSync(join(tmpdir(), 'mcpbench-attacks-'));
  // Traversable by others, as an agent's folder must be for the sandbox to run as nobody (when we are root).
  chmodSync(work, 0o711);
  mkdirSync(join(work, 'private'), { mode: 0o700 });
  writeFileSync(join(work, 'private', 'secret.txt'), 'the private set key is 0123');
  writeFileSync(join(work, 'private', 'set.sealed.json'), '{"format":"mcpbench-sealed-set"}');
  const connections = { loopback: 0, unix: 0, model: 0 };
  const listener: NetServer = createNetServer((s) => (connections.loopback++, s.end()));
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  const socket = join(work, 'host.sock');
  const unix: NetServer = createNetServer((s) => (connections.unix++, s.end()));
  await new Promise<void>((r) => unix.listen(socket, r));
  const model: HttpServer = createHttpServer((_req, res) => (connections.model++, res.end('model: ok')));
  await new Promise<void>((r) => model.listen(0, '127.0.0.1', r));
  const loopbackPort = (listener.address() as { port: number }).port;
  const modelPort = (model.address() as { port: number }).port;
  return {
    work,
    connections,
    loopbackPort,
    socket,
    modelUrl: `http://127.0.0.1:${modelPort}/v1/models`,
    modelHost: `127.0.0.1:${modelPort}`,
    targets: (extra) => ({
      read: {
        secret: join(work, 'private', 'secret.txt'),
        sealed: join(work, 'private', 'set.sealed.json'),
        // The checkout beyond what runs (a server sees dist/, node_modules/, schemas/ and package.json only).
        checkout: taskFile,
        shadow: '/etc/shadow',
        root_home: '/root/.bashrc',
        ...(extra.read as object),
      },
      outside: join(work, 'private', 'escaped.txt'),
      port: loopbackPort,
      socket,
      ...Object.fromEntries(Object.entries(extra).filter(([k]) => k !== 'read')),
    }),
    close: async () => {
      await Promise.all([listener, unix, model].map((s) => new Promise<void>((r) => s.close(() => r()))));
      rmSync(work, { recursive: true, force: true });
    },
  };
}

async function episode(agent: Agent): Promise<EpisodeResult> {
  return runEpisode(
    {
      task,
      taskHash: canonicalHash(task),
      key: { task_id: task.id, trial: 0, variant: 'command', fault_profile: 'none', perturbation: 'none' },
      agent,
      profile: { name: 'none', failure_rate: 0, fault_weights: {} },
      goal: task.goal,
    },
    { runId: 'attacks', registry: await loadRegistry(), seed: 1, backend: 'bwrap' },
  );
}

/** Runs `body` with the runner's environment holding the secrets an attacker wants. */
async function withSecrets<T>(body: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(SECRETS).map((k) => [k, process.env[k]]));
  Object.assign(process.env, SECRETS);
  try {
    return await body();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

function answerOf(result: EpisodeResult): Record<string, unknown> {
  assert.equal(result.error, undefined, `the probe ran to its end: ${result.error?.message}`);
  assert.ok(result.answer, 'the probe answered');
  return JSON.parse(result.answer!) as Record<string, unknown>;
}

test('a confined command agent: no secrets, no host files, no writes out, no host sockets, only allowed hosts through the proxy, bounded processes and disk', { skip, timeout: 120_000 }, async () => {
  const host = await hostile();
  const agentDir = join(host.work, 'agent');
  mkdirSync(agentDir);
  writeFileSync(join(agentDir, 'probe.cjs'), PROBE);
  // A task file of the run inside the agent's folder: hidden (an unreadable node is mounted over it).
  writeFileSync(join(agentDir, 'task.json'), JSON.stringify(task));
  const sandbox: AgentSandboxOptions = { backend: 'bwrap', dir: agentDir, allowHosts: [host.modelHost], hidden: [join(agentDir, 'task.json')] };
  try {
    const targets = host.targets({ read: { task_in_agent_dir: join(agentDir, 'task.json') }, proxy: true, model: host.modelUrl, heavy: true });
    const agent = createCommandAgent({ command: [process.execPath, 'probe.cjs', JSON.stringify(targets)], sandbox, timeoutMs: 60_000 });
    const result = await withSecrets(() => episode(agent));
    const seen = answerOf(result);
    assert.equal(seen.env, 'none', 'no key or token in its environment');
    for (const name of ['secret', 'sealed', 'checkout', 'shadow', 'root_home']) assert.equal(seen[`read_${name}`], 'ENOENT', `${name} is not there`);
    assert.equal(seen.read_task_in_agent_dir, 'EACCES', "the run's task file in its folder is hidden");
    assert.notEqual(seen.write_outside, 'written');
    assert.equal(existsSync(join(host.work, 'private', 'escaped.txt')), false, 'nothing was written outside');
    assert.equal(seen.write_here, 'EROFS', 'its folder is read-only');
    assert.equal(seen.loopback, 'ECONNREFUSED', "the host's loopback is not its loopback");
    assert.equal(seen.unix, 'ENOENT', 'no host Unix socket is visible');
    assert.equal(seen.proxy_connect, 403);
    assert.equal(seen.proxy_loopback, '403', 'the proxy does not reach a loopback port that is not allowed');
    assert.equal(seen.proxy_model, '200 model: ok', 'the allowed model endpoint works through the proxy');
    assert.equal(seen.fork_error, 'EAGAIN', 'forking stops at the process limit');
    assert.ok(Number(seen.processes) <= AGENT_LIMITS.processes + 8, `processes bounded: ${seen.processes}`);
    assert.equal(seen.fill_error, 'ENOSPC', 'the private /tmp fills up');
    assert.ok(Number(seen.fill_mib) <= AGENT_LIMITS.tmpBytes / (1 << 20), `${seen.fill_mib} MiB written`);
    assert.deepEqual(host.connections, { loopback: 0, unix: 0, model: 1 }, 'only the allowed endpoint was reached');
    // Every proxy attempt is in the episode's trace, refused ones with the reason.
    const egress = result.egress ?? [];
    assert.deepEqual(
      egress.map((e) => [e.method, `${e.host}:${e.port}`, e.allowed]),
      [
        ['CONNECT', 'example.com:443', false],
        ['GET', `127.0.0.1:${host.loopbackPort}`, false],
        ['GET', host.modelHost, true],
      ],
    );
    assert.match(egress[0]!.reason!, /not an allowed host/);
  } finally {
    await host.close();
  }
});

test('control: the same probe unconfined reaches what the sandbox keeps from it (the probes would notice)', { timeout: 60_000 }, async () => {
  const host = await hostile();
  const dir = join(host.work, 'agent');
  mkdirSync(dir);
  try {
    const targets = host.targets({ read: {} });
    const agent = createCommandAgent({ command: [process.execPath, '-e', PROBE, JSON.stringify(targets)], cwd: dir, timeoutMs: 30_000 });
    const seen = answerOf(await withSecrets(() => episode(agent)));
    assert.equal(seen.env, 'none', 'the environment is allow-listed even unconfined');
    assert.equal(seen.read_secret, 'read');
    assert.equal(seen.read_checkout, 'read');
    assert.equal(seen.write_outside, 'written');
    assert.equal(seen.loopback, 'connected');
    assert.equal(seen.unix, 'connected');
  } finally {
    await host.close();
  }
});

test('a hostile server (what a hostile task state could make a server run) is confined like the agent', { skip, timeout: 60_000 }, async () => {
  const host = await hostile();
  const sandbox = join(host.work, 'sandbox');
  mkdirSync(sandbox);
  try {
    const confinement = serverConfinement(sandbox);
    prepareWritable(confinement, 'bwrap');
    // The environment launch.ts gives every server, built from a runner environment full of secrets.
    const env = serverEnvironment(sandbox, {}, { ...process.env, ...SECRETS });
    assert.deepEqual(Object.keys(SECRETS).filter((k) => k in env), []);
    writeFileSync(join(sandbox, 'probe.cjs'), PROBE);
    const spec = sandboxed('bwrap', { command: process.execPath, args: ['probe.cjs', JSON.stringify(host.targets({ read: {}, heavy: true }))], env }, confinement);
    const run = spawnSync(spec.command, spec.args, { cwd: sandbox, env: spec.env, encoding: 'utf8', timeout: 45_000 });
    assert.equal(run.status, 0, run.stderr);
    const seen = JSON.parse(run.stdout.trim().split('\n').pop()!.replace(/^MCPBENCH_ANSWER: /, '')) as Record<string, unknown>;
    assert.equal(seen.env, 'none');
    for (const name of ['secret', 'sealed', 'checkout', 'shadow', 'root_home']) assert.equal(seen[`read_${name}`], 'ENOENT', `${name} is not there`);
    assert.notEqual(seen.write_outside, 'written');
    assert.equal(existsSync(join(host.work, 'private', 'escaped.txt')), false);
    assert.equal(seen.write_here, 'written', 'its own sandbox folder is writable');
    assert.equal(seen.loopback, 'ECONNREFUSED');
    assert.equal(seen.unix, 'ENOENT');
    assert.equal(seen.fork_error, 'EAGAIN', 'forking stops at the process limit');
    assert.ok(Number(seen.processes) <= SERVER_LIMITS.processes + 8, `processes bounded: ${seen.processes}`);
    assert.equal(seen.fill_error, 'ENOSPC');
    assert.deepEqual(host.connections, { loopback: 0, unix: 0, model: 0 });
  } finally {
    await host.close();
  }
});

test('a runaway agent that keeps calling unlisted tools is stopped a documented number of calls past max_steps', { skip, timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcpbench-runaway-'));
  const script = String.raw`
const http = require('node:http');
const post = (body, session) => new Promise((res, rej) => {
  const req = http.request(process.env.MCPBENCH_GATEWAY_URL, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(session ? { 'mcp-session-id': session } : {}) } }, (r) => { let b = ''; r.on('data', (c) => (b += c)); r.on('end', () => res({ session: r.headers['mcp-session-id'], body: b })); });
  req.on('error', rej);
  req.end(JSON.stringify(body));
});
(async () => {
  const init = await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'runaway', version: '1' } } });
  for (let i = 1; ; i++) await post({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'travel_launch_rockets', arguments: { pad: 'x'.repeat(10000) } } }, init.session).catch(() => {});
})();
`;
  writeFileSync(join(dir, 'runaway.cjs'), script);
  try {
    const agent = createCommandAgent({ command: [process.execPath, 'runaway.cjs'], sandbox: { backend: 'bwrap', dir }, timeoutMs: 45_000, killGraceMs: 100 });
    const result = await episode(agent);
    // Ended by the gateway, and the record says why: an agent error of its own code, with what became of the process.
    assert.equal(result.status, 'agent_error');
    assert.equal(result.passed, false);
    assert.equal(result.error?.kind, 'agent');
    assert.equal(result.error?.code, 'agent-runaway');
    assert.match(result.error?.message ?? '', new RegExp(`${CALLS_PAST_BUDGET} past max_steps \\(${task.max_steps}\\), and kept calling: the episode was ended`));
    assert.equal(result.error?.exited, true, 'its whole sandbox was stopped');
    assert.equal(result.calls.length, task.max_steps + CALLS_PAST_BUDGET, 'the trace stops at the limit');
    assert.ok(JSON.stringify(result).length < 2_000_000, 'one bounded journal line');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a confined agent whose sandbox cannot be built is an infrastructure error (ours: retried, never scored), not the agent\'s', { skip, timeout: 60_000 }, async () => {
  const work = mkdtempSync(join(tmpdir(), 'mcpbench-no-sandbox-'));
  try {
    // A sandbox that fails before the agent starts: bubblewrap cannot hide a file that is not there in a
    // folder it binds read-only.
    const broken = createCommandAgent({ command: ['/bin/false'], sandbox: { backend: 'bwrap', dir: work, hidden: [join(work, 'missing.json')] }, timeoutMs: 30_000 });
    const failed = await episode(broken);
    assert.equal(failed.status, 'infra_error');
    assert.equal(failed.error?.kind, 'infra');
    assert.equal(failed.error?.code, 'agent-sandbox');
    assert.match(failed.error?.message ?? '', /the command agent's bwrap sandbox ended before the agent started \(exit code \d+\)/);
    assert.match(failed.error?.stderr_tail ?? '', /missing\.json/, "bubblewrap's own words are kept");
    // The same agent program in a sandbox that comes up fails as the agent's own: an agent error.
    const exited = await episode(createCommandAgent({ command: ['/bin/false'], sandbox: { backend: 'bwrap', dir: work }, timeoutMs: 30_000 }));
    assert.equal(exited.status, 'agent_error');
    assert.equal(exited.error?.code, 'agent-exit');
    assert.equal(exited.error?.exit_code, 1);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});

test("a confined agent whose sandbox never comes up is ours (agent-sandbox), whether the episode's timeout or its own deadline stops it first", { timeout: 60_000 }, async () => {
  // No container engine here: a stand-in `podman` (named as such) that hangs the way an engine does when it
  // cannot start the container (an image pull that never ends). The forwarder inside never says it is up.
  const work = mkdtempSync(join(tmpdir(), 'mcpbench-never-up-'));
  const bin = join(work, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'podman'), '#!/bin/sh\nexec sleep 600\n');
  chmodSync(join(bin, 'podman'), 0o755);
  const savedPath = process.env.PATH;
  process.env.PATH = `${bin}:${savedPath ?? '/usr/bin:/bin'}`;
  const run = async (timeoutS: number, agentTimeoutMs: number) => {
    const quick = { ...task, timeout_s: timeoutS };
    const agent = createCommandAgent({ command: ['/bin/true'], sandbox: { backend: 'podman', dir: work }, timeoutMs: agentTimeoutMs, killGraceMs: 100 });
    return runEpisode(
      { task: quick, taskHash: canonicalHash(quick), key: { task_id: task.id, trial: 0, variant: 'command', fault_profile: 'none', perturbation: 'none' }, agent, profile: { name: 'none', failure_rate: 0, fault_weights: {} }, goal: task.goal },
      { runId: 'never-up', registry: await loadRegistry(), seed: 1, backend: 'process' },
    );
  };
  try {
    // The episode's timeout fires first (the agent's deadline is the same moment, set later).
    const episodeFirst = await run(2, 60_000);
    assert.deepEqual([episodeFirst.status, episodeFirst.error?.kind, episodeFirst.error?.code], ['infra_error', 'infra', 'agent-sandbox']);
    assert.equal(episodeFirst.error?.message, "the command agent's podman sandbox had not come up when the episode ended");
    // Its own deadline first.
    const deadlineFirst = await run(30, 1500);
    assert.deepEqual([deadlineFirst.status, deadlineFirst.error?.kind, deadlineFirst.error?.code], ['infra_error', 'infra', 'agent-sandbox']);
    assert.equal(deadlineFirst.error?.message, "the command agent's podman sandbox did not come up within 1500 ms");
  } finally {
    process.env.PATH = savedPath;
    rmSync(work, { recursive: true, force: true });
  }
});

test('a confined agent can take the gateway over its stdio: no network needed at all', { skip, timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcpbench-stdio-agent-'));
  const script = String.raw`
const rl = require('node:readline').createInterface({ input: process.stdin });
const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
const waiting = new Map();
rl.on('line', (line) => { const m = JSON.parse(line); waiting.get(m.id)?.(m); });
const call = (id, method, params) => new Promise((res) => { waiting.set(id, res); send({ jsonrpc: '2.0', id, method, params }); });
(async () => {
  await call(1, 'initialize', { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'stdio-agent', version: '1' } });
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  const list = await call(2, 'tools/list', {});
  const found = await call(3, 'tools/call', { name: 'travel_search_flights', arguments: { origin: 'LON', dest: 'PAR', date: '2026-01-05' } });
  process.stderr.write('MCPBENCH_ANSWER: ' + list.result.tools.length + ' tools; ' + (found.result.isError ? 'error' : 'found') + '\n');
  process.exit(0);
})();
`;
  writeFileSync(join(dir, 'stdio-agent.cjs'), script);
  try {
    const agent = createCommandAgent({ command: [process.execPath, 'stdio-agent.cjs'], sandbox: { backend: 'bwrap', dir }, gateway: 'stdio', timeoutMs: 45_000 });
    const result = await episode(agent);
    assert.equal(result.error, undefined);
    assert.equal(result.answer, `${task.available_tools.length} tools; found`);
    assert.deepEqual(result.calls.map((c) => [c.tool, c.status]), [['travel_search_flights', 'ok']]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('mcpbench run: --agent-env passes only the named variable; --agent-sandbox none is a warning recorded in run.json', { timeout: 120_000 }, async () => {
  const work = mkdtempSync(join(tmpdir(), 'mcpbench-agent-env-'));
  try {
    const command = `${JSON.stringify(process.execPath)} -e "console.log('MCPBENCH_ANSWER: ' + Object.keys(process.env).filter((k) => /KEY|TOKEN/.test(k)).sort().join(','))"`;
    let stderr = '';
    const code = await withSecrets(() =>
      runCli(
        ['run', taskFile, '--agent', 'command', '--agent-command', command, '--agent-env', 'OPENAI_API_KEY', '--agent-sandbox', 'none', '--sandbox', 'process', '--reporter', 'none', '--no-report', '--out', join(work, 'runs')],
        { stdout: () => undefined, stderr: (t) => (stderr += t), cwd: work },
      ),
    );
    assert.equal(code, 0, stderr);
    assert.ok(stderr.includes(`warning: ${AGENT_SANDBOX_NONE_WARNING}\n`), stderr);
    const runDir = join(work, 'runs', readdirSync(join(work, 'runs'))[0]!);
    const config = JSON.parse(readFileSync(join(runDir, 'run.json'), 'utf8'));
    assert.deepEqual(config.warnings, [AGENT_SANDBOX_NONE_WARNING]);
    assert.deepEqual(config.agent_options.passEnv, ['OPENAI_API_KEY'], 'recorded by name');
    assert.equal(config.agent_options.dir, work, 'its folder recorded as an absolute path');
    assert.doesNotMatch(readFileSync(join(runDir, 'run.json'), 'utf8'), new RegExp(SECRETS.OPENAI_API_KEY), 'never by value');
    const [result] = readFileSync(join(runDir, 'episodes.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as EpisodeResult);
    assert.equal(result!.answer, 'OPENAI_API_KEY', 'the named key and nothing else');
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});

test('mcpbench run: an unset --agent-env variable and a malformed --agent-allow-host are usage errors (exit 2) before anything runs', async () => {
  const work = mkdtempSync(join(tmpdir(), 'mcpbench-agent-usage-'));
  try {
    const cases: [string[], RegExp][] = [
      [['--agent-env', 'MCPBENCH_SURELY_UNSET_VARIABLE'], /option passEnv: MCPBENCH_SURELY_UNSET_VARIABLE is not set in this environment \(set it with --agent-env\)/],
      [['--agent-env', 'MCPBENCH_SET_KEY'], /option passEnv: MCPBENCH_SET_KEY \(the set key\) never reaches an agent \(set it with --agent-env\)/],
      [['--agent-allow-host', 'api.example.com'], /option allowHosts: use host:port, e\.g\. api\.openai\.com:443 .*\(set it with --agent-allow-host\)/],
      [['--agent-dir', 'nowhere'], /option dir: \S+nowhere is not a folder \(set it with --agent-dir\)/],
      [['--agent-sandbox', 'none', '--agent-allow-host', 'api.example.com:443'], /allowed hosts need a confined agent.*\(set it with --agent-allow-host\)/],
    ];
    for (const [flags, message] of cases) {
      let stderr = '';
      const code = await runCli(['run', taskFile, '--agent', 'command', '--agent-command', 'true', ...flags, '--sandbox', 'bwrap', '--reporter', 'none', '--out', join(work, 'runs')], {
        stdout: () => undefined,
        stderr: (t) => (stderr += t),
        cwd: work,
      });
      assert.equal(code, 2, stderr);
      assert.match(stderr, message);
      assert.equal(existsSync(join(work, 'runs')), false, 'nothing was started');
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
