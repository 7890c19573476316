/**
 * bench/agents: the model agents against every scripted model behaviour. For each protocol (openai,
 * anthropic) and each behaviour of test/simulations/behaviours.ts, one `mcpbench run --agent <protocol>` (the
 * CLI, in process) over the same tasks against the protocol's local simulation, whose oracle model replays
 * each task's first reference solution the way the behaviour says (calls as text, malformed first, 503s, ...).
 * Prints one table row per run: the pass rate against the well-behaved script's in the same run, the tokens
 * and cost the report shows against the sums the simulation served (delivered bodies; the cost at the same
 * price), the malformed-call rate, and the error (and failure) codes of the episodes.
 *
 *   npx tsx bench/agents/run.ts [--tasks N] [--protocol openai|anthropic] [--only TEXT[,TEXT...]]
 *
 * N tasks (default 20) are taken round-robin over the namespace folders of tasks/, in name order, each with a goal
 * of its own (the oracle knows a task by its goal). SANDBOX=bwrap|process.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../server/src/cli/main.ts';
import { costOf } from '../../server/src/runner/agents/usage.ts';
import { openRun } from '../../server/src/record/run-folder.ts';
import type { Scores } from '../../server/src/scoring/metrics.ts';
import type { Task } from '../../server/src/tasks/model.ts';
import { anthropicStep, BEHAVIOURS, openAIStep, planFor, scriptFor, type Behaviour, type Plan, type Protocol } from '../../test/simulations/behaviours.ts';
import { startAnthropicSimulation } from '../../test/simulations/anthropic-simulation.ts';
import type { SimulationServer } from '../../test/simulations/http.ts';
import { startOpenAISimulation } from '../../test/simulations/openai-simulation.ts';

const root = join(__dirname, '..', '..');
const PRICE = { input: 2.5, output: 10, cached_input: 1.25, cache_write: 3.125 };
const MODEL = 'sim-model';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/**
 * Tasks round-robin over the namespace folders, in name order, until `count`. The oracle knows a task by its
 * goal, so a task whose goal another picked task already has (variants of one template may differ only in
 * their initial state) is skipped.
 */
function pickTasks(count: number): { file: string; task: Task }[] {
  const folders = readdirSync(join(root, 'tasks'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort();
  const perFolder = folders.map((ns) => readdirSync(join(root, 'tasks', ns)).filter((f) => f.endsWith('.json')).sort().map((f) => join(root, 'tasks', ns, f)));
  const picked: { file: string; task: Task }[] = [];
  const goals = new Set<string>();
  for (let round = 0; picked.length < count && round < 100; round++) {
    for (const files of perFolder) {
      let file: string | undefined;
      // The next file of this folder whose goal is new.
      while ((file = files.shift())) {
        const task = JSON.parse(readFileSync(file, 'utf8')) as Task;
        if (goals.has(task.goal)) continue;
        goals.add(task.goal);
        if (picked.length < count) picked.push({ file, task });
        break;
      }
    }
  }
  return picked;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface Row {
  protocol: Protocol;
  behaviour: Behaviour;
  passed: number;
  scored: number;
  scores: Scores;
  served: SimulationServer['served'];
  cut: SimulationServer['cut'];
  codes: Map<string, number>;
  seconds: number;
}

async function runBehaviour(protocol: Protocol, behaviour: Behaviour, files: string[], plans: Map<string, Plan>, work: string): Promise<Row> {
  const sim =
    protocol === 'openai'
      ? await startOpenAISimulation(scriptFor(behaviour, plans, openAIStep))
      : await startAnthropicSimulation(scriptFor(behaviour, plans, anthropicStep));
  const dir = mkdtempSync(join(work, 'run-'));
  try {
    const baseUrl = behaviour.unreachable ? `http://127.0.0.1:${await freePort()}/v1` : sim.baseUrl;
    const prices = join(dir, 'prices.json');
    writeFileSync(prices, JSON.stringify({ currency: 'USD', models: { [MODEL]: PRICE } }));
    const profile = join(dir, 'agent.json');
    writeFileSync(profile, JSON.stringify({ agent: protocol, base_url: baseUrl, model: MODEL, prices: 'prices.json', temperature: 0, ...behaviour.settings }));
    const out = join(dir, 'runs');
    const started = performance.now();
    const sink = () => undefined;
    const code = await runCli(['run', ...files, '--agent-config', profile, '--concurrency', '2', '--reporter', 'none', '--out', out, ...(process.env.SANDBOX ? ['--sandbox', process.env.SANDBOX] : [])], { stdout: sink, stderr: sink, cwd: dir });
    const seconds = (performance.now() - started) / 1000;
    if (code !== 0) throw new Error(`mcpbench run exited ${code} for ${protocol} / ${behaviour.name}`);
    const [folder] = readdirSync(out);
    const report = JSON.parse(readFileSync(join(out, folder!, 'report.json'), 'utf8')) as { scores: Scores };
    const codes = new Map<string, number>();
    for (const e of openRun(join(out, folder!)).episodes) {
      const code = e.error?.code ?? e.failure?.code;
      if (code) codes.set(code, (codes.get(code) ?? 0) + 1);
    }
    const s = report.scores;
    return { protocol, behaviour, passed: s.success_rate.numerator, scored: s.success_rate.denominator, scores: s, served: { ...sim.served }, cut: { ...sim.cut }, codes, seconds };
  } finally {
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const pct = (n: number, d: number) => (d === 0 ? '-' : `${((100 * n) / d).toFixed(0)}%`);

async function main() {
  const count = Number(arg('--tasks') ?? 20);
  const only = arg('--only')?.split(',').map((text) => text.trim()).filter(Boolean);
  const protocols = (arg('--protocol') ? [arg('--protocol')] : ['openai', 'anthropic']) as Protocol[];
  const tasks = pickTasks(count);
  const plans = new Map(tasks.map(({ task }) => [task.goal, planFor(task)]));
  const files = tasks.map((t) => t.file);
  console.log(`bench/agents: ${tasks.length} tasks (${new Set(tasks.map((t) => t.file.split('/').at(-2))).size} namespaces), concurrency 2, price per 1M tokens ${JSON.stringify(PRICE)}`);
  console.log('');
  console.log('| protocol | behaviour | pass rate | vs well-behaved | tokens: report / served | cost USD: report / served | malformed-call rate | error / failure codes | s |');
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  const work = mkdtempSync(join(tmpdir(), 'mcpbench-bench-agents-'));
  let mismatches = 0;
  try {
    for (const protocol of protocols) {
      let baseline: Row | undefined;
      for (const behaviour of BEHAVIOURS.filter((b) => b.protocols.includes(protocol) && (!only || only.some((text) => b.name.includes(text)) || b.name === 'well-behaved'))) {
        const row = await runBehaviour(protocol, behaviour, files, plans, work);
        if (behaviour.name === 'well-behaved') baseline = row;
        const m = row.scores.model;
        const reportTokens = m ? m.total_tokens : 0;
        const servedTokens = row.served.prompt_tokens + row.served.completion_tokens;
        const reportCost = m?.cost ?? 0;
        const servedCost = costOf(row.served, PRICE);
        const equal = reportTokens === servedTokens && Math.abs(reportCost - servedCost) < 1e-9;
        if (!equal) mismatches++;
        const verdict = !baseline ? '' : behaviour.absorbable ? (row.passed === baseline.passed ? 'same' : `DIFFERS (${baseline.passed}/${baseline.scored})`) : 'not absorbable';
        const cut = row.cut.responses ? ` (+${row.cut.prompt_tokens + row.cut.completion_tokens} in ${row.cut.responses} bodies cut by the timeout)` : '';
        const unreported = m?.responses_without_usage ? ` (${m.responses_without_usage} responses without usage)` : '';
        const errors = [...row.codes.entries()].map(([code, n]) => `${code} ${n}`).join(', ') || '-';
        console.log(
          `| ${protocol} | ${behaviour.name.replace(/\|/g, '\\|')} | ${row.passed}/${row.scored} (${pct(row.passed, row.scored)}) | ${verdict} | ${reportTokens} / ${servedTokens}${equal ? '' : ' MISMATCH'}${unreported}${cut} | ${reportCost.toFixed(8)} / ${servedCost.toFixed(8)} | ${pct(row.scores.malformed_call_rate.numerator, row.scores.malformed_call_rate.denominator)} (${row.scores.malformed_call_rate.numerator}/${row.scores.malformed_call_rate.denominator}) | ${errors} | ${row.seconds.toFixed(0)} |`,
        );
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  console.log('');
  console.log(mismatches === 0 ? 'tokens and cost: the report equals what the simulations served in every run' : `tokens or cost differ from what was served in ${mismatches} run(s)`);
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
