/**
 * bench/sandbox: the cost of least-privilege confinement. Per namespace, the start-up of a server (seed a
 * fresh sandbox, start the server in it, MCP initialize, tools/list) with today's bubblewrap confinement vs
 * the old argument set (the whole host read-only, root inside, the runner's environment), taking turns in
 * one run so the machine's load falls on both alike. Prints the median of each and the ratio new / old
 * (goal <= 1.1). Also the start-up of a confined command agent (forwarder, proxy) vs a plain process.
 * Where a container engine works (scripts/container-engine.sh), also a server's start-up in a container
 * (`--sandbox podman`, or docker) vs in bubblewrap, taking turns the same way, and the ratio.
 * Needs `npm run build` first (servers are served by dist/serve.js).
 *
 *   npx tsx bench/sandbox/run.ts            (STARTS=7 NAMESPACES=travel,git,filesystem,postgres by default)
 *   PARTS=containers npx tsx bench/sandbox/run.ts     (only the container comparison; PARTS=bwrap: only the rest)
 */
import { mkdtempSync, rmSync, chmodSync, mkdirSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { loadRegistry, type NamespaceInfo } from '../../server/src/mcp/registry.ts';
import { packageRoot } from '../../server/src/paths.ts';
import { connectServer, serverCommand, startServer } from '../../server/src/runner/launch.ts';
import { probeBackends, underTmp, type LaunchSpec, type SandboxBackend } from '../../server/src/runner/sandbox.ts';
import { seedNamespace } from '../../server/src/runner/state.ts';
import { createCommandAgent } from '../../server/src/runner/agents/command.ts';
import { Gateway } from '../../server/src/runner/gateway.ts';
import type { Task } from '../../server/src/tasks/model.ts';

const STARTS = Number(process.env.STARTS ?? 7);
const NAMESPACES = (process.env.NAMESPACES ?? 'travel,git,filesystem,postgres').split(',');
const PARTS = (process.env.PARTS ?? 'bwrap,containers').split(',');
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** The bubblewrap arguments before least privilege (commit 059799f), kept here only to measure against. */
function oldBwrap(spec: LaunchSpec, sandbox: string): LaunchSpec {
  return {
    command: 'bwrap',
    args: [
      '--unshare-net', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--die-with-parent', '--new-session',
      '--ro-bind', '/', '/',
      '--dev', '/dev',
      '--proc', '/proc',
      '--tmpfs', '/tmp',
      ...underTmp([packageRoot(), dirname(process.execPath)]).flatMap((path) => ['--ro-bind', path, path]),
      '--bind', sandbox, sandbox,
      '--chdir', sandbox,
      '--setenv', 'HOME', sandbox,
      spec.command, ...spec.args,
    ],
    // The old way: the runner's whole environment.
    env: { ...(process.env as Record<string, string>), ...spec.env, HOME: sandbox },
  };
}

async function seeded(info: NamespaceInfo, work: string, n: number): Promise<string> {
  const sandbox = join(work, `${info.namespace}-${n}`);
  mkdirSync(sandbox);
  await seedNamespace(info, undefined, sandbox);
  return sandbox;
}

/** One start-up: seeding, launch, initialize, tools/list, as an episode pays it. */
async function startUp(info: NamespaceInfo, work: string, n: number, kind: 'new' | 'old'): Promise<number> {
  const t0 = performance.now();
  const sandbox = await seeded(info, work, n);
  const server =
    kind === 'new'
      ? await startServer(info, sandbox, { backend: 'bwrap', startTimeoutMs: 120_000 })
      : await connectServer(info.namespace, oldBwrap(serverCommand(info, sandbox), sandbox), sandbox, 'bwrap', { startTimeoutMs: 120_000 });
  await server.listTools();
  const ms = performance.now() - t0;
  await server.close();
  rmSync(sandbox, { recursive: true, force: true });
  return ms;
}

/** A server's start-up (seed, launch, initialize, tools/list) in one backend's sandbox. */
async function startUpIn(info: NamespaceInfo, work: string, n: number, backend: SandboxBackend): Promise<number> {
  const t0 = performance.now();
  const sandbox = await seeded(info, work, n);
  const server = await startServer(info, sandbox, { backend, startTimeoutMs: 120_000 });
  await server.listTools();
  const ms = performance.now() - t0;
  await server.close();
  rmSync(sandbox, { recursive: true, force: true });
  return ms;
}

/** Server start-up in a container vs in bubblewrap, per namespace, taking turns. */
async function containerStartUps(engine: SandboxBackend, work: string, first: number): Promise<void> {
  const registry = await loadRegistry();
  console.log(`bench/sandbox: median server start-up, ${engine} container vs bubblewrap (${STARTS} starts each, taking turns); load ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  let n = first;
  const sums = { container: 0, bwrap: 0 };
  for (const name of NAMESPACES) {
    const info = registry.get(name);
    if (!info) throw new Error(`unknown namespace ${name}`);
    await startUpIn(info, work, n++, engine); // warm-up: the engine's storage, the page cache
    const times = { container: [] as number[], bwrap: [] as number[] };
    for (let s = 0; s < STARTS; s++) {
      for (const kind of (s % 2 ? ['bwrap', 'container'] : ['container', 'bwrap']) as ('container' | 'bwrap')[]) times[kind].push(await startUpIn(info, work, n++, kind === 'bwrap' ? 'bwrap' : engine));
    }
    const [c, b] = [median(times.container), median(times.bwrap)];
    sums.container += c;
    sums.bwrap += b;
    console.log(`  ${name.padEnd(11)} ${engine} ${c.toFixed(0).padStart(5)} ms   bwrap ${b.toFixed(0).padStart(5)} ms   ratio ${(c / b).toFixed(2)}`);
  }
  console.log(`episode start-up over these namespaces, ${engine} / bwrap: ${(sums.container / sums.bwrap).toFixed(2)} (+${((sums.container - sums.bwrap) / NAMESPACES.length).toFixed(0)} ms per server); load ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
}

async function agentStartUps(work: string): Promise<{ plain: number; confined: number }> {
  const registry = await loadRegistry();
  const task = { id: 'bench', server: 'travel', category: 'single-tool', difficulty: 'easy', max_steps: 1, goal: 'g', initial_state: {}, available_tools: ['travel.search_flights'], success_predicate: { all: [] }, reference_solutions: [] } as unknown as Task;
  const dir = join(work, 'agent');
  mkdirSync(dir);
  const times = { plain: [] as number[], confined: [] as number[] };
  for (let i = 0; i < STARTS; i++) {
    for (const kind of (i % 2 ? ['confined', 'plain'] : ['plain', 'confined']) as ('plain' | 'confined')[]) {
      const gateway = new Gateway({ task, registry, servers: new Map([['travel', () => Promise.reject(new Error('unused'))]]) });
      const { url } = await gateway.listen();
      const agent = createCommandAgent({ command: [process.execPath, '-e', "console.log('MCPBENCH_ANSWER: ok')"], cwd: dir, ...(kind === 'confined' ? { sandbox: { backend: 'bwrap' as const, dir } } : {}) });
      const t0 = performance.now();
      await agent.run({ task, goal: 'g', gateway: { url, tools: gateway.tools, listenSocket: (p) => gateway.listenSocket(p) }, variant: 'command', signal: new AbortController().signal });
      times[kind].push(performance.now() - t0);
      await gateway.close();
    }
  }
  return { plain: median(times.plain), confined: median(times.confined) };
}

async function main() {
  const backends = probeBackends();
  if (!backends.find((b) => b.backend === 'bwrap')?.works) throw new Error('bwrap does not work here: apt-get install bubblewrap');
  const registry = await loadRegistry();
  const work = mkdtempSync(join(tmpdir(), 'mcpbench-bench-sandbox-'));
  chmodSync(work, 0o711);
  if (PARTS.includes('containers')) {
    const engine = backends.find((b) => (b.backend === 'podman' || b.backend === 'docker') && b.works)?.backend;
    if (engine) await containerStartUps(engine, work, 1_000_000);
    else console.log(`bench/sandbox: no container engine works here (${backends.filter((b) => b.backend === 'podman' || b.backend === 'docker').map((b) => `${b.backend}: ${b.detail}`).join('; ')}); scripts/container-engine.sh makes one`);
  }
  if (!PARTS.includes('bwrap')) return rmSync(work, { recursive: true, force: true });
  console.log(`bench/sandbox: median server start-up (seed + launch + initialize + tools/list, ${STARTS} starts each, taking turns), least-privilege bwrap vs the old bwrap arguments; load ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  let n = 0;
  let sumNew = 0;
  let sumOld = 0;
  try {
    for (const name of NAMESPACES) {
      const info = registry.get(name);
      if (!info) throw new Error(`unknown namespace ${name}`);
      await startUp(info, work, n++, 'new'); // warm-up: caches (PGlite template, page cache)
      const times = { new: [] as number[], old: [] as number[] };
      for (let s = 0; s < STARTS; s++) {
        for (const kind of (s % 2 ? ['old', 'new'] : ['new', 'old']) as ('new' | 'old')[]) times[kind].push(await startUp(info, work, n++, kind));
      }
      const [m, o] = [median(times.new), median(times.old)];
      sumNew += m;
      sumOld += o;
      console.log(`  ${name.padEnd(11)} new ${m.toFixed(0).padStart(5)} ms   old ${o.toFixed(0).padStart(5)} ms   ratio ${(m / o).toFixed(3)}`);
    }
    console.log(`episode start-up over these namespaces, new / old: ${(sumNew / sumOld).toFixed(3)} (goal <= 1.1); load ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
    const agent = await agentStartUps(work);
    console.log(`command agent start-up (a trivial agent): confined ${agent.confined.toFixed(0)} ms vs plain process ${agent.plain.toFixed(0)} ms (+${(agent.confined - agent.plain).toFixed(0)} ms per episode)`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

void main();
