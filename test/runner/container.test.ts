/**
 * The container backends on a real engine (podman here; docker too when one answers): detection from what
 * each engine really answers, servers and a command agent confined as bubblewrap confines them (the attack
 * corpus of test/attacks.test.ts, run in containers), no container left behind whatever stops a sandbox,
 * and the Docker client's command line checked against a Docker API (podman's, served on a socket).
 * Skipped, with the reason, only where no container engine works (scripts/container-engine.sh makes one).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { createCommandAgent, type AgentSandboxOptions } from '../../server/src/runner/agents/command.ts';
import { probeConfinement } from '../../server/src/runner/confinement.ts';
import { describeEngineInfo, labelledContainers, removeContainers, removeOrphans, runnerPidOf, SANDBOX_LABEL, type ContainerEngine } from '../../server/src/runner/container.ts';
import { startServer } from '../../server/src/runner/launch.ts';
import { prepareWritable, probeBackend, sandboxed, SERVER_LIMITS, serverConfinement, serverEnvironment } from '../../server/src/runner/sandbox.ts';
import { seedNamespace } from '../../server/src/runner/state.ts';
import { assertAgentConfined, assertServerConfined, episode, hostile, PROBE, task, withSecrets } from '../attack-corpus.ts';

/** The engine these tests use: podman, else docker, whichever is installed and answers (its image is then required). */
const engine: ContainerEngine | undefined = (['podman', 'docker'] as const).find((e) => spawnSync(e, ['info'], { stdio: 'ignore', timeout: 30_000 }).status === 0);
const skip = engine ? false : 'no container engine is installed here (scripts/container-engine.sh installs podman and builds the sandbox image)';

/** Our sandbox containers on this machine, running or not. */
const ours = () => (engine ? labelledContainers(engine, `${SANDBOX_LABEL}=${process.pid}`) : []);

async function until(what: string, check: () => boolean, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test('detection reads what each engine answers: podman (version.Version), Docker (ServerVersion), neither is no engine', () => {
  const podman = JSON.stringify({ host: { ociRuntime: { name: 'runc' }, security: { rootless: false }, cgroupVersion: 'v1' }, version: { Version: '4.3.1' } });
  assert.equal(describeEngineInfo('podman', podman), 'podman 4.3.1, runc, rootful, cgroups v1');
  assert.equal(describeEngineInfo('docker', podman), 'podman 4.3.1 (answering as docker), runc, rootful, cgroups v1');
  assert.equal(describeEngineInfo('docker', JSON.stringify({ ServerVersion: '28.2.2', DefaultRuntime: 'runc', CgroupVersion: '2' })), 'engine 28.2.2, runc, cgroups v2');
  // The Docker client without a daemon prints its own empty shape: not an engine.
  assert.equal(describeEngineInfo('docker', JSON.stringify({ ServerVersion: '', Driver: '' })), undefined);
  assert.equal(describeEngineInfo('podman', 'Error: template: info:1:2'), undefined);
});

test('detection on this machine: the engine answers and runs the sandbox image with Node', { skip }, () => {
  const status = probeBackend(engine!);
  assert.equal(status.works, true);
  assert.match(status.detail, /^(podman|engine) \d+\.\d+\.\d+.*; image \S+ with Node v\d+\./);
});

test('a server in a container: loopback only, none of the host, nobody without capabilities, the documented limits', { skip, timeout: 60_000 }, async () => {
  const report = await probeConfinement(engine!);
  assert.ok(!('error' in report), JSON.stringify(report));
  assert.match(report.network, /^loopback only/);
  assert.match(report.filesystem, /no checkout beyond what runs; no host \S+; writes outside its folder never reach the host/);
  assert.match(report.user, /^uid \d+ inside, .*capabilities none$/);
  assert.equal(report.limits, `processes ${SERVER_LIMITS.processes} (cgroup), file size 1 GiB, data 4 GiB, memory 4 GiB (cgroup)`);
});

test('a hostile server in a container is confined like the agent: no secrets, no host files, no host sockets, bounded processes and disk', { skip, timeout: 90_000 }, async () => {
  await assertServerConfined(engine!, { denied: ['ENOENT', 'EACCES'], engineSecrets: true });
  assert.deepEqual(ours(), [], 'the container is gone');
});

test('a command agent in a container: no secrets, no host files, no writes out, no host sockets, only allowed hosts through the proxy, bounded processes and disk; servers in containers too', { skip, timeout: 180_000 }, async () => {
  const host = await hostile();
  const agentDir = join(host.work, 'agent');
  mkdirSync(agentDir, { mode: 0o755 });
  writeFileSync(join(agentDir, 'probe.cjs'), PROBE);
  writeFileSync(join(agentDir, 'task.json'), JSON.stringify(task));
  const sandbox: AgentSandboxOptions = { backend: engine!, dir: agentDir, allowHosts: [host.modelHost], hidden: [join(agentDir, 'task.json')] };
  try {
    const targets = host.targets({ read: { task_in_agent_dir: join(agentDir, 'task.json') }, proxy: true, model: host.modelUrl, heavy: true });
    // `node` is the image's: the agent's program comes from the image, its files from its folder.
    const agent = createCommandAgent({ command: ['node', 'probe.cjs', JSON.stringify(targets)], sandbox, timeoutMs: 120_000 });
    const result = await withSecrets(() => episode(agent, engine));
    // In a container the image's own /etc/shadow is there (unreadable); a hidden file reads as empty or not at all.
    assertAgentConfined(result, host, { denied: ['ENOENT', 'EACCES'], hidden: ['EACCES', 'empty'] });
  } finally {
    await host.close();
  }
  await until('no container left', () => ours().length === 0);
});

test('a command agent in a container that will not stop is removed with its container when its deadline passes', { skip, timeout: 90_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcpbench-stubborn-'));
  try {
    // It ignores SIGTERM, and so does its child.
    const script = "const c = require('node:child_process').spawn('node', ['-e', \"process.on('SIGTERM', () => {}); setInterval(() => {}, 1000)\"], { stdio: 'inherit' }); process.on('SIGTERM', () => {}); console.error('started'); setInterval(() => {}, 1000);";
    writeFileSync(join(dir, 'stubborn.cjs'), script);
    const agent = createCommandAgent({ command: ['node', 'stubborn.cjs'], sandbox: { backend: engine!, dir }, timeoutMs: 8000, killGraceMs: 200 });
    const result = await episode(agent, 'bwrap');
    assert.equal(result.status, 'agent_error');
    assert.equal(result.error?.code, 'agent-timeout');
    await until('the agent container is gone', () => ours().length === 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A sandboxed server that only waits, its container name, and whether that container is there. */
function idleServer(sandbox: string) {
  const confinement = serverConfinement(sandbox);
  prepareWritable(confinement, engine!);
  const spec = sandboxed(engine!, { command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'], env: serverEnvironment(sandbox) }, confinement);
  const name = spec.container!.name;
  return { spec, running: () => labelledContainers(engine!, SANDBOX_LABEL).includes(name) };
}

test('a server in a container whose runner is gone is removed with it', { skip, timeout: 90_000 }, async () => {
  const sandbox = mkdtempSync(join(tmpdir(), 'mcpbench-orphan-'));
  let runner: ChildProcess | undefined;
  try {
    const { spec, running } = idleServer(sandbox);
    // A runner (a plain Node process) that starts the supervised container and is then killed outright.
    runner = spawn(process.execPath, ['-e', `require('node:child_process').spawn(${JSON.stringify(spec.command)}, ${JSON.stringify(spec.args)}, { env: ${JSON.stringify(spec.env)}, stdio: 'ignore' }); setInterval(() => {}, 1000)`], { stdio: 'ignore' });
    await until('the container runs', running);
    runner.kill('SIGKILL');
    await until('the container is gone', () => !running());
  } finally {
    runner?.kill('SIGKILL');
    rmSync(sandbox, { recursive: true, force: true });
  }
});

test('a container whose engine client is killed outright (SIGKILL, which no engine can pass on) is removed', { skip, timeout: 90_000 }, async () => {
  const sandbox = mkdtempSync(join(tmpdir(), 'mcpbench-client-killed-'));
  let supervisor: ChildProcess | undefined;
  try {
    const { spec, running } = idleServer(sandbox);
    supervisor = spawn(spec.command, spec.args, { env: spec.env, stdio: ['pipe', 'ignore', 'ignore'] });
    await until('the container runs', running);
    // The engine client is the supervisor's one child.
    const client = Number(spawnSync('pgrep', ['-P', String(supervisor.pid)], { encoding: 'utf8' }).stdout.trim().split('\n')[0]);
    assert.ok(client > 0, 'found the engine client');
    process.kill(client, 'SIGKILL');
    await until('the container is gone', () => !running());
  } finally {
    supervisor?.kill('SIGKILL');
    rmSync(sandbox, { recursive: true, force: true });
  }
});

test('containers a runner killed with its supervisors left behind are removed by the next run; live runners\' are kept', { skip, timeout: 90_000 }, async () => {
  // A runner pid that is gone: a process that has exited.
  const gone = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' }).stdout.trim();
  const orphan = `mcpbench-sandbox-${gone}-0a0b0c0d`;
  const live = `mcpbench-sandbox-${process.pid}-0e0f0a0b`;
  assert.equal(runnerPidOf(orphan), Number(gone));
  try {
    for (const name of [orphan, live]) {
      const made = spawnSync(engine!, ['run', '-d', '--name', name, '--label', `${SANDBOX_LABEL}=${name.split('-')[2]}`, '--network', 'none', '--pull', 'never', 'mcpbench-sandbox', 'node', '-e', 'setInterval(() => {}, 1000)'], { encoding: 'utf8' });
      assert.equal(made.status, 0, made.stderr);
    }
    const removed = await removeOrphans(engine!);
    assert.ok(removed.includes(orphan) && !removed.includes(live), removed.join(', '));
    const left = labelledContainers(engine!, SANDBOX_LABEL);
    assert.ok(!left.includes(orphan) && left.includes(live), left.join(', '));
  } finally {
    await removeContainers(engine!, [orphan, live]);
  }
});

test('every namespace server starts in a container, seeded, and answers tools/list as declared', { skip, timeout: 180_000 }, async () => {
  const registry = await loadRegistry();
  for (const info of registry.namespaces.values()) {
    if (info.server.implementation.kind === 'virtual') continue;
    const sandbox = mkdtempSync(join(tmpdir(), `mcpbench-ns-${info.namespace}-`));
    try {
      await seedNamespace(info, undefined, sandbox);
      const server = await startServer(info, sandbox, { backend: engine! });
      try {
        const tools = await server.listTools();
        assert.deepEqual(tools.map((t) => t.name).sort(), info.server.tools.map((t) => t.name).sort(), info.namespace);
      } finally {
        await server.close();
      }
    } finally {
      rmSync(sandbox, { recursive: true, force: true });
    }
  }
  await until('no container left', () => ours().length === 0);
});

const dockerClient = !spawnSync('docker', ['--version']).error;

test('the docker backend against a Docker API (podman serving one): detection, and a server that runs', { skip: engine !== 'podman' ? 'needs podman to serve a Docker API' : dockerClient ? false : 'no docker client', timeout: 120_000 }, async () => {
  const work = mkdtempSync(join(tmpdir(), 'mcpbench-docker-api-'));
  const socket = join(work, 'docker.sock');
  const service = spawn('podman', ['system', 'service', '--time', '0', `unix://${socket}`], { stdio: 'ignore' });
  const saved = process.env.DOCKER_HOST;
  try {
    await until('the Docker API socket', () => existsSync(socket));
    process.env.DOCKER_HOST = `unix://${socket}`;
    const status = probeBackend('docker');
    assert.equal(status.works, true, status.detail);
    assert.match(status.detail, /^podman \d+\.\d+\.\d+ \(answering as docker\)|^engine /);
    const registry = await loadRegistry();
    const sandbox = join(work, 'sandbox');
    mkdirSync(sandbox);
    await seedNamespace(registry.get('travel')!, undefined, sandbox);
    const server = await startServer(registry.get('travel')!, sandbox, { backend: 'docker' });
    try {
      assert.equal((await server.listTools()).length, registry.get('travel')!.server.tools.length);
    } finally {
      await server.close();
    }
    assert.deepEqual(labelledContainers('docker', `${SANDBOX_LABEL}=${process.pid}`), [], 'a closed server leaves no container');
  } finally {
    if (saved === undefined) delete process.env.DOCKER_HOST;
    else process.env.DOCKER_HOST = saved;
    service.kill('SIGTERM');
    rmSync(work, { recursive: true, force: true });
  }
});

test('the runtime mounted into a container is only what runs (no checkout, no .git)', { skip }, () => {
  const spec = sandboxed(engine!, { command: process.execPath, args: ['x.js'], env: { HOME: '/sb', SECRET_API_KEY: 'k' } }, serverConfinement('/sb'));
  const args = spec.args.join(' ');
  assert.doesNotMatch(args, /\.git:/);
  assert.doesNotMatch(args, /SECRET_API_KEY=k/, 'a value never on the command line');
  assert.equal(spec.env?.SECRET_API_KEY, 'k', "but in the engine client's environment");
  assert.match(args, /--env HOME=\/sb /, "HOME is the engine's own name: given by value");
});
