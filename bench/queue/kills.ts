/**
 * bench/queue/kills: a queued run under fire, and what it lost or counted twice (both must be 0). A real
 * redis-server, a coordinator (`mcpbench run --queue`) and three workers (`mcpbench worker`, short leases),
 * all as processes; then, one after the other, at random points: a worker SIGKILLed mid-episode (a fresh one
 * takes its place), the coordinator SIGKILLed (and resumed with `--resume --queue`), and with `--redis-restarts`
 * Redis SIGKILLed and started again (empty, or with its data under `--persistence`). Needs `npm run build`.
 *
 *   npx tsx bench/queue/kills.ts [--worker-kills 5] [--coordinator-kills 2] [--redis-restarts 0] [--persistence]
 *                                [--trials 4] [--seed 1] [task folders...]
 *   (default tasks: the calendar, travel and shop fixtures; SANDBOX=bwrap|process, default process)
 *
 * At the end, over the journal: lost = planned work units without a scored record + records seen before a
 * kill that are gone; duplicated = work units with more than one scored record.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { EPISODES_FILE, openRun } from '../../server/src/record/run-folder.ts';
import { mulberry32 } from '../../server/src/seeded-random.ts';
import { collectTaskFiles } from '../../server/src/tasks/files.ts';
import { startRedis } from '../../test/redis-server.ts';
import { isScored, latestByWorkUnit } from '../../server/src/record/work-units.ts';

const root = join(__dirname, '..', '..');
const cli = join(root, 'dist', 'cli.js');
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    'worker-kills': { type: 'string', default: '5' },
    'coordinator-kills': { type: 'string', default: '2' },
    'redis-restarts': { type: 'string', default: '0' },
    persistence: { type: 'boolean', default: false },
    trials: { type: 'string', default: '4' },
    seed: { type: 'string', default: '1' },
  },
});
const random = mulberry32(Number(values.seed));
const sandbox = process.env.SANDBOX ?? 'process';
const taskDirs = positionals.length ? positionals : ['calendar', 'travel', 'shop'].map((ns) => join(root, 'test', 'fixtures', 'tasks', ns));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A CLI process and its stdout lines; `on(line)` hears each. */
function run(args: string[], cwd: string, on: (line: string) => void = () => undefined): { child: ChildProcess; exited: Promise<number | null>; stderr: () => string } {
  const child = spawn(process.execPath, [cli, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let buffer = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    const lines = buffer.split('\n');
    buffer = lines.pop()!;
    for (const line of lines) on(line);
  });
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return { child, exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))), stderr: () => stderr };
}

async function main() {
  const work = mkdtempSync(join(tmpdir(), 'mcpbench-bench-queue-kills-'));
  const out = join(work, 'runs');
  const redis = await startRedis({ persistence: values.persistence });
  const planned = collectTaskFiles(taskDirs).length * Number(values.trials);
  const plan: ('worker' | 'coordinator' | 'redis')[] = [
    ...Array<'worker'>(Number(values['worker-kills'])).fill('worker'),
    ...Array<'coordinator'>(Number(values['coordinator-kills'])).fill('coordinator'),
    ...Array<'redis'>(Number(values['redis-restarts'])).fill('redis'),
  ].sort(() => random() - 0.5);
  console.log(`bench/queue/kills: ${planned} episodes, kills in this order: ${plan.join(', ')}; Redis ${values.persistence ? 'with' : 'without'} persistence; sandbox ${sandbox}; load average ${loadavg()[0]!.toFixed(2)}`);

  let started = 0;
  const onStarted: (() => void)[] = [];
  const workers = new Set<ChildProcess>();
  const startWorker = (n: number) => {
    const w = run(['worker', '--queue', redis.url, '--sandbox', sandbox, '--concurrency', '1', '--name', `w${n}`, '--lease-ms', '2000', '--stall-check-ms', '1000'], work, (line) => {
      if (!/ started /.test(line)) return;
      started++;
      const waiter = onStarted.shift();
      if (waiter) {
        // This worker is mid-episode now: kill it.
        w.child.kill('SIGKILL');
        waiter();
      }
    });
    workers.add(w.child);
    w.exited.then(() => workers.delete(w.child));
  };
  let nextWorker = 0;
  for (; nextWorker < 3; nextWorker++) startWorker(nextWorker);

  let finished = 0;
  const common = ['--queue', redis.url, '--sandbox', sandbox, '--reporter', 'jsonl', '--no-report'];
  let folder: string | undefined;
  const kept = new Set<string>();
  const remember = () => {
    if (!folder) return;
    for (const line of readFileSync(join(folder, EPISODES_FILE), 'utf8').split('\n')) {
      try {
        const r = JSON.parse(line) as { status?: string };
        if (r.status && r.status !== 'infra_error') kept.add(line);
      } catch {
        // a torn line
      }
    }
  };
  const coordinator = () => run(folder ? ['run', '--resume', folder, ...common] : ['run', ...taskDirs, '--trials', values.trials!, '--seed', values.seed!, '--out', out, ...common], work, (line) => {
    if (line.includes('"episode-finished"')) finished++;
  });
  let current = coordinator();
  const t0 = performance.now();
  const counts = { worker: 0, coordinator: 0, redis: 0 };
  for (const action of plan) {
    const target = finished + 1 + Math.floor(random() * 2);
    while (finished < target && current.child.exitCode === null) await sleep(50);
    if (current.child.exitCode !== null) break;
    folder ??= join(out, readdirSync(out)[0]!);
    if (action === 'worker') {
      await new Promise<void>((resolve) => onStarted.push(resolve));
      startWorker(nextWorker++);
    } else if (action === 'coordinator') {
      await sleep(Math.floor(random() * 300));
      current.child.kill('SIGKILL');
      await current.exited;
      remember();
      current = coordinator();
    } else {
      await redis.restart();
    }
    counts[action]++;
    console.log(`  ${action} kill ${counts[action]}: after ${finished} finished episode(s) reported`);
  }
  const code = await current.exited;
  const wallS = (performance.now() - t0) / 1000;
  for (const w of workers) w.kill('SIGTERM');
  while (workers.size) await sleep(50);
  await redis.stop();
  if (code !== 0) throw new Error(`the coordinator exited with ${code}: ${current.stderr()}`);
  folder ??= join(out, readdirSync(out)[0]!);

  const records = [...openRun(folder).episodes];
  const perUnit = new Map<string, number>();
  for (const r of records.filter(isScored)) perUnit.set(r.work_unit, (perUnit.get(r.work_unit) ?? 0) + 1);
  const duplicated = [...perUnit.values()].filter((n) => n > 1).length;
  const lostUnits = planned - latestByWorkUnit(records).filter(isScored).length;
  const finalLines = new Set(readFileSync(join(folder, EPISODES_FILE), 'utf8').split('\n'));
  const lostRecords = [...kept].filter((line) => !finalLines.has(line)).length;
  console.log(`  ${counts.worker} worker kills, ${counts.coordinator} coordinator kills, ${counts.redis} Redis restarts in ${wallS.toFixed(1)} s; episodes started by workers ${started}`);
  console.log(`  work units planned ${planned}, recorded ${perUnit.size}; lost ${lostUnits} (planned units without a scored record) + ${lostRecords} (records seen before a kill and gone)`);
  console.log(`  duplicated ${duplicated} (work units with more than one scored record); infrastructure-error records ${records.filter((r) => !isScored(r)).length}`);
  rmSync(work, { recursive: true, force: true });
  const ok = lostUnits === 0 && lostRecords === 0 && duplicated === 0 && counts.worker + counts.coordinator + counts.redis === plan.length;
  console.log(ok ? 'OK: 0 lost, 0 duplicated' : 'FAILED');
  if (!ok) process.exitCode = 1;
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
