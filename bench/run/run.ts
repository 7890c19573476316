/**
 * bench/run: episodes per minute for the reference agent over the task set, the plain start path (dist/serve.js
 * compiled at every start, official servers from their packages, servers started when an episode is taken)
 * against the fast one (code cache, bundled official servers, the pool starting each episode's servers
 * while the episodes before it run), at concurrency 1, 2 and 4, in one run and taking turns. For each: the
 * share of episode time outside the servers' own work (tool calls, measured at the gateway), the machine's CPU time
 * per episode (this process and every server, sandboxes included) and the memory of an episode's servers.
 * Needs `npm run build` first.
 *
 *   npx tsx bench/run/run.ts [--concurrency 1,2,4] [--rounds 1] [task folders...]   (SANDBOX=bwrap|process)
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { createReferenceAgent } from '../../server/src/runner/agents/reference.ts';
import { executeRun, planRun } from '../../server/src/runner/run.ts';
import { defaultBackend, type SandboxBackend } from '../../server/src/runner/sandbox.ts';
import { createRun } from '../../server/src/record/run-folder.ts';
import { collectTaskFiles } from '../../server/src/tasks/files.ts';
import { FAULT_PROFILES } from '../../server/src/record/faults.ts';
import { loadTasks } from '../../server/src/tasks/load.ts';

const TICKS_PER_SECOND = 100;

/**
 * Busy CPU seconds of the whole machine (/proc/stat: user, nice, system, irq, softirq, steal). Not this
 * process's rusage: a server in a bubblewrap sandbox is never waited for by us, so its CPU time is not in our
 * children's. Other work on the machine counts too: the load is printed beside it.
 */
function cpuSeconds(): number {
  const [user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  return [user, nice, system, irq, softirq, steal].reduce((sum: number, v) => sum + (v ?? 0), 0) / TICKS_PER_SECOND;
}

/** Resident memory (MiB) of the processes serving episodes of a run, and in how many episode folders. */
function serverMemory(prefix: string): { mib: number; episodes: number } {
  let kib = 0;
  const roots = new Set<string>();
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      const at = cmd.indexOf(prefix);
      if (at < 0) continue;
      roots.add(cmd.slice(at, at + prefix.length + 6));
      const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      kib += Number(rss?.[1] ?? 0);
    } catch {
      // it ended while we looked
    }
  }
  return { mib: kib / 1024, episodes: roots.size };
}

interface Measure {
  perMin: number;
  outside: number;
  cpuMs: number;
  /** Of which this process (the runner: gateway, agent, snapshots, evaluation, journal). */
  runnerCpuMs: number;
  memMib: number;
  failed: number;
}

async function main() {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { concurrency: { type: 'string', default: '1,2,4' }, rounds: { type: 'string', default: '1' } } });
  const levels = values.concurrency.split(',').map(Number);
  const rounds = Number(values.rounds);
  const registry = await loadRegistry();
  const tasks = loadTasks(collectTaskFiles(positionals.length ? positionals : [join(__dirname, '..', '..', 'tasks')]), registry);
  const backend = (process.env.SANDBOX as SandboxBackend | undefined) ?? defaultBackend();
  const specs = planRun(tasks, {
    agent: createReferenceAgent(),
    variants: () => ['reference:0'],
    trials: 1,
    profile: { ...FAULT_PROFILES.none, name: 'none' },
    perturbation: 'none',
  });
  console.log(`bench/run: ${specs.length} episodes (reference agent, no faults, sandbox ${backend}), ${rounds} round(s), load ${loadavg()[0]!.toFixed(1)} at start`);

  const once = async (plain: boolean, concurrency: number, round: number): Promise<Measure> => {
    const work = mkdtempSync(join(tmpdir(), 'mcpbench-bench-run-'));
    const runId = `bench${plain ? 'plain' : 'fast'}${concurrency}r${round}`;
    try {
      const store = createRun(join(work, 'run'), {
        kind: 'run', run_id: runId, created_at: new Date().toISOString(), task_files: tasks.map((t) => t.file), tasks: tasks.map((t) => t.task.id),
        agent: 'reference', fault_profile: 'none', perturbations: ['none'], trials: 1, seed: 1, concurrency, sandbox: backend,
      });
      const memory: number[] = [];
      const sampler = setInterval(() => {
        const { mib, episodes } = serverMemory(`mcpbench-${runId}-`);
        if (episodes > 0) memory.push(mib / episodes);
      }, 200);
      const cpu0 = cpuSeconds();
      const own0 = process.cpuUsage();
      const started = performance.now();
      await executeRun(specs, { store, concurrency, runId, registry, seed: 1, backend, plain });
      const wallMs = performance.now() - started;
      clearInterval(sampler);
      const results = store.episodes;
      const episodeMs = results.reduce((n, r) => n + r.duration_ms, 0);
      const callMs = results.reduce((n, r) => n + r.calls.reduce((m, c) => m + c.latency_ms, 0), 0);
      return {
        perMin: (results.length / wallMs) * 60_000,
        outside: 100 - (callMs / episodeMs) * 100,
        cpuMs: ((cpuSeconds() - cpu0) * 1000) / results.length,
        runnerCpuMs: (((u) => u.user + u.system)(process.cpuUsage(own0)) / 1000) / results.length,
        memMib: memory.length ? memory.reduce((a, b) => a + b, 0) / memory.length : NaN,
        failed: results.filter((r) => r.status !== 'passed').length,
      };
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  };

  const show = (m: Measure) =>
    `${m.perMin.toFixed(1).padStart(6)} episodes/min, outside the servers' work ${m.outside.toFixed(1)}% of episode time, ` +
    `${m.cpuMs.toFixed(0)} ms CPU/episode (runner ${m.runnerCpuMs.toFixed(0)}), ${m.memMib.toFixed(0)} MiB servers/episode${m.failed ? `, ${m.failed} NOT PASSED` : ''}`;
  for (const concurrency of levels) {
    const plain: Measure[] = [];
    const fast: Measure[] = [];
    for (let round = 0; round < rounds; round++) {
      // Taking turns, the first one alternating, so a drift of the machine's load falls on both.
      const order = round % 2 === 0 ? [true, false] : [false, true];
      for (const p of order) (p ? plain : fast).push(await once(p, concurrency, round));
    }
    const median = (ms: Measure[]) => [...ms].sort((a, b) => a.perMin - b.perMin)[Math.floor(ms.length / 2)]!;
    const [a, b] = [median(plain), median(fast)];
    console.log(`  concurrency ${concurrency}  plain: ${show(a)}`);
    console.log(`  concurrency ${concurrency}  fast:  ${show(b)}`);
    console.log(`  concurrency ${concurrency}  ratio fast/plain ${(b.perMin / a.perMin).toFixed(2)}x (load ${loadavg()[0]!.toFixed(1)})`);
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
