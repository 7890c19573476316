/**
 * The image agent end to end on a real container engine: a test agent (test/fixtures/image-agent, a real MCP
 * client bundled into an image of Node and one file) run by `mcpbench run --agent image` on dev-set tasks
 * with the servers in containers too; the attack corpus run as that image; the gateway over its stdio; what
 * is ours and what is the agent's when something fails. Skipped, with the reason, only where no container
 * engine works (scripts/container-engine.sh makes one).
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { runCli } from '../../server/src/cli/main.ts';
import { packageRoot } from '../../server/src/paths.ts';
import { createImageAgent } from '../../server/src/runner/agents/image.ts';
import { parseAllowHost } from '../../server/src/runner/agents/egress.ts';
import { labelledContainers, SANDBOX_LABEL, type ContainerEngine } from '../../server/src/runner/container.ts';
import { probeBackend } from '../../server/src/runner/sandbox.ts';
import type { EpisodeRecord } from '../../server/src/record/schema.ts';
import type { Task } from '../../server/src/tasks/model.ts';
import { assertAgentConfined, episode, hostile, PROBE, withSecrets } from '../attack-corpus.ts';

/** The engine these tests use: podman, else docker, whichever is installed and answers (its image is then required). */
const engine: ContainerEngine | undefined = (['podman', 'docker'] as const).find((e) => spawnSync(e, ['info'], { stdio: 'ignore', timeout: 30_000 }).status === 0);
const skip = engine ? false : 'no container engine is installed here (scripts/container-engine.sh installs podman and builds the sandbox image)';
const IMAGE = 'mcpbench-test-agent';

/** Dev-set tasks across namespaces: an answer task, git and postgres (servers in containers), a cross-server one. */
const TASKS = [
  'calendar/calendar-find-meeting-5d52ec75.json',
  'git/git-commit-only-fix-50a1a3c8.json',
  'filesystem/fs-chat-handoff-01cec4e5.json',
  'travel/travel-cheapest-flight-f7f2e89d.json',
  'postgres/' + (readdirSync(join(packageRoot(), 'tasks', 'postgres')).sort()[0] ?? ''),
].map((file) => join(packageRoot(), 'tasks', file));
const readTask = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Task;

const ours = () => (engine ? labelledContainers(engine, `${SANDBOX_LABEL}=${process.pid}`) : []);

before(async () => {
  if (!engine) return;
  const status = probeBackend(engine);
  assert.ok(status.works, `${engine}: ${status.detail} (scripts/container-engine.sh builds the sandbox image)`);
  // The image: the agent bundled into one file with its MCP SDK, and the attack corpus's probe.
  const context = mkdtempSync(join(tmpdir(), 'mcpbench-image-agent-'));
  try {
    await build({ entryPoints: [join(packageRoot(), 'test', 'fixtures', 'image-agent', 'agent.ts')], bundle: true, platform: 'node', format: 'cjs', target: 'node20', outfile: join(context, 'agent.js'), logLevel: 'error' });
    writeFileSync(join(context, 'probe.cjs'), PROBE);
    copyFileSync(join(packageRoot(), 'test', 'fixtures', 'image-agent', 'Dockerfile'), join(context, 'Dockerfile'));
    const built = spawnSync(engine, ['build', '--quiet', '-t', IMAGE, context], { encoding: 'utf8', timeout: 300_000 });
    assert.equal(built.status, 0, `${engine} build: ${built.stderr}`);
  } finally {
    rmSync(context, { recursive: true, force: true });
  }
});

async function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stderr: string; record?: string; episodes: EpisodeRecord[] }> {
  const work = mkdtempSync(join(tmpdir(), 'mcpbench-image-run-'));
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  let stderr = '';
  try {
    const code = await runCli([...args, '--reporter', 'none', '--no-report', '--out', join(work, 'runs')], { stdout: () => undefined, stderr: (t) => (stderr += t), cwd: work });
    const runs = join(work, 'runs');
    const runDir = readdirSync(work).includes('runs') ? join(runs, readdirSync(runs)[0]!) : undefined;
    const episodes = runDir ? readFileSync(join(runDir, 'episodes.jsonl'), 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as EpisodeRecord) : [];
    const record = runDir ? JSON.parse(readFileSync(join(runDir, 'run.json'), 'utf8')) : undefined;
    return { code, stderr, episodes, ...(record ? { record: JSON.stringify(record) } : {}) };
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    rmSync(work, { recursive: true, force: true });
  }
}

test('mcpbench run --agent image: an agent image passes dev-set tasks through the gateway, servers in containers too; its image id is recorded; nothing is left', { skip, timeout: 300_000 }, async () => {
  const plan = Object.fromEntries(TASKS.map(readTask).map((t) => [t.id, t.reference_solutions[0]]));
  const result = await run(['run', ...TASKS, '--agent', 'image', '--agent-image', IMAGE, '--agent-env', 'MCPBENCH_TEST_PLAN', '--sandbox', engine!], { MCPBENCH_TEST_PLAN: JSON.stringify(plan) });
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(result.episodes.map((e) => [e.task_id, e.status, e.error?.message]), TASKS.map(readTask).map((t) => [t.id, 'passed', undefined]));
  for (const e of result.episodes) assert.ok(e.calls.length > 0 && e.calls.every((c) => c.status === 'ok'), `${e.task_id}: every call went through the gateway`);
  const record = JSON.parse(result.record!) as { agent: string; agent_options: { image: string; imageId?: string; passEnv?: string[] } };
  assert.equal(record.agent, 'image');
  assert.equal(record.agent_options.image, IMAGE);
  assert.match(record.agent_options.imageId ?? '', /^(sha256:)?[0-9a-f]{64}$/);
  assert.deepEqual(record.agent_options.passEnv, ['MCPBENCH_TEST_PLAN'], 'recorded by name only');
  assert.doesNotMatch(result.record!, /reference_solutions|"arguments"/);
  assert.deepEqual(ours(), [], 'no container is left');
});

test('an agent image is judged on the end state: replaying a counterexample fails, a crash is an agent error with its stderr', { skip, timeout: 180_000 }, async () => {
  const task = readTask(TASKS[3]!);
  const counter = await run(['run', TASKS[3]!, '--agent', 'image', '--agent-image', IMAGE, '--agent-env', 'MCPBENCH_TEST_PLAN', '--sandbox', 'bwrap'], { MCPBENCH_TEST_PLAN: JSON.stringify({ [task.id]: task.counterexamples![0] }) });
  assert.deepEqual(counter.episodes.map((e) => [e.status, e.passed]), [['failed', false]]);
  const crash = await run(['run', TASKS[3]!, '--agent', 'image', '--agent-image', IMAGE, '--agent-env', 'MCPBENCH_TEST_PLAN', '--sandbox', 'bwrap'], { MCPBENCH_TEST_PLAN: '{}' });
  const [episode] = crash.episodes;
  assert.deepEqual([episode?.status, episode?.error?.kind, episode?.error?.code, episode?.error?.exit_code], ['agent_error', 'agent', 'agent-exit', 4]);
  assert.match(episode?.error?.stderr_tail ?? '', /no plan for travel-cheapest-flight-f7f2e89d/);
  assert.match(episode?.error?.stderr_tail ?? '', /^uid 65534 in \/agent, HOME \/scratch/m, 'nobody, in the image\'s WORKDIR, HOME in its scratch');
  assert.deepEqual(ours(), []);
});

test('an image that is not on the machine is refused before anything runs (exit 2), naming it', { skip, timeout: 60_000 }, async () => {
  const result = await run(['run', TASKS[3]!, '--agent', 'image', '--agent-image', 'mcpbench-no-such-image:0', '--sandbox', 'bwrap']);
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, /mcpbench-no-such-image:0 is not on this machine \((podman|docker) pull or build it first; nothing is pulled at run time\)/);
  assert.equal(result.episodes.length, 0);
});

test('an agent image under attack: no secrets, no host files, no writes, no host sockets, only allowed hosts through the proxy, bounded processes and disk', { skip, timeout: 180_000 }, async () => {
  const host = await hostile();
  try {
    const targets = host.targets({ read: {}, proxy: true, model: host.modelUrl, heavy: true });
    const agent = createImageAgent({ engine: engine!, image: IMAGE, label: IMAGE, args: ['/agent/probe.cjs', JSON.stringify(targets)], allowHosts: [parseAllowHost(host.modelHost)], timeoutMs: 120_000 });
    const result = await withSecrets(() => episode(agent, 'bwrap'));
    assertAgentConfined(result, host, { denied: ['ENOENT', 'EACCES'] });
  } finally {
    await host.close();
  }
  assert.deepEqual(ours(), []);
});

test('an agent image can take the gateway over its stdio: no network at all, no sidecar', { skip, timeout: 120_000 }, async () => {
  const task = readTask(TASKS[0]!);
  const result = await run(['run', TASKS[0]!, '--agent', 'image', '--agent-image', IMAGE, '--agent-env', 'MCPBENCH_TEST_PLAN', '--agent-gateway', 'stdio', '--sandbox', 'bwrap'], { MCPBENCH_TEST_PLAN: JSON.stringify({ [task.id]: task.reference_solutions[0] }) });
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(result.episodes.map((e) => [e.status, e.error?.message]), [['passed', undefined]]);
  assert.ok(result.episodes[0]!.answer, 'its answer came on stderr');
});

test("a sidecar that cannot be made is ours (agent-sandbox, an infrastructure error), never the agent's", { skip, timeout: 120_000 }, async () => {
  const work = mkdtempSync(join(tmpdir(), 'mcpbench-no-sidecar-'));
  mkdirSync(join(work, 'x'));
  const saved = process.env.MCPBENCH_SANDBOX_IMAGE;
  try {
    const agent = createImageAgent({ engine: engine!, image: IMAGE, label: IMAGE, timeoutMs: 60_000 });
    // The sidecar's image (the sandbox image) is missing here: the engine refuses to make it.
    process.env.MCPBENCH_SANDBOX_IMAGE = 'mcpbench-no-such-sandbox:0';
    const result = await episode(agent, 'bwrap');
    assert.deepEqual([result.status, result.error?.kind, result.error?.code], ['infra_error', 'infra', 'agent-sandbox']);
    assert.match(result.error?.message ?? '', /could not set up the image agent's (podman|docker) containers: the gateway's sidecar ended before it was up/);
  } finally {
    if (saved === undefined) delete process.env.MCPBENCH_SANDBOX_IMAGE;
    else process.env.MCPBENCH_SANDBOX_IMAGE = saved;
    rmSync(work, { recursive: true, force: true });
  }
  assert.deepEqual(ours(), []);
});
