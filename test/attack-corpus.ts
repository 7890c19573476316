/**
 * The attack corpus's parts (test/attacks.test.ts for bubblewrap; test/runner/container.test.ts and
 * image-agent.test.ts for the container backends): the planted secrets, the probe every hostile process
 * runs, the host it attacks, one episode, and what a confined agent or server must have found.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createNetServer, type Server as NetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadRegistry } from '../server/src/mcp/registry.ts';
import { packageRoot } from '../server/src/paths.ts';
import type { Agent } from '../server/src/runner/agents/agent.ts';
import { runEpisode } from '../server/src/runner/episode.ts';
import { AGENT_LIMITS, prepareWritable, sandboxed, SERVER_LIMITS, serverConfinement, serverEnvironment, type SandboxBackend } from '../server/src/runner/sandbox.ts';
import type { EpisodeRecord } from '../server/src/record/schema.ts';
import { canonicalHash } from '../server/src/canonical-json.ts';
import type { Task } from '../server/src/tasks/model.ts';

export const SECRETS = { MCPBENCH_SET_KEY: 'set-key-0123456789abcdef', OPENAI_API_KEY: 'sk-attack-corpus', GITHUB_TOKEN: 'ghp_attack_corpus' };

export const taskFile = join(packageRoot(), 'test', 'fixtures', 'tasks', 'travel', 'travel-cheapest-flight-001.json');
export const task = JSON.parse(readFileSync(taskFile, 'utf8')) as Task;

/**
 * The probe every hostile process runs (plain Node, no dependencies): each attempt's outcome by name, as one
 * JSON line prefixed `MCPBENCH_ANSWER:` (the command agent's answer line). argv[2] is a JSON of targets.
 */
export const PROBE = String.raw`
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

export interface Host {
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
export async function hostile(): Promise<Host> {
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

/** One episode of the corpus's task with `agent`, its servers in `backend`'s sandboxes. */
export async function episode(agent: Agent, backend: SandboxBackend = 'bwrap'): Promise<EpisodeRecord> {
  return runEpisode(
    {
      task,
      taskHash: canonicalHash(task),
      key: { task_id: task.id, trial: 0, variant: 'command', fault_profile: 'none', perturbation: 'none' },
      agent,
      profile: { name: 'none', failure_rate: 0, fault_weights: {} },
      goal: task.goal,
    },
    { runId: 'attacks', registry: await loadRegistry(), seed: 1, backend },
  );
}

/** Runs `body` with the runner's environment holding the secrets an attacker wants. */
export async function withSecrets<T>(body: () => Promise<T>): Promise<T> {
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

export function answerOf(result: EpisodeRecord): Record<string, unknown> {
  assert.equal(result.error, undefined, `the probe ran to its end: ${result.error?.message}`);
  assert.ok(result.answer, 'the probe answered');
  return JSON.parse(result.answer!) as Record<string, unknown>;
}

/**
 * What a confined agent's probe (run with `proxy`, `model` and `heavy` targets) must have found: no secret,
 * no host file, no write out or in its folder, no host socket, only the allowed endpoint through the proxy
 * (every attempt in the trace), bounded processes and disk. `denied`: what reading a host file may give
 * (bubblewrap: ENOENT; in a container, the image's own /etc/shadow exists and says EACCES); `hidden`: what
 * reading a hidden task file in its folder gives, when the probe tried.
 */
export function assertAgentConfined(result: EpisodeRecord, host: Host, { denied = ['ENOENT'], hidden = ['EACCES'] }: { denied?: string[]; hidden?: string[] } = {}): void {
  const seen = answerOf(result);
  assert.equal(seen.env, 'none', 'no key or token in its environment');
  for (const name of ['secret', 'sealed', 'checkout', 'shadow', 'root_home']) assert.ok(denied.includes(String(seen[`read_${name}`])), `${name} is not there: ${seen[`read_${name}`]}`);
  if ('read_task_in_agent_dir' in seen) assert.ok(hidden.includes(String(seen.read_task_in_agent_dir)), `the run's task file in its folder is hidden: ${seen.read_task_in_agent_dir}`);
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
}

/**
 * A hostile server (what a hostile task state could make a server run) in `backend`'s sandbox, with the
 * environment launch.ts gives every server built from a runner environment full of secrets: it finds nothing
 * of the host, writes only its own folder, is bounded. `engineSecrets`: the secrets are in the spawned
 * process's own environment too (a container engine's client, which passes on only the variables named).
 */
export async function assertServerConfined(backend: SandboxBackend, { denied = ['ENOENT'], engineSecrets = false }: { denied?: string[]; engineSecrets?: boolean } = {}): Promise<void> {
  const host = await hostile();
  const sandbox = join(host.work, 'sandbox');
  mkdirSync(sandbox);
  try {
    const confinement = serverConfinement(sandbox);
    prepareWritable(confinement, backend);
    const env = serverEnvironment(sandbox, {}, { ...process.env, ...SECRETS });
    assert.deepEqual(Object.keys(SECRETS).filter((k) => k in env), []);
    writeFileSync(join(sandbox, 'probe.cjs'), PROBE);
    const spec = sandboxed(backend, { command: process.execPath, args: ['probe.cjs', JSON.stringify(host.targets({ read: {}, heavy: true }))], env }, confinement);
    const run = spawnSync(spec.command, spec.args, { cwd: sandbox, env: { ...spec.env, ...(engineSecrets ? SECRETS : {}) }, encoding: 'utf8', timeout: 80_000 });
    assert.equal(run.status, 0, run.stderr);
    const seen = JSON.parse(run.stdout.trim().split('\n').pop()!.replace(/^MCPBENCH_ANSWER: /, '')) as Record<string, unknown>;
    assert.equal(seen.env, 'none');
    for (const name of ['secret', 'sealed', 'checkout', 'shadow', 'root_home']) assert.ok(denied.includes(String(seen[`read_${name}`])), `${name} is not there: ${seen[`read_${name}`]}`);
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
}
