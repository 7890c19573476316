/**
 * bench/queue: what the queue costs per episode. The same tasks, in one run of this benchmark, three ways:
 * in process at concurrency 2 (the baseline); the queue with one worker at concurrency 2; the queue with two
 * workers at concurrency 1 each. A real redis-server on a free loopback port; the coordinator in this
 * process, the workers as `mcpbench worker` processes, started (and idle) before the clock starts. Prints
 * episodes per minute and the queue's cost per episode against the baseline (goal: at most 5%). Needs
 * `npm run build` first.
 *
 *   npx tsx bench/queue/run.ts [--rounds 1] [--trials 1] [task files or folders...]
 *   (default tasks: tasks/travel and tasks/shop of the dev set; SANDBOX=bwrap|process, default process)
 *
 * With `--rounds N` the three configurations run N times, interleaved, and the median of each is printed
 * (a shared machine's load moves; interleaving spreads it over all three).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadRegistry, type Registry } from '../../server/src/mcp/registry.ts';
import { queueExecutor } from '../../server/src/queue/coordinator.ts';
import { runToEnd } from '../../server/src/engine/session.ts';
import type { SandboxBackend } from '../../server/src/runner/sandbox.ts';
import { openRun } from '../../server/src/record/run-folder.ts';
import packageJson from '../../package.json';
import { startRedis, type RedisServer } from '../../test/redis-server.ts';

const root = join(__dirname, '..', '..');
const cli = join(root, 'dist', 'cli.js');
const { values, positionals } = parseArgs({ allowPositionals: true, options: { rounds: { type: 'string', default: '1' }, trials: { type: 'string', default: '1' } } });
const tasks = positionals.length ? positionals : ['tasks/travel', 'tasks/shop'].map((p) => join(root, p));
const backend = (process.env.SANDBOX ?? 'process') as SandboxBackend;
const trials = Number(values.trials);

interface Measure {
  name: string;
  episodes: number;
  wallMs: number;
  notPassed: number;
  /** On the queue: ms from an episode's end to the next one's start on the same worker (hand back, fetch, rebuild the spec). */
  handoffs: number[];
}

/** The hand-off gaps in a worker's log: each `finished` to the next `started`. */
function handoffs(log: string): number[] {
  const gaps: number[] = [];
  const ended: number[] = [];
  for (const line of log.split('\n')) {
    const m = /^(\S+) (started|finished) /.exec(line);
    if (!m) continue;
    const at = Date.parse(m[1]!);
    if (m[2] === 'finished') ended.push(at);
    else if (ended.length) gaps.push(at - ended.shift()!);
  }
  return gaps;
}

/** `mcpbench worker` processes, resolved once each says it waits for jobs. */
async function startWorkers(redis: RedisServer, count: number, concurrency: number): Promise<{ child: ChildProcess; log: () => string }[]> {
  return Promise.all(
    Array.from({ length: count }, (_, i) => {
      const child = spawn(process.execPath, [cli, 'worker', '--queue', redis.url, '--sandbox', backend, '--concurrency', String(concurrency), '--name', `bench-${i}`], { stdio: ['ignore', 'pipe', 'ignore'] });
      let text = '';
      return new Promise<{ child: ChildProcess; log: () => string }>((resolve) => {
        child.stdout!.on('data', (chunk: Buffer) => {
          text += chunk.toString();
          if (text.includes('waiting for jobs')) resolve({ child, log: () => text });
        });
      });
    }),
  );
}

async function stopWorkers(workers: { child: ChildProcess }[]) {
  await Promise.all(workers.map(({ child }) => new Promise<void>((resolve) => (child.once('exit', () => resolve()), child.kill('SIGTERM')))));
}

async function measure(name: string, registry: Registry, redis: RedisServer | undefined, workers: { count: number; concurrency: number } | undefined): Promise<Measure> {
  const work = mkdtempSync(join(tmpdir(), 'mcpbench-bench-queue-'));
  const started = workers && redis ? await startWorkers(redis, workers.count, workers.concurrency) : [];
  try {
    const t0 = performance.now();
    const finished = await runToEnd({
      mode: 'run',
      registry,
      cwd: work,
      backend,
      concurrency: 2,
      tasks,
      out: join(work, 'runs'),
      report: false,
      agent: 'reference',
      trials,
      seed: 1,
      ...(redis ? { executor: queueExecutor({ url: redis.url, version: packageJson.version }) } : {}),
    });
    const wallMs = performance.now() - t0;
    const episodes = openRun(finished.directory).episodes;
    return { name, episodes: episodes.length, wallMs, notPassed: episodes.filter((r) => r.status !== 'passed').length, handoffs: started.flatMap((w) => handoffs(w.log())) };
  } finally {
    await stopWorkers(started);
    rmSync(work, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  const registry = await loadRegistry();
  const redis = await startRedis();
  const rounds = Number(values.rounds);
  console.log(`bench/queue: reference agent, no faults, sandbox ${backend}, ${rounds} round(s); load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const results = new Map<string, Measure[]>();
  try {
    for (let round = 0; round < rounds; round++) {
      for (const [name, workers] of [
        ['in process, concurrency 2', undefined],
        ['queue, 1 worker x concurrency 2', { count: 1, concurrency: 2 }],
        ['queue, 2 workers x concurrency 1', { count: 2, concurrency: 1 }],
      ] as const) {
        const m = await measure(name, registry, workers ? redis : undefined, workers);
        results.set(name, [...(results.get(name) ?? []), m]);
      }
    }
  } finally {
    await redis.stop();
  }
  const rows = [...results.entries()].map(([name, ms]) => ({
    name,
    episodes: ms[0]!.episodes,
    wallMs: median(ms.map((m) => m.wallMs)),
    rounds: ms.map((m) => (m.wallMs / 1000).toFixed(1)).join(' / '),
    notPassed: Math.max(...ms.map((m) => m.notPassed)),
    handoffs: ms.flatMap((m) => m.handoffs),
  }));
  const base = rows[0]!;
  const basePerEpisode = base.wallMs / base.episodes;
  for (const row of rows) {
    const perEpisode = row.wallMs / row.episodes;
    const cost = row === base ? '' : `; queue cost ${(perEpisode - basePerEpisode) * 2 >= 0 ? '+' : ''}${((perEpisode - basePerEpisode) * 2).toFixed(0)} ms of slot time per episode (${((perEpisode / basePerEpisode - 1) * 100).toFixed(1)}% vs in process)`;
    const gaps = [...row.handoffs].sort((a, b) => a - b);
    const handoff = gaps.length ? `; hand-off between episodes on a worker: median ${median(gaps)} ms, p90 ${gaps[Math.floor(gaps.length * 0.9)]} ms (${((median(gaps) / (basePerEpisode * 2)) * 100).toFixed(1)}% of an episode)` : '';
    console.log(`  ${row.name.padEnd(34)} ${((row.episodes / row.wallMs) * 60_000).toFixed(1).padStart(6)} episodes/min (${row.episodes} episodes, ${(row.wallMs / 1000).toFixed(1)} s wall${rounds > 1 ? ` median of ${row.rounds}` : ''}, ${row.notPassed} not passed)${cost}${handoff}`);
  }
  console.log(`  load average after: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
