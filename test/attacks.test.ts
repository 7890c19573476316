/**
 * The attack corpus: a hostile command agent and a hostile server try what an attacker would (read the set
 * key and API keys from the environment, read files outside the sandbox, write outside it, reach a listener
 * on the host's loopback or a host Unix socket, get to a host that is not allowed through the egress proxy,
 * fork without bound, fill the disk), each confined as `mcpbench run` confines it. Every attempt must fail
 * and be visible in the episode's record (the agent's answer, the egress trace); an allowed model endpoint
 * on loopback must still work through the proxy. An unconfined control run shows the probes would notice.
 */
import { after, test, type TestContext, type TestOptions } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { connect, createServer as createNetServer, type Server as NetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../server/src/cli/main.ts';
import { loadRegistry } from '../server/src/mcp/registry.ts';
import { AGENT_SANDBOX_NONE_WARNING, commandAgentFor, SEALED_UNCONFINED_REFUSAL, createCommandAgent, type AgentSandboxOptions } from '../server/src/runner/agents/command.ts';
import { AgentOptionsError } from '../server/src/runner/agents/agent.ts';
import { runEpisode } from '../server/src/runner/episode.ts';
import { CALLS_PAST_BUDGET, Gateway, STDIO_MAX_QUEUED_BYTES } from '../server/src/runner/gateway.ts';
import { PassThrough, Writable } from 'node:stream';
import { startServer } from '../server/src/runner/launch.ts';
import { seedNamespace } from '../server/src/runner/state.ts';
import { memoryCgroup } from '../server/src/runner/memory-cgroup.ts';
import { snapshot } from '../server/src/mcp/postgres/runtime.ts';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { AGENT_LIMITS, probeBackends } from '../server/src/runner/sandbox.ts';
import type { EgressRecord, EpisodeRecord } from '../server/src/record/schema.ts';
import { EgressProxy } from '../server/src/runner/agents/egress.ts';
import { mulberry32 } from '../server/src/seeded-random.ts';
import { packageRoot } from '../server/src/paths.ts';
import { seal } from '../server/src/tasks/seal.ts';
import { canonicalHash } from '../server/src/canonical-json.ts';
import { answerOf, assertAgentConfined, assertServerConfined, episode, hostile, PROBE, SECRETS, task, taskFile, withSecrets } from './attack-corpus.ts';

/**
 * Each attack is a test; the tally printed at the end says how many were tried, got through (an assertion
 * failed: the attack did what it should not) and crashed (anything else thrown). Skipped ones are not tried.
 */
const tally = { tried: 0, through: 0, crashed: 0 };
function attack(name: string, options: TestOptions, body: (t: TestContext) => unknown): void {
  test(name, options, async (t) => {
    tally.tried++;
    try {
      await body(t);
    } catch (error) {
      if (error instanceof assert.AssertionError) tally.through++;
      else tally.crashed++;
      throw error;
    }
  });
}
after(() => console.log(`attacks tried / got through / crashed: ${tally.tried} / ${tally.through} / ${tally.crashed}`));

const bwrapWorks = probeBackends().find((b) => b.backend === 'bwrap')!.works;
const skip = bwrapWorks ? false : 'bwrap does not work on this machine (.ci/run installs it)';

attack('a confined command agent: no secrets, no host files, no writes out, no host sockets, only allowed hosts through the proxy, bounded processes and disk', { skip, timeout: 120_000 }, async () => {
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
    assertAgentConfined(result, host);
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

attack('a hostile server (what a hostile task state could make a server run) is confined like the agent', { skip, timeout: 60_000 }, async () => {
  await assertServerConfined('bwrap');
});

attack('a runaway agent that keeps calling unlisted tools is stopped a documented number of calls past max_steps', { skip, timeout: 60_000 }, async () => {
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

attack('a confined agent whose sandbox cannot be built is an infrastructure error (ours: retried, never scored), not the agent\'s', { skip, timeout: 60_000 }, async () => {
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

attack("a confined agent whose sandbox never comes up is ours (agent-sandbox), whether the episode's timeout or its own deadline stops it first", { timeout: 60_000 }, async () => {
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

attack('a confined agent can take the gateway over its stdio: no network needed at all', { skip, timeout: 60_000 }, async () => {
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

attack('mcpbench run: --agent-env passes only the named variable; --agent-sandbox none is a warning recorded in run.json', { timeout: 120_000 }, async () => {
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
    const [result] = readFileSync(join(runDir, 'episodes.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as EpisodeRecord);
    assert.equal(result!.answer, 'OPENAI_API_KEY', 'the named key and nothing else');
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});

attack('mcpbench run: an unset --agent-env variable and a malformed --agent-allow-host are usage errors (exit 2) before anything runs', {}, async () => {
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

/** Runs `mcpbench run` in `cwd` (the agent's folder by default) and returns its exit code, stderr and the episodes it recorded. */
async function runIn(cwd: string, args: string[]): Promise<{ code: number; stderr: string; episodes: EpisodeRecord[] }> {
  let stderr = '';
  const code = await runCli(['run', ...args, '--reporter', 'none', '--no-report'], { stdout: () => undefined, stderr: (t) => (stderr += t), cwd });
  const runs = join(cwd, 'runs');
  const episodes = existsSync(runs)
    ? readdirSync(runs)
        .filter((d) => existsSync(join(runs, d, 'run.json')) && existsSync(join(runs, d, 'episodes.jsonl')))
        .flatMap((d) => readFileSync(join(runs, d, 'episodes.jsonl'), 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as EpisodeRecord))
    : [];
  return { code, stderr, episodes };
}

attack("hole 1: a confined agent sees its own folder's files but nothing of the run's: runs/, task folders (named through a symlink too), .git, sealed sets, the set key file", { skip, timeout: 90_000 }, async () => {
  const base = mkdtempSync(join(tmpdir(), 'mcpbench-agent-folder-'));
  const work = join(base, 'work');
  mkdirSync(join(work, 'tasks', 'travel'), { recursive: true });
  try {
    writeFileSync(join(work, 'tasks', 'travel', `${task.id}.json`), readFileSync(taskFile));
    mkdirSync(join(work, 'runs', 'earlier-run'), { recursive: true });
    writeFileSync(join(work, 'runs', 'earlier-run', 'episodes.jsonl'), '{"verdict":"evidence"}\n');
    writeFileSync(join(work, 'private.sealed.json'), '{"format":"mcpbench-sealed-set"}');
    writeFileSync(join(work, 'set.key'), `${SECRETS.MCPBENCH_SET_KEY}\n`);
    writeFileSync(join(work, 'notes.txt'), 'the agent may read its own notes');
    const git = (...args: string[]) => spawnSync('git', args, { cwd: work, encoding: 'utf8' });
    git('init', '-q');
    git('-c', 'user.email=a@b', '-c', 'user.name=a', 'commit', '-qm', 'tasks', '--allow-empty');
    git('add', 'tasks');
    git('-c', 'user.email=a@b', '-c', 'user.name=a', 'commit', '-qm', 'tasks');
    // The task folder named through a symlink: its path does not start with the agent folder's.
    symlinkSync(work, join(base, 'alias'));
    const probe = String.raw`
const fs = require('node:fs'), cp = require('node:child_process');
const out = {};
const read = (name, path) => { try { out[name] = fs.readFileSync(path, 'utf8').length ? 'read' : 'empty'; } catch (e) { out[name] = e.code; } };
const list = (name, path) => { try { out[name] = fs.readdirSync(path).length ? 'listed' : 'empty'; } catch (e) { out[name] = e.code; } };
read('task', 'tasks/travel/${task.id}.json');
list('tasks', 'tasks');
list('runs', 'runs');
read('earlier', 'runs/earlier-run/episodes.jsonl');
read('git_head', '.git/HEAD');
out.git_show = cp.spawnSync('git', ['show', 'HEAD:tasks/travel/${task.id}.json'], { encoding: 'utf8' }).status === 0 ? 'read' : 'refused';
read('sealed', 'private.sealed.json');
read('key', 'set.key');
read('notes', 'notes.txt');
console.log('MCPBENCH_ANSWER: ' + JSON.stringify(out));
`;
    writeFileSync(join(work, 'probe.cjs'), probe);
    const command = `${JSON.stringify(process.execPath)} probe.cjs`;
    const { code, stderr, episodes } = await withSecrets(() =>
      runIn(work, [join(base, 'alias', 'tasks'), '--agent', 'command', '--agent-command', command, '--sandbox', 'bwrap']),
    );
    assert.equal(code, 0, stderr);
    assert.equal(episodes[0]?.error, undefined, JSON.stringify(episodes[0]?.error));
    const seen = answerOf(episodes[0]!);
    assert.deepEqual(seen, {
      task: 'ENOENT',
      tasks: 'empty',
      runs: 'empty',
      earlier: 'ENOENT',
      git_head: 'ENOENT',
      git_show: 'refused',
      sealed: 'EACCES',
      key: 'EACCES',
      notes: 'read',
    });
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

attack('hole 1: an agent folder inside the run folder cannot be hidden from: a clear refusal of its options before anything runs', { skip }, () => {
  const work = mkdtempSync(join(tmpdir(), 'mcpbench-agent-in-run-'));
  try {
    const runDirectory = join(work, 'the-run');
    mkdirSync(join(runDirectory, 'agent'), { recursive: true });
    assert.throws(
      () => commandAgentFor({ command: 'true', dir: join(runDirectory, 'agent') }, { env: {}, backend: 'bwrap', runDirectory, warn: () => undefined }),
      (error: unknown) =>
        error instanceof AgentOptionsError &&
        error.option === 'dir' &&
        /^the command agent option dir: \S+agent lies in the run folder \S+the-run, which a confined agent must never read and which cannot be hidden from its own folder; give the agent a folder outside it$/.test(error.message),
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});

/** A raw TCP listener on 127.0.0.1:`port` that counts connections, keeps what it received, and answers an HTTP request with `ok`. */
async function rawListener(port: number): Promise<{ server: NetServer; connections: number; received: string } | undefined> {
  const state = { server: undefined as unknown as NetServer, connections: 0, received: '' };
  state.server = createNetServer((socket) => {
    state.connections++;
    socket.on('error', () => undefined);
    socket.on('data', (chunk) => {
      state.received += chunk.toString('latin1');
      if (/^[A-Z]+ \S+ HTTP\/1\.[01]\r\n/.test(state.received.slice(state.received.lastIndexOf('\r\n\r\n', state.received.length - 5) + 1).trimStart()) || /^GET /.test(chunk.toString('latin1')))
        socket.end('HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok');
    });
  });
  return new Promise((resolve) => {
    state.server.once('error', () => resolve(undefined));
    state.server.listen(port, '127.0.0.1', () => resolve(state));
  });
}

/** Sends `raw` to the proxy's socket and returns its first response line ('' when it closed without one). */
function rawProxyRequest(socketPath: string, raw: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(socketPath);
    let got = '';
    const done = () => {
      socket.destroy();
      resolve(got.split('\r\n')[0] ?? '');
    };
    socket.setTimeout(3000, done);
    socket.on('data', (chunk) => {
      got += chunk.toString('latin1');
      if (got.includes('\r\n')) done();
    });
    socket.on('error', done);
    socket.on('close', done);
    socket.write(raw);
  });
}

/** A decoy port P and an allowed port P*10+9 (so `P.9e1` reads as the allowed port to Number and as P to parseInt), both listening. */
async function decoyAndAllowed() {
  for (let seed = process.pid; ; seed++) {
    const decoyPort = 2000 + (seed % 4500);
    const decoy = await rawListener(decoyPort);
    if (!decoy) continue;
    const allowed = await rawListener(decoyPort * 10 + 9);
    if (allowed) return { decoyPort, allowedPort: decoyPort * 10 + 9, decoy, allowed };
    decoy.server.close();
  }
}

attack('hole 2: the egress proxy parses a target once (host:4777.9e1 is refused, not forwarded to 4777), and a CONNECT with bytes after its header neither crashes the runner nor loses them', { timeout: 30_000 }, async () => {
  const work = mkdtempSync(join(tmpdir(), 'mcpbench-egress-'));
  const ports = await decoyAndAllowed();
  const records: EgressRecord[] = [];
  const proxy = await EgressProxy.listen(join(work, 'proxy.sock'), [`127.0.0.1:${ports.allowedPort}`], (r) => records.push(r));
  try {
    const tricked = await rawProxyRequest(join(work, 'proxy.sock'), `CONNECT 127.0.0.1:${ports.decoyPort}.9e1 HTTP/1.1\r\nhost: x\r\n\r\n`);
    assert.match(tricked, /^HTTP\/1\.1 400/);
    assert.equal(ports.decoy.connections, 0, 'nothing reached the port the library would have read');
    assert.deepEqual(records.map((r) => [r.method, r.allowed, r.port]), [['CONNECT', false, 0]], 'traced as refused, never as the allowed port');
    // A client that sends its first bytes (a TLS hello) with the CONNECT header.
    const tunnel = await rawProxyRequest(join(work, 'proxy.sock'), `CONNECT 127.0.0.1:${ports.allowedPort} HTTP/1.1\r\nhost: x\r\n\r\nHELLO-RIGHT-AFTER`);
    assert.match(tunnel, /^HTTP\/1\.1 200/);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(ports.allowed.connections, 1);
    assert.equal(ports.allowed.received, 'HELLO-RIGHT-AFTER', 'the early bytes went through the tunnel');
    // The proxy still serves.
    assert.match(await rawProxyRequest(join(work, 'proxy.sock'), `GET http://127.0.0.1:${ports.allowedPort}/x HTTP/1.1\r\nhost: a\r\n\r\n`), /^HTTP\/1\.1 200/);
  } finally {
    await proxy.close();
    ports.decoy.server.close();
    ports.allowed.server.close();
    rmSync(work, { recursive: true, force: true });
  }
});

attack('hole 2: fuzzed CONNECT and absolute-URI targets (seeded): the proxy answers each, forwards exactly the allowed host:port, traces every attempt, never crashes', { timeout: 60_000 }, async () => {
  const work = mkdtempSync(join(tmpdir(), 'mcpbench-egress-fuzz-'));
  const ports = await decoyAndAllowed();
  const records: EgressRecord[] = [];
  const proxy = await EgressProxy.listen(join(work, 'proxy.sock'), [`127.0.0.1:${ports.allowedPort}`], (r) => records.push(r));
  const random = mulberry32(27);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const a = ports.allowedPort;
  const p = ports.decoyPort;
  const hosts = ['127.0.0.1', '127.0.0.1', 'localhost', '[::1]', '127.1', '2130706433', '127.0.0.1.', 'a@127.0.0.1', '127.0.0.1 ', '', '[127.0.0.1]', '%31%32%37.0.0.1'];
  const portForms = [String(a), String(a), `0${a}`, `${p}.9e1`, `${a}.0`, `${a}e0`, `+${a}`, ` ${a}`, `0x${a.toString(16)}`, `${a}abc`, '', `${a}:${a}`, '65536', '-1', String(p), `${p}#`, `${a}/`, '99999999999999999999'];
  const paths = ['', '/', '/x?y=1', '?q', '#frag', '/../../etc/passwd', '//double'];
  const extras = ['', '', 'EARLY-BYTES', '\x16\x03\x01\x00\x05hello'];
  try {
    for (let i = 0; i < 200; i++) {
      const connectForm = random() < 0.5;
      const host = pick(hosts);
      const port = pick(portForms);
      const withPort = random() < 0.85;
      const scheme = pick(['http://', 'http://', 'HTTP://', 'https://', 'ftp://', '']);
      const target = connectForm ? `${host}${withPort ? `:${port}` : ''}` : `${scheme}${host}${withPort ? `:${port}` : ''}${pick(paths)}`;
      const extra = connectForm ? pick(extras) : '';
      // The oracle, independent of the proxy's parser: exactly 127.0.0.1 and the allowed port as digits.
      const m = connectForm ? /^127\.0\.0\.1:(\d{1,5})$/.exec(target) : /^http:\/\/127\.0\.0\.1:(\d{1,5})(?:[/?][^#]*)?$/i.exec(target);
      const expected = m !== null && Number(m[1]) === a;
      const before = { allowed: ports.allowed.connections, records: records.length };
      const line = await rawProxyRequest(join(work, 'proxy.sock'), `${connectForm ? 'CONNECT' : 'GET'} ${target} HTTP/1.1\r\nhost: a\r\n\r\n${extra}`);
      await new Promise((r) => setImmediate(r));
      const what = `${connectForm ? 'CONNECT' : 'GET'} ${JSON.stringify(target)} → ${line}`;
      if (/ /.test(target) || target === '') {
        // Not one request line at all: Node's parser refuses it before the proxy sees it.
        assert.match(line, /^(HTTP\/1\.1 40\d|)/, what);
        continue;
      }
      assert.match(line, expected ? /^HTTP\/1\.1 200/ : /^HTTP\/1\.1 40[03]/, what);
      assert.equal(records.length, before.records + 1, `one trace record: ${what}`);
      assert.equal(records.at(-1)!.allowed, expected, what);
      if (!expected) assert.equal(ports.allowed.connections, before.allowed, `nothing forwarded: ${what}`);
      assert.equal(ports.decoy.connections, 0, what);
    }
  } finally {
    await proxy.close();
    ports.decoy.server.close();
    ports.allowed.server.close();
    rmSync(work, { recursive: true, force: true });
  }
});

attack("hole 3: an agent that fails with a burst of stderr is the agent's failure, not ours: the sandbox's readiness never travels in its stderr", { skip, timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcpbench-stderr-burst-'));
  const marker = `burst-${process.pid}-${Date.now()}`;
  try {
    const agent = createCommandAgent({ command: [process.execPath, '-e', `process.stderr.write('x'.repeat(30000)); process.exitCode = 1; // ${marker}`], sandbox: { backend: 'bwrap', dir }, timeoutMs: 30_000 });
    // The runner is slow to read (a busy moment): from the moment the sandbox process exists, the event loop is
    // blocked while the sandbox comes up and the agent writes its burst, so whatever the pipe holds is read at once.
    let blocked = false;
    const watch = setInterval(() => {
      if (blocked) return;
      for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
        let cmdline = '';
        try {
          cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        } catch {
          continue;
        }
        if (cmdline.startsWith('bwrap\0') && cmdline.includes(marker)) {
          blocked = true;
          const until = Date.now() + 2500;
          while (Date.now() < until) {
            // busy
          }
          return;
        }
      }
    }, 2);
    let result: EpisodeRecord;
    try {
      result = await episode(agent);
    } finally {
      clearInterval(watch);
    }
    assert.ok(blocked, 'the sandbox was seen starting');
    assert.deepEqual([result.status, result.error?.kind, result.error?.code, result.error?.exit_code], ['agent_error', 'agent', 'agent-exit', 1], result.error?.message);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A sealed set (key SECRETS.MCPBENCH_SET_KEY) of the travel task, in `work`. */
function sealedSet(work: string): string {
  const setDir = join(work, 'private-set');
  mkdirSync(join(setDir, 'tasks', 'travel'), { recursive: true });
  writeFileSync(join(setDir, 'tasks', 'travel', `${task.id}.json`), readFileSync(taskFile));
  const out = join(work, 'sets', 'private.sealed.json');
  seal(setDir, SECRETS.MCPBENCH_SET_KEY, { out });
  rmSync(setDir, { recursive: true, force: true });
  return out;
}

attack('hole 4: a sealed set never reaches an unconfined command agent by default: with no sandbox backend (the process backend) it is a clear refusal before anything runs', { timeout: 30_000 }, async () => {
  const work = mkdtempSync(join(tmpdir(), 'mcpbench-sealed-unconfined-'));
  try {
    const sealed = sealedSet(work);
    const { code, stderr } = await withSecrets(() => runIn(work, [sealed, '--agent', 'command', '--agent-command', 'true', '--sandbox', 'process']));
    assert.equal(code, 2, stderr);
    assert.ok(stderr.endsWith(`\nmcpbench: ${SEALED_UNCONFINED_REFUSAL} (set it with --agent-sandbox)\n`), stderr);
    assert.equal(existsSync(join(work, 'runs')), false, 'nothing was started');
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});

attack("hole 4: with --agent-sandbox none on a sealed set, the set key is gone from the runner's environment, /proc/<pid>/environ included, before the agent starts", { timeout: 60_000 }, async () => {
  const work = mkdtempSync(join(tmpdir(), 'mcpbench-sealed-none-'));
  try {
    const sealed = sealedSet(work);
    // The built CLI (dist/cli.js), so that the runner is a process of its own with the key in its initial environment.
    // The agent looks where an attacker looked: its parent's (the runner's) environment block.
    const probe = `const e = require('node:fs').readFileSync('/proc/' + process.ppid + '/environ', 'latin1'); console.log('MCPBENCH_ANSWER: ' + (e.includes(${JSON.stringify(SECRETS.MCPBENCH_SET_KEY)}) ? 'key visible' : e.includes('MCPBENCH_SET_KEY=') ? 'key blanked' : 'no key'));`;
    writeFileSync(join(work, 'probe.cjs'), probe);
    const cli = spawnSync(
      process.execPath,
      [join(packageRoot(), 'dist', 'cli.js'), 'run', sealed, '--agent', 'command', '--agent-command', `exec ${JSON.stringify(process.execPath)} probe.cjs`, '--agent-sandbox', 'none', '--sandbox', 'process', '--reporter', 'none', '--no-report'],
      { cwd: work, env: { ...process.env, MCPBENCH_SET_KEY: SECRETS.MCPBENCH_SET_KEY }, encoding: 'utf8', timeout: 50_000 },
    );
    assert.equal(cli.status, 0, cli.stderr);
    assert.match(cli.stderr, /the set key was removed from this runner's environment before the unconfined agent started/);
    const runDir = join(work, 'runs', readdirSync(join(work, 'runs'))[0]!);
    const [result] = readFileSync(join(runDir, 'episodes.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as EpisodeRecord);
    assert.equal(result!.answer, 'key blanked');
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});

attack("hole 5: an agent on the gateway's stdio that sends requests and never reads its replies holds bounded memory of the runner's (backpressure)", { timeout: 30_000 }, async () => {
  const registry = await loadRegistry();
  const info = registry.get('travel')!;
  const sandbox = mkdtempSync(join(tmpdir(), 'mcpbench-stdio-flood-'));
  await seedNamespace(info, {}, sandbox);
  const server = await startServer(info, sandbox, { backend: 'process', startTimeoutMs: 20_000 });
  const gateway = new Gateway({ task, registry, servers: new Map([['travel', server]]) });
  const requests = new PassThrough();
  // The agent's stdin, which it never reads: nothing written to it ever drains.
  const unread = new Writable({ highWaterMark: 16 * 1024, write: () => undefined });
  try {
    await gateway.serveStdio({ stdin: requests, stdout: unread });
    requests.write(`${JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'flood', version: '1' } } })}\n`);
    const list = (id: number) => `${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list', params: {} })}\n`;
    for (let id = 1; id <= 30_000; id++) requests.write(list(id));
    await new Promise((r) => setTimeout(r, 1500));
    const oneReply = JSON.stringify({ result: { tools: [] } }).length;
    assert.ok(unread.writableLength > oneReply, 'replies were written');
    assert.ok(unread.writableLength < STDIO_MAX_QUEUED_BYTES + 2 * 1024 * 1024, `queued replies are bounded: ${unread.writableLength} bytes`);
    assert.ok(requests.readableLength > 0, 'the rest of the requests were left unread');
  } finally {
    requests.destroy();
    await gateway.close();
    await server.close();
    rmSync(sandbox, { recursive: true, force: true });
  }
});

attack('hole 5: /dev is read-only in a bubblewrap sandbox but for a sized /dev/shm: an agent cannot hold memory there past its size', { skip, timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcpbench-dev-shm-'));
  const cap = AGENT_LIMITS.shmBytes + 32 * 1024 * 1024;
  const script = String.raw`
const fs = require('node:fs');
const out = {};
try { fs.writeFileSync('/dev/filler', 'x'); out.dev = 'written'; } catch (e) { out.dev = e.code; }
let written = 0;
const chunk = Buffer.alloc(1 << 20, 120);
try { const fd = fs.openSync('/dev/shm/fill', 'w'); while (written < ${cap}) { fs.writeSync(fd, chunk); written += chunk.length; } } catch (e) { out.shm_error = e.code; }
out.shm_mib = Math.round(written / (1 << 20));
console.log('MCPBENCH_ANSWER: ' + JSON.stringify(out));
`;
  writeFileSync(join(dir, 'shm.cjs'), script);
  try {
    const result = await episode(createCommandAgent({ command: [process.execPath, 'shm.cjs'], sandbox: { backend: 'bwrap', dir }, timeoutMs: 45_000 }));
    const seen = answerOf(result);
    assert.equal(seen.dev, 'EROFS');
    assert.equal(seen.shm_error, 'ENOSPC');
    assert.ok(Number(seen.shm_mib) <= AGENT_LIMITS.shmBytes / (1 << 20), `${String(seen.shm_mib)} MiB written to /dev/shm`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

attack("hole 6: a postgres agent cannot forge the judge's view: row security and SET SESSION AUTHORIZATION in its session (or ALTER ROLE ... SET role) do not apply to the end state", { timeout: 60_000 }, async () => {
  const box = mkdtempSync(join(tmpdir(), 'mcpbench-pg-forge-'));
  const rows = Array.from({ length: 20 }, (_, i) => ({ id: i + 1, done: i % 2 === 0 }));
  const state = { tables: { items: { columns: [{ name: 'id', type: 'integer', primary_key: true }, { name: 'done', type: 'boolean' }], rows } } };
  writeFileSync(join(box, 'initial.json'), JSON.stringify(state));
  const transport = new StdioClientTransport({ command: process.execPath, args: [join(packageRoot(), 'dist', 'cli.js'), 'serve', 'postgres', '--state', join(box, 'initial.json'), '--dir', join(box, 'sandbox')], stderr: 'pipe' });
  const client = new Client({ name: 'forger', version: '0' });
  try {
    await client.connect(transport);
    const forge = await client.callTool({
      name: 'execute',
      arguments: {
        sql: [
          'CREATE ROLE fooled NOLOGIN',
          'GRANT SELECT ON items TO fooled',
          'GRANT USAGE ON SCHEMA public TO fooled',
          'ALTER TABLE items ENABLE ROW LEVEL SECURITY',
          'ALTER TABLE items FORCE ROW LEVEL SECURITY',
          'CREATE POLICY only_false ON items FOR SELECT USING (done = false)',
          'ALTER ROLE postgres SET role = fooled',
        ].join('; '),
      },
    });
    assert.notEqual(forge.isError, true, JSON.stringify(forge.content));
    // The session's own setting (the server's checkpoint after it is refused to the new role: the setting stays).
    await client.callTool({ name: 'execute', arguments: { sql: 'SET SESSION AUTHORIZATION fooled' } });
    const seen = await client.callTool({ name: 'query', arguments: { sql: 'SELECT count(*)::int AS n FROM items' } });
    assert.deepEqual(seen.structuredContent, { rows: [{ n: 10 }], row_count: 1 }, "the agent's own session sees only what the policy lets through");
    await client.close();
    const end = await snapshot(join(box, 'sandbox'));
    assert.equal(end.tables.items!.rows.length, 20, 'the judge sees every row');
    assert.equal(end.tables.items!.rows.filter((r) => r.done === true).length, 10);
  } finally {
    await client.close().catch(() => undefined);
    rmSync(box, { recursive: true, force: true });
  }
});

const cgroupProbe = memoryCgroup(1 << 30);
cgroupProbe?.remove();

attack("hole 5: a bubblewrap sandbox's memory is bounded as a whole (a cgroup), not only per process: three processes cannot hold three times the bound", { skip: skip || (cgroupProbe ? false : 'no cgroup can be made here (the documented per-process bound applies)'), timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcpbench-memory-'));
  const hog = `const b = []; for (let i = 0; i < 30; i++) b.push(Buffer.alloc(10 << 20, 1)); setTimeout(() => process.exit(0), 1500);`;
  const script = String.raw`
const cp = require('node:child_process');
const runs = [0, 1, 2].map(() => new Promise((res) => { const c = cp.spawn(process.execPath, ['-e', ${JSON.stringify(hog)}], { stdio: 'ignore' }); c.on('exit', (code, signal) => res(signal || String(code))); }));
Promise.all(runs).then((ends) => console.log('MCPBENCH_ANSWER: ' + JSON.stringify({ ends })));
`;
  writeFileSync(join(dir, 'hog.cjs'), script);
  try {
    // Each process holds 300 MiB; the sandbox may hold 512 MiB in all.
    const result = await episode(createCommandAgent({ command: [process.execPath, 'hog.cjs'], sandbox: { backend: 'bwrap', dir, memoryBytes: 512 * 1024 * 1024 }, timeoutMs: 45_000 }));
    const { ends } = answerOf(result) as { ends: string[] };
    assert.ok(ends.includes('SIGKILL'), `a process past the bound was killed: ${ends.join(', ')}`);
    assert.ok(ends.filter((e) => e === '0').length < 3, 'not all three held their memory');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
