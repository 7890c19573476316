/**
 * Runs across machines (queue/): a coordinator (`mcpbench run --queue`) and workers (`mcpbench worker`, the
 * built CLI as separate processes) over a real redis-server on a free loopback port. Each scenario ends with
 * every work unit exactly once in the journal and the same verdicts, calls and fault decisions as a local
 * run of the same tasks with the same seed: three workers with one SIGKILLed mid-episode; the coordinator
 * SIGKILLed and resumed; Redis restarted mid-run with and without persistence. Then the edges: a sealed run
 * never puts a task in Redis in plain text and a worker without the key says so; a worker of another
 * version refuses the jobs; a namespace a worker cannot start is an infrastructure error naming its host;
 * `--max-in-flight` holds across workers; an unreachable Redis is a clear error. Needs `npm run build`.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { loadRegistry, Registry } from '../../server/src/mcp/registry.ts';
import { runToEnd, type RunOptions } from '../../server/src/engine/session.ts';
import { openRun } from '../../server/src/record/run-folder.ts';
import type { RunEvent } from '../../server/src/engine/protocol.ts';
import { scratchRoots } from '../../server/src/runner/scratch.ts';
import { queueExecutor } from '../../server/src/queue/coordinator.ts';
import { startQueueWorker, type QueueWorker } from '../../server/src/queue/worker.ts';
import { seal } from '../../server/src/tasks/seal.ts';
import { runCli } from '../../server/src/cli/main.ts';
import packageJson from '../../package.json';
import { startRedis, type RedisServer } from '../redis-server.ts';
import type { EpisodeRecord } from '../../server/src/record/schema.ts';
import { isScored, latestByWorkUnit } from '../../server/src/record/work-units.ts';

const root = join(__dirname, '..', '..');
const cli = join(root, 'dist', 'cli.js');
const VERSION = packageJson.version;
/** A subset of the dev set: single-server and cross-server tasks, two trials each, light faults. */
const TASKS = [
  'tasks/travel/travel-cheapest-flight-f7f2e89d.json',
  'tasks/travel/travel-confirm-hold-18f237fc.json',
  'tasks/calendar/calendar-book-and-announce-06933505.json',
  'tasks/travel/travel-appendix-c2-74911a68.json',
].map((path) => join(root, path));
const RUN = { agent: 'reference', agentOptions: { retry: true }, faults: 'light', trials: 2, seed: 7 } as const;
const PLANNED = TASKS.length * RUN.trials;
/** Short leases, so a killed worker's job comes back within seconds. */
const LEASE = ['--lease-ms', '2000', '--stall-check-ms', '1000'];

const work = mkdtempSync(join(tmpdir(), 'mcpbench-queue-test-'));
let registry: Registry;
let local: Map<string, string>;

/** What must be the same as in a local run: outcome, verdict, every call with its fault decision. */
function summary(r: EpisodeRecord): string {
  return JSON.stringify({
    status: r.status,
    passed: r.passed,
    verdict: r.verdict,
    answer: r.answer,
    tool_calls: r.tool_calls,
    unlisted: r.unlisted_calls,
    errors_seen: r.errors_seen,
    calls: r.calls.map((c) => [c.tool, c.status, c.fault?.type, c.decided, c.arguments]),
  });
}

/** Every work unit exactly once (one scored record each), as a map unit → summary. */
function exactlyOnce(directory: string): Map<string, string> {
  const run = openRun(directory);
  assert.deepEqual(run.damaged, [], 'no damaged journal line');
  const scored = run.episodes.filter(isScored);
  const perUnit = new Map<string, number>();
  for (const r of scored) perUnit.set(r.work_unit, (perUnit.get(r.work_unit) ?? 0) + 1);
  assert.deepEqual([...perUnit.values()].filter((n) => n > 1), [], 'no work unit recorded twice');
  return new Map(latestByWorkUnit(run.episodes).map((r) => [r.work_unit, summary(r)]));
}

function assertSameAsLocal(directory: string) {
  const queued = exactlyOnce(directory);
  assert.equal(queued.size, PLANNED, 'every planned work unit is recorded');
  assert.deepEqual([...queued.keys()].sort(), [...local.keys()].sort(), 'the same work units as the local run');
  for (const [unit, s] of local) assert.equal(queued.get(unit), s, `work unit ${unit.slice(0, 12)}: the same outcome, verdict and calls as the local run`);
}

/** A CLI process whose stdout lines are kept and can be waited for. */
class Proc {
  readonly lines: string[] = [];
  readonly exited: Promise<number | null>;
  private readonly waiters: { match: (line: string) => boolean; resolve: (line: string) => void }[] = [];
  stderr = '';
  constructor(readonly child: ChildProcess) {
    let buffer = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop()!;
      for (const line of lines) {
        this.lines.push(line);
        for (const waiter of [...this.waiters]) {
          if (!waiter.match(line)) continue;
          this.waiters.splice(this.waiters.indexOf(waiter), 1);
          waiter.resolve(line);
        }
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }
  /** The next line (or one already seen, when `seen`) that matches. */
  waitFor(match: (line: string) => boolean, seen = false): Promise<string> {
    const found = seen ? this.lines.find(match) : undefined;
    if (found !== undefined) return Promise.resolve(found);
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    await this.exited;
  }
}

const procs: Proc[] = [];
function cliProcess(args: string[], env: NodeJS.ProcessEnv = process.env): Proc {
  const proc = new Proc(spawn(process.execPath, [cli, ...args], { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'] }));
  procs.push(proc);
  return proc;
}

function startWorker(redis: RedisServer, name: string, extra: string[] = [], env?: NodeJS.ProcessEnv): Proc {
  return cliProcess(['worker', '--queue', redis.url, '--sandbox', 'process', '--concurrency', '1', '--name', name, ...LEASE, ...extra], env);
}

/** A coordinator in this process: the session with the queue's executor. */
function coordinate(redis: RedisServer, onEvent: (event: RunEvent) => void = () => undefined, extra: Partial<RunOptions> = {}, queue: { maxInFlight?: number } = {}) {
  return runToEnd(
    { mode: 'run', registry, cwd: work, backend: 'process', concurrency: 1, tasks: TASKS, out: join(work, 'runs'), report: false, ...RUN, ...extra, executor: queueExecutor({ url: redis.url, version: VERSION, ...queue, ...(extra.setKey ? { setKey: extra.setKey } : {}) }) },
    onEvent,
  );
}

const starts = (line: string) => / started /.test(line);

before(async () => {
  registry = await loadRegistry();
  const finished = await runToEnd({ mode: 'run', registry, cwd: work, backend: 'process', concurrency: 2, tasks: TASKS, out: join(work, 'local'), report: false, ...RUN });
  local = exactlyOnce(finished.directory);
  assert.equal(local.size, PLANNED);
});

after(async () => {
  for (const proc of procs) await proc.stop('SIGKILL');
  rmSync(work, { recursive: true, force: true });
});

test('a coordinator and three workers, one SIGKILLed mid-episode: every work unit once, verdicts as a local run', { timeout: 240_000 }, async () => {
  const redis = await startRedis();
  try {
    const workers = ['w1', 'w2', 'w3'].map((name) => startWorker(redis, name));
    const victim = Promise.race(workers.map((w) => w.waitFor(starts).then(() => w)));
    const run = coordinate(redis);
    const killed = await victim;
    killed.child.kill('SIGKILL');
    const finished = await run;
    assert.equal(finished.interrupted, false);
    assertSameAsLocal(finished.directory);
    // The killed worker's episode came back after its lease lapsed and ran on another worker.
    const lost = killed.lines.filter(starts).length - killed.lines.filter((l) => / finished /.test(l)).length;
    assert.ok(lost >= 1, 'the killed worker was mid-episode');
    const busy = workers.filter((w) => w.lines.some((l) => / finished /.test(l)));
    assert.ok(busy.length >= 2, 'episodes ran on several workers');
    // The live workers remove the sandbox the killed one left, once the run is finished.
    const leftovers = () => scratchRoots().flatMap((root) => readdirSync(root)).filter((name) => name.startsWith(`mcpbench-${openRun(finished.directory).config.run_id}-`));
    for (let i = 0; i < 100 && leftovers().length; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(leftovers(), []);
    for (const w of workers) await w.stop();
  } finally {
    await redis.stop();
  }
});

test('the coordinator SIGKILLed mid-run and resumed with --resume --queue: it re-attaches and finishes', { timeout: 240_000 }, async () => {
  const redis = await startRedis();
  try {
    const workers = ['w1', 'w2'].map((name) => startWorker(redis, name));
    const out = join(work, 'runs-b');
    const base = ['--queue', redis.url, '--sandbox', 'process', '--reporter', 'jsonl', '--no-report'];
    const first = cliProcess(['run', ...TASKS, '--agent', 'reference', '--retry', '--faults', RUN.faults, '--trials', String(RUN.trials), '--seed', String(RUN.seed), '--out', out, ...base]);
    let finishedEpisodes = 0;
    await first.waitFor((line) => line.includes('"episode-finished"') && ++finishedEpisodes === 3);
    first.child.kill('SIGKILL');
    await first.exited;
    const directory = join(out, readdirSync(out)[0]!);
    const recordedBefore = openRun(directory).episodes.length;
    const second = cliProcess(['run', '--resume', directory, ...base]);
    assert.equal(await second.exited, 0, second.stderr);
    const started = JSON.parse(second.lines.find((l) => l.includes('"run-started"'))!) as { recorded: number };
    assert.ok(started.recorded >= recordedBefore, 'the resumed coordinator keeps what was recorded');
    assertSameAsLocal(directory);
    for (const w of workers) await w.stop();
  } finally {
    await redis.stop();
  }
});

for (const persistence of [false, true]) {
  test(`Redis restarted mid-run ${persistence ? 'with' : 'without'} persistence: the coordinator reconciles and every work unit is recorded once`, { timeout: 240_000 }, async () => {
    const redis = await startRedis({ persistence });
    try {
      const workers = ['w1', 'w2'].map((name) => startWorker(redis, name));
      const notices: string[] = [];
      let count = 0;
      let restarted: Promise<void> | undefined;
      const finished = await coordinate(redis, (event) => {
        if (event.type === 'notice') notices.push(event.message);
        if (event.type === 'episode-finished' && ++count === 3) restarted = redis.restart();
      });
      await restarted;
      assert.equal(finished.interrupted, false);
      assertSameAsLocal(finished.directory);
      assert.ok(notices.some((n) => /unreachable|restarted/.test(n)), `the coordinator said Redis went away: ${notices.join(' | ')}`);
      for (const w of workers) await w.stop();
    } finally {
      await redis.stop();
    }
  });
}

test('a sealed run: no task in Redis in plain text; a worker without the set key is an infrastructure error naming its host', { timeout: 240_000 }, async () => {
  const redis = await startRedis();
  const key = 'a'.repeat(64);
  try {
    const setDir = join(work, 'private');
    mkdirSync(join(setDir, 'tasks'), { recursive: true });
    cpSync(TASKS[0]!, join(setDir, 'tasks', 'one.json'));
    const sealedFile = join(work, 'private.sealed.json');
    seal(setDir, key, { out: sealedFile });
    const goal = JSON.parse(readFileSync(TASKS[0]!, 'utf8')) as { goal: string; id: string };
    const events: RunEvent[] = [];
    const options = { tasks: [sealedFile], setKey: () => key, maxInfraRetries: 1 };
    const run = coordinate(redis, (e) => events.push(e), options);
    // Before any worker runs: the jobs are in Redis, sealed.
    const probe = new Redis(redis.url);
    try {
      for (let i = 0; i < 200 && (await probe.keys('mcpbench:episodes-*:*')).filter((k) => /:[^:]+\.[0-9a-f]{64}$/.test(k)).length < RUN.trials; i++) await new Promise((r) => setTimeout(r, 50));
      const jobs = (await probe.keys('mcpbench:episodes-*:*')).filter((k) => /:[^:]+\.[0-9a-f]{64}$/.test(k));
      assert.equal(jobs.length, RUN.trials, 'one job per work unit');
      for (const job of jobs) {
        const data = (await probe.hget(job, 'data')) ?? '';
        assert.ok(data.includes('"sealed"') && !data.includes(goal.id) && !data.includes(goal.goal.slice(0, 30)), 'the payload is sealed');
      }
    } finally {
      probe.disconnect();
    }
    const keyless = startWorker(redis, 'keyless-host', [], { ...process.env, MCPBENCH_SET_KEY: '' });
    const finished = await run;
    await keyless.stop();
    const records = openRun(finished.directory).episodes;
    assert.equal(latestByWorkUnit(records).length, RUN.trials);
    for (const r of latestByWorkUnit(records)) {
      assert.equal(r.status, 'infra_error');
      assert.equal(r.error?.code, 'worker-setup');
      assert.equal(r.error?.host, 'keyless-host');
      assert.match(r.error?.message ?? '', /keyless-host.*MCPBENCH_SET_KEY/);
    }
    // Resumed with a worker that has the key: the episodes run, sealed both ways, and pass as locally.
    const keyed = startWorker(redis, 'keyed', [], { ...process.env, MCPBENCH_SET_KEY: key });
    const resumed = await runToEnd({ mode: 'resume', directory: finished.directory, registry, cwd: work, backend: 'process', concurrency: 1, report: false, setKey: () => key, executor: queueExecutor({ url: redis.url, version: VERSION, setKey: () => key }) });
    await keyed.stop();
    const standing = latestByWorkUnit(openRun(resumed.directory).episodes);
    assert.deepEqual(standing.map((r) => r.status), ['passed', 'passed']);
    for (const r of standing) assert.equal(summary(r), local.get(r.work_unit), 'the same verdict as the local run');
  } finally {
    await redis.stop();
  }
});

test('a worker of another version refuses the jobs (and the coordinator says so); a namespace a worker cannot start is an infra error with its host', { timeout: 240_000 }, async () => {
  const redis = await startRedis();
  const logs: string[] = [];
  const inProcess: QueueWorker[] = [];
  try {
    const common = { url: redis.url, backend: 'process' as const, concurrency: 1, leaseMs: 2000, stallCheckMs: 1000, discoverMs: 200, log: (line: string) => logs.push(line) };
    inProcess.push(await startQueueWorker({ ...common, version: '0.0.1-old', registry, host: 'old-host' }));
    const withoutTravel = new Registry(new Map([...registry.namespaces].filter(([ns]) => ns !== 'travel')));
    const notices: string[] = [];
    let lacking: QueueWorker | undefined;
    const finished = await coordinate(
      redis,
      (event) => {
        if (event.type !== 'notice') return;
        notices.push(event.message);
        // Once the coordinator has reported the old worker, a worker of this version without travel joins.
        if (/runs mcpbench 0\.0\.1-old and refuses/.test(event.message) && !lacking) {
          void startQueueWorker({ ...common, version: VERSION, registry: withoutTravel, host: 'no-travel-host' }).then((w) => inProcess.push((lacking = w)));
        }
      },
      { tasks: [TASKS[0]!], trials: 1, maxInfraRetries: 0 },
    );
    assert.ok(logs.some((l) => /refusing queue episodes-.*mcpbench 0\.1\.0.*this worker is mcpbench 0\.0\.1-old/.test(l)), logs.join('\n'));
    assert.ok(!logs.some((l) => / started /.test(l) && /old/.test(l)));
    const [record] = openRun(finished.directory).episodes;
    assert.equal(record?.status, 'infra_error');
    assert.deepEqual([record?.error?.code, record?.error?.namespace, record?.error?.host], ['server-start', 'travel', 'no-travel-host']);
    assert.match(record?.error?.message ?? '', /no-travel-host cannot start namespace travel/);
  } finally {
    for (const w of inProcess) await w.stop();
    await redis.stop();
  }
});

test('--max-in-flight 1 holds across two workers of concurrency 2', { timeout: 240_000 }, async () => {
  const redis = await startRedis();
  try {
    const workers = ['w1', 'w2'].map((name) => startWorker(redis, name, ['--concurrency', '2']));
    const finished = await coordinate(redis, undefined, { tasks: TASKS.slice(0, 2) }, { maxInFlight: 1 });
    assert.equal(exactlyOnce(finished.directory).size, 4);
    for (const w of workers) await w.stop();
    // Each episode's span, from its worker's log: none overlaps another.
    const spans: [number, number][] = [];
    for (const w of workers) {
      const open = new Map<string, number>();
      for (const line of w.lines) {
        const m = /^(\S+) (started|finished \S+) (.*) in [\d.]+ s$|^(\S+) (started) (.*)$/.exec(line);
        if (!m) continue;
        const at = Date.parse(m[1] ?? m[4]!);
        const what = m[3] ?? m[6]!;
        if ((m[2] ?? m[5]) === 'started') open.set(what, at);
        else spans.push([open.get(what)!, at]);
      }
    }
    assert.equal(spans.length, 4);
    spans.sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < spans.length; i++) assert.ok(spans[i]![0] >= spans[i - 1]![1], 'one episode in flight at a time');
  } finally {
    await redis.stop();
  }
});

test('a worker of concurrency 1 runs one episode at a time and starts the next ones\' servers meanwhile: each work unit once, verdicts as a local run', { timeout: 240_000 }, async () => {
  const redis = await startRedis();
  try {
    const worker = startWorker(redis, 'w1', ['--concurrency', '1']);
    const finished = await coordinate(redis, undefined, { tasks: TASKS.slice(0, 4) });
    assertSameAsLocal(finished.directory);
    await worker.stop();
    const events: { at: number; kind: string; what: string }[] = [];
    for (const line of worker.lines) {
      const m = /^(\S+) (took|started|finished \S+) (.*?)(?:: starting its servers| in [\d.]+ s)?$/.exec(line);
      if (m) events.push({ at: Date.parse(m[1]!), kind: m[2]!.split(' ')[0]!, what: m[3]! });
    }
    let running = 0;
    let tookWhileRunning = 0;
    for (const e of events) {
      if (e.kind === 'started') running++;
      if (e.kind === 'finished') running--;
      if (e.kind === 'took' && running > 0) tookWhileRunning++;
      assert.ok(running <= 1, `one episode at a time:\n${worker.lines.join('\n')}`);
    }
    assert.ok(events.filter((e) => e.kind === 'finished').length >= PLANNED, 'every episode ran on this worker');
    assert.ok(tookWhileRunning > 0, `jobs were taken (their servers started) while another episode ran:\n${worker.lines.join('\n')}`);
  } finally {
    await redis.stop();
  }
});

test('an unreachable Redis: run --queue and worker exit 2 saying so, and no run folder is made', async () => {
  const redis = await startRedis();
  const url = redis.url;
  await redis.stop();
  const stderr: string[] = [];
  const io = { stdout: () => undefined, stderr: (t: string) => stderr.push(t), cwd: work };
  const out = join(work, 'runs-unreachable');
  assert.equal(await runCli(['run', TASKS[0]!, '--queue', url, '--out', out, '--sandbox', 'process'], io), 2);
  assert.match(stderr.join(''), new RegExp(`cannot reach Redis at ${url.replace(/[.]/g, '\\.')}`));
  assert.ok(!existsSync(out));
  assert.equal(await runCli(['worker', '--queue', url, '--sandbox', 'process'], io), 2);
  assert.equal(await runCli(['run', TASKS[0]!, '--max-in-flight', '2', '--out', out], io), 2);
  assert.match(stderr.join(''), /--max-in-flight .* use it with --queue/);
});
