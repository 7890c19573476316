/**
 * bench/run/phases: where one episode's time goes, per phase (seed, start, agent, stop, snapshot, evaluate),
 * for the first task of each namespace folder. Needs `npm run build` first.
 *
 *   npx tsx bench/run/phases.ts [rounds]      (SANDBOX=bwrap|process; PLAIN=1: the old start path and HTTP,
 *                                              as bench/run's `plain`; MCPBENCH_SCRATCH=DIR: sandboxes in DIR)
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { evaluate, stateLeafEvaluator, type NamespaceStates } from '../../server/src/predicates/evaluate.ts';
import { parsePredicate } from '../../server/src/predicates/tree.ts';
import { createReferenceAgent } from '../../server/src/runner/agents/reference.ts';
import { ModelMeter } from '../../server/src/runner/agents/usage.ts';
import { episodeNamespaces } from '../../server/src/runner/episode.ts';
import { Gateway } from '../../server/src/runner/gateway.ts';
import { startServer, type RunningServer } from '../../server/src/runner/launch.ts';
import { defaultBackend, type SandboxBackend } from '../../server/src/runner/sandbox.ts';
import { scratchRoot } from '../../server/src/runner/scratch.ts';
import { seedNamespace, snapshotNamespace } from '../../server/src/runner/state.ts';
import { collectTaskFiles } from '../../server/src/tasks/files.ts';
import { loadTasks } from '../../server/src/tasks/load.ts';

async function main() {
  const rounds = Number(process.argv[2] ?? 5);
  const registry = await loadRegistry();
  const backend = (process.env.SANDBOX as SandboxBackend | undefined) ?? defaultBackend();
  const root = join(__dirname, '..', '..', 'tasks');
  const agent = createReferenceAgent();
  const plain = process.env.PLAIN === '1';
  for (const folder of readdirSync(root).filter((n) => !n.includes('.'))) {
    const loaded = loadTasks(collectTaskFiles([join(root, folder)]), registry).find((t) => Object.keys(t.task.initial_state).length === 1
      && episodeNamespaces(t.task, registry).every((i) => i.namespace in t.task.initial_state));
    if (!loaded) continue;
    const task = loaded.task;
    const sums: Record<string, number[]> = {};
    const add = (k: string, v: number) => (sums[k] ??= []).push(v);
    for (let r = 0; r < rounds; r++) {
      const dir = mkdtempSync(join(scratchRoot(), 'mcpbench-phases-'));
      chmodSync(dir, 0o711);
      const servers: RunningServer[] = [];
      let t = performance.now();
      const lap = (k: string) => { const now = performance.now(); add(k, now - t); t = now; };
      const infos = episodeNamespaces(task, registry).filter((i) => i.namespace in task.initial_state);
      for (const info of infos) { mkdirSync(join(dir, info.namespace)); await seedNamespace(info, task.initial_state[info.namespace], join(dir, info.namespace)); }
      lap("seed");
      for (const info of infos) servers.push(await startServer(info, join(dir, info.namespace), { backend, plain }));
      lap("start");
      const gateway = new Gateway({ task, registry, servers: new Map(servers.map((s) => [s.namespace, s])), faults: { profile: { name: 'none', failure_rate: 0, fault_weights: {} }, seed: 1, trial: 0 } });
      const { url } = await gateway.listen();
      lap('gateway');
      const out = await agent.run({ task, goal: task.goal, gateway: { url, tools: gateway.tools, listenSocket: (p) => gateway.listenSocket(p), serveStdio: (s) => gateway.serveStdio(s), ...(plain ? {} : { connectInProcess: () => gateway.connectInProcess() }) }, variant: 'reference:0', signal: AbortSignal.timeout(10_000), workspace: dir, onEgress: () => undefined, seed: 1, trial: 0, meter: new ModelMeter() });
      const callMs = gateway.calls().reduce((n, c) => n + c.latency_ms, 0);
      lap("agent");
      add('calls(in agent)', callMs);
      await gateway.close();
      await Promise.all(servers.map((s) => s.close()));
      lap('stop');
      const states: NamespaceStates = {};
      for (const info of infos) states[info.namespace] = await snapshotNamespace(info, join(dir, info.namespace));
      lap('snapshot');
      evaluate(parsePredicate(task.success_predicate, ['success_predicate']), stateLeafEvaluator(registry, states, out.answer, { initial: task.initial_state }));
      lap('evaluate');
      rmSync(dir, { recursive: true, force: true });
      lap('remove');
    }
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
    console.log(`${folder.padEnd(11)} ${Object.entries(sums).map(([k, v]) => `${k} ${med(v).toFixed(1)}`).join('  ')}`);
  }
}

main().catch((error) => { console.error(error); process.exitCode = 1; });
