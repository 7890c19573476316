/**
 * deploy/ built and run: the worker image (deploy/worker.Dockerfile) built with podman from this checkout, and
 * deploy/compose.yaml brought up with podman-compose (Redis and two worker replicas); the coordinator, on
 * the host, runs dev-set tasks through the compose's Redis and every episode is run by the workers in their
 * containers. A few minutes (the image build runs npm ci), so it runs where MCPBENCH_DEPLOY_TEST=1 (.ci/run
 * sets it), with podman and podman-compose installed (scripts/container-engine.sh, .ci/run).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../server/src/cli/main.ts';
import { packageRoot } from '../server/src/paths.ts';
import type { EpisodeRecord } from '../server/src/record/schema.ts';
import { freePort } from './free-port.ts';

const tools = ['podman', 'podman-compose'].filter((t) => spawnSync(t, ['--version']).error);
const skip =
  process.env.MCPBENCH_DEPLOY_TEST !== '1'
    ? 'builds the worker image (minutes): runs where MCPBENCH_DEPLOY_TEST=1 (.ci/run)'
    : tools.length
      ? `needs ${tools.join(' and ')} (scripts/container-engine.sh; apt-get install podman-compose)`
      : false;

const root = packageRoot();
const sh = (command: string, args: string[], env: NodeJS.ProcessEnv = process.env, timeout = 900_000) => {
  const result = spawnSync(command, args, { cwd: root, env, encoding: 'utf8', timeout });
  assert.equal(result.status, 0, `${command} ${args.slice(0, 3).join(' ')}: ${result.stderr.slice(-3000)}`);
  return result.stdout;
};

function redisAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.setTimeout(2000);
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (data) => (socket.destroy(), resolve(data.toString().startsWith('+PONG'))));
    socket.on('error', () => resolve(false));
    socket.on('timeout', () => (socket.destroy(), resolve(false)));
  });
}

test('the worker image builds, and compose (Redis + 2 workers) runs a queued run of dev-set tasks to the end', { skip, timeout: 1_200_000 }, async () => {
  // The build runs npm ci: behind a TLS-intercepting proxy, npm gets the machine's CA as a build secret.
  const ca = process.env.NODE_EXTRA_CA_CERTS;
  sh('podman', ['build', '--quiet', '-f', 'deploy/worker.Dockerfile', '--ignorefile', 'deploy/worker.Dockerfile.dockerignore', ...(ca ? ['--secret', `id=ca,src=${ca}`] : []), '-t', 'mcpbench-worker', '.']);
  if (spawnSync('podman', ['image', 'exists', 'redis:7.0']).status !== 0) {
    sh('podman', ['build', '--quiet', '-f', 'test/fixtures/deploy/redis.Dockerfile', '-t', 'redis:7.0', 'test/fixtures/deploy']);
  }
  const port = await freePort();
  const project = `mcpbench-deploy-${process.pid}`;
  const env = { ...process.env, MCPBENCH_REDIS_PORT: String(port) };
  const compose = (...args: string[]) => sh('podman-compose', ['-p', project, '-f', 'deploy/compose.yaml', ...args], env);
  const out = mkdtempSync(join(tmpdir(), 'mcpbench-deploy-'));
  try {
    compose('up', '-d');
    for (let i = 0; !(await redisAnswers(port)); i++) {
      assert.ok(i < 60, 'Redis answers on its published port');
      await new Promise((r) => setTimeout(r, 500));
    }
    const workers = sh('podman', ['ps', '--filter', `label=io.podman.compose.project=${project}`, '--filter', 'label=com.docker.compose.service=worker', '--format', '{{.Names}}']).trim().split('\n').filter(Boolean);
    assert.equal(workers.length, 2, 'two worker replicas (deploy.replicas)');
    let stderr = '';
    const code = await runCli(['run', join(root, 'tasks', 'travel'), '--queue', `redis://127.0.0.1:${port}`, '--reporter', 'none', '--no-report', '--out', out], { stdout: () => undefined, stderr: (t) => (stderr += t), cwd: out });
    assert.equal(code, 0, stderr);
    const runDir = join(out, readdirSync(out)[0]!);
    const episodes = readFileSync(join(runDir, 'episodes.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as EpisodeRecord);
    assert.equal(episodes.length, readdirSync(join(root, 'tasks', 'travel')).filter((f) => f.endsWith('.json')).length);
    assert.deepEqual([...new Set(episodes.map((e) => e.status))], ['passed']);
    // Every episode was run by a worker in its container (their logs say so), none by the coordinator.
    const logs = (name: string) => {
      const result = spawnSync('podman', ['logs', name], { encoding: 'utf8' });
      return result.stdout + result.stderr;
    };
    const finished = workers.map((name) => logs(name).match(/ finished passed /g)?.length ?? 0);
    assert.equal(finished.reduce((a, b) => a + b, 0), episodes.length, `episodes per worker: ${finished.join(', ')}`);
  } finally {
    spawnSync('podman-compose', ['-p', project, '-f', 'deploy/compose.yaml', 'down', '-v'], { cwd: root, env, timeout: 120_000 });
    rmSync(out, { recursive: true, force: true });
  }
});
