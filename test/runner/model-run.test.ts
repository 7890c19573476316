/**
 * `mcpbench run --agent openai|anthropic` as a user runs it (the built CLI) against the local protocol
 * simulations, whose oracle model replays each task's reference solution: the settings recorded in run.json
 * (never the key), the tokens and cost in report.json equal to what the simulation served, text tool calls
 * and malformed calls in the scores, endpoint refusals as typed agent errors, the token budget failing an
 * episode with its reason, and --max-cost stopping a run that --resume with a higher budget finishes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openRun } from '../../server/src/record/run-folder.ts';
import { costOf } from '../../server/src/runner/agents/usage.ts';
import type { Scores } from '../../server/src/scoring/metrics.ts';
import { collectTaskFiles } from '../../server/src/tasks/files.ts';
import type { Task } from '../../server/src/tasks/model.ts';
import { anthropicStep, BEHAVIOURS, openAIStep, planFor, scriptFor, type Behaviour } from '../simulations/behaviours.ts';
import { startAnthropicSimulation } from '../simulations/anthropic-simulation.ts';
import type { SimulationServer } from '../simulations/http.ts';
import { startOpenAISimulation } from '../simulations/openai-simulation.ts';

const root = join(__dirname, '..', '..');
const cli = join(root, 'dist', 'cli.js');
const taskFiles = collectTaskFiles([join(root, 'test', 'fixtures', 'tasks', 'calendar'), join(root, 'test', 'fixtures', 'tasks', 'travel')]);
const plans = new Map(taskFiles.map((file) => JSON.parse(readFileSync(file, 'utf8')) as Task).map((task) => [task.goal, planFor(task)]));
const PRICE = { input: 2, output: 8, cached_input: 0.5, cache_write: 2.5 };
const behaviour = (name: string): Behaviour => BEHAVIOURS.find((b) => b.name === name)!;

/** The CLI as a child process, without blocking this process (it serves the simulation). */
function runCli(args: string[], cwd: string, env: Record<string, string> = {}): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (status) => resolve({ status, stdout, stderr }));
  });
}

function runFolder(out: string): string {
  const [folder] = readdirSync(out).filter((f) => f.startsWith('run-'));
  assert.ok(folder, `a run folder in ${out}`);
  return join(out, folder);
}

async function withWork(body: (work: string) => Promise<void>): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'mcpbench-model-run-'));
  try {
    writeFileSync(join(work, 'prices.json'), JSON.stringify({ currency: 'USD', models: { 'sim-*': PRICE } }));
    await body(work);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

const common = ['--sandbox', 'process', '--reporter', 'none', '--concurrency', '2'];

function assertReportMatchesServed(folder: string, sim: SimulationServer): Scores {
  const { scores } = JSON.parse(readFileSync(join(folder, 'report.json'), 'utf8')) as { scores: Scores };
  assert.ok(scores.model);
  assert.equal(scores.model.total_tokens, sim.served.prompt_tokens + sim.served.completion_tokens, 'tokens in the report = tokens served');
  assert.equal(scores.model.cached_tokens, sim.served.cached_tokens);
  assert.ok(Math.abs(scores.model.cost! - costOf(sim.served, PRICE)) < 1e-9, 'cost in the report = served tokens at the price');
  return scores;
}

test('openai: a run records its settings (never the key), counts tokens and cost as served, reads text calls, scores malformed calls', { timeout: 300_000 }, async () => {
  await withWork(async (work) => {
    for (const name of ['well-behaved', 'text: hermes <tool_call>', 'bad JSON arguments first']) {
      const sim = await startOpenAISimulation(scriptFor(behaviour(name), plans, openAIStep));
      try {
        const out = join(work, name.replace(/\W+/g, '-'));
        const result = await runCli(
          ['run', ...taskFiles, '--agent', 'openai', '--base-url', sim.baseUrl, '--model', 'sim-1', '--temperature', '0.3', '--extra-body', '{"top_k": 5}', '--prices', 'prices.json', '--seed', '4', '--out', out, ...common],
          work,
          { OPENAI_API_KEY: 'sk-never-recorded-123' },
        );
        assert.equal(result.status, 0, result.stderr);
        const folder = runFolder(out);
        const { agent, agent_options: settings } = openRun(folder).config;
        assert.equal(agent, 'openai');
        assert.deepEqual(
          { model: settings.model, temperature: settings.temperature, seed: settings.seed, extra: settings.extra_body, price: settings.prices },
          { model: 'sim-1', temperature: 0.3, seed: 4, extra: { top_k: 5 }, price: { file: join(work, 'prices.json'), currency: 'USD', model: PRICE } },
        );
        for (const file of readdirSync(folder, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name))) assert.ok(!readFileSync(file, 'utf8').includes('sk-never-recorded'), `${file} holds no API key`);
        assert.equal(sim.requests[0]!.headers.authorization, 'Bearer sk-never-recorded-123');
        assert.deepEqual([...new Set(sim.requests.map((r) => r.body.seed))].sort(), [4], 'trial 0 sends the run seed');
        const scores = assertReportMatchesServed(folder, sim);
        assert.equal(scores.success_rate.value, 1, `${name}: every task passes`);
        assert.match(result.stdout, /tokens\s+[\d,]+ +\(prompt/);
        assert.match(result.stdout, /cost\s+USD \d+\.\d{4}\s+\(USD \d+\.\d{4} per passed task\)/);
        assert.match(result.stdout, /model latency per turn\s+mean/);
        const { episodes } = openRun(folder);
        const formats = new Set(episodes.flatMap((e) => e.model!.calls.map((c) => c.format)));
        if (name.startsWith('text')) {
          assert.deepEqual([...formats], ['hermes']);
          assert.equal(scores.model!.calls_by_format.hermes, scores.malformed_call_rate.denominator);
        } else assert.deepEqual([...formats], ['native']);
        if (name.startsWith('bad JSON')) {
          assert.equal(scores.malformed_call_rate.numerator, episodes.length, 'one malformed call per episode');
          assert.match(result.stdout, /malformed-call rate\s+\d+\.\d%\s+\(\d+\/\d+ attempted calls rejected before the gateway\)/);
        } else assert.equal(scores.malformed_call_rate.numerator, 0);
      } finally {
        await sim.close();
      }
    }
  });
});

test('anthropic from a profile file: the agent comes from the profile; a refusal is an agent error with its code', { timeout: 300_000 }, async () => {
  await withWork(async (work) => {
    const sim = await startAnthropicSimulation(scriptFor(behaviour('well-behaved'), plans, anthropicStep), { apiKey: 'k-ant' });
    try {
      writeFileSync(join(work, 'claude.json'), JSON.stringify({ $schema: '../schemas/agent-config.schema.json', agent: 'anthropic', base_url: sim.baseUrl, model: 'sim-claude', prices: 'prices.json', max_tokens: 512 }));
      const out = join(work, 'runs');
      const result = await runCli(['run', ...taskFiles, '--agent-config', 'claude.json', '--out', out, ...common], work, { ANTHROPIC_API_KEY: 'k-ant' });
      assert.equal(result.status, 0, result.stderr);
      const folder = runFolder(out);
      assert.equal(openRun(folder).config.agent, 'anthropic');
      const scores = assertReportMatchesServed(folder, sim);
      assert.equal(scores.success_rate.value, 1);
      assert.ok(scores.model!.cache_write_tokens > 0);
    } finally {
      await sim.close();
    }
    const refusing = await startAnthropicSimulation(scriptFor(behaviour('content filter'), plans, anthropicStep));
    try {
      const out = join(work, 'refused');
      const result = await runCli(['run', taskFiles[0]!, '--agent', 'anthropic', '--base-url', refusing.baseUrl, '--model', 'sim-claude', '--out', out, ...common], work);
      assert.equal(result.status, 0, result.stderr);
      const [episode] = openRun(runFolder(out)).episodes;
      assert.deepEqual([episode!.status, episode!.error?.kind, episode!.error?.code], ['agent_error', 'agent', 'model-content-filter']);
      assert.match(result.stdout, /Outcomes: 0 passed, 0 failed, 1 agent error, 0 infrastructure errors/);
      assert.match(result.stdout, /1x agent model-content-filter: /);
    } finally {
      await refusing.close();
    }
  });
});

test('--max-cost: no new episode once the budget is spent (exit 3, the run says so); --resume with a higher budget finishes it', { timeout: 300_000 }, async () => {
  await withWork(async (work) => {
    const sim = await startOpenAISimulation(scriptFor(behaviour('well-behaved'), plans, openAIStep));
    try {
      const out = join(work, 'runs');
      const base = ['--agent', 'openai', '--base-url', sim.baseUrl, '--model', 'sim-1'];
      const refused = await runCli(['run', ...taskFiles, ...base, '--max-cost', '1', '--out', out, ...common], work);
      assert.equal(refused.status, 2, 'no price, no cost budget');
      assert.match(refused.stderr, /a cost budget counts what a model agent spends at its model's price: .*the openai agent's spending is not priced/);
      const misplaced = await runCli(['run', ...taskFiles, '--agent', 'reference', '--temperature', '0.2', '--request-timeout', '5', '--out', out, ...common], work);
      assert.equal(misplaced.status, 2);
      assert.match(misplaced.stderr, /--temperature, --request-timeout set a model agent's behaviour: use --agent openai or anthropic/);
      assert.ok(!existsSync(out), 'nothing was run');

      const stopped = await runCli(['run', ...taskFiles, ...base, '--prices', 'prices.json', '--max-cost', '0.000001', '--concurrency', '1', '--out', out, '--sandbox', 'process', '--reporter', 'none'], work);
      assert.equal(stopped.status, 3, stopped.stderr);
      assert.match(stopped.stderr, /cost budget reached: USD \d+\.\d+ spent of --max-cost 0\.000001; \d+ episode\(s\) not started/);
      const folder = runFolder(out);
      assert.equal(openRun(folder).episodes.length, 1, 'the first episode spent the budget');
      assert.equal(openRun(folder).config.max_cost, 0.000001);

      const resumed = await runCli(['run', '--resume', folder, '--max-cost', '100', '--sandbox', 'process', '--reporter', 'none'], work);
      assert.equal(resumed.status, 0, resumed.stderr);
      assert.equal(openRun(folder).config.max_cost, 100, 'the new budget is recorded');
      const ids = openRun(folder).episodes.map((r) => r.task_id);
      assert.equal(ids.length, taskFiles.length);
      assert.equal(new Set(ids).size, taskFiles.length, 'nothing run twice');
      assertReportMatchesServed(folder, sim);
    } finally {
      await sim.close();
    }
  });
});

test('--max-tokens-per-episode: an episode that uses up its budget fails with the reason, it is not an error', { timeout: 300_000 }, async () => {
  await withWork(async (work) => {
    const sim = await startOpenAISimulation(scriptFor(behaviour('well-behaved'), plans, openAIStep));
    try {
      const out = join(work, 'runs');
      const result = await runCli(['run', taskFiles[0]!, '--agent', 'openai', '--base-url', sim.baseUrl, '--model', 'sim-1', '--max-tokens-per-episode', '1', '--out', out, ...common], work);
      assert.equal(result.status, 0, result.stderr);
      const [episode] = openRun(runFolder(out)).episodes;
      assert.deepEqual([episode!.status, episode!.error, episode!.failure?.code, episode!.model?.end], ['failed', undefined, 'token-budget', 'token-budget']);
      assert.match(episode!.failure!.message, /its budget is 1 \(max tokens per episode\)/);
      assert.match(result.stdout, /Outcomes: 0 passed, 1 failed, 0 agent errors, 0 infrastructure errors/);
      const report = readFileSync(join(runFolder(out), 'report.json'), 'utf8');
      assert.match(report, /token-budget/);
    } finally {
      await sim.close();
    }
  });
});
