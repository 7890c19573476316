/**
 * The run session in process (runner/session.ts): `startRun` returns typed events in order and ends with a
 * typed `run-finished` (`run` with scores and report files, `check` with verdicts); options that cannot make
 * a run are refused before anything is written; a check left mid-way resumes and finishes, checks.json last.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { z } from 'zod';
import { AgentError, AgentSetupError } from '../../server/src/runner/agents/agent.ts';
import { AgentOptionsError, registerAgent } from '../../server/src/runner/agents/registry.ts';
import { runToEnd, SessionError, startRun, type SessionOptions } from '../../server/src/engine/session.ts';
import { openRun, readChecks } from '../../server/src/record/run-folder.ts';
import type { RunEvent } from '../../server/src/engine/protocol.ts';
import { scratchRoots } from '../../server/src/runner/scratch.ts';
import { runCli } from '../../server/src/cli/main.ts';

const fixtures = join(__dirname, '..', 'fixtures', 'tasks');

async function common(): Promise<Pick<SessionOptions, 'registry' | 'cwd' | 'backend' | 'concurrency'>> {
  return { registry: await loadRegistry(), cwd: mkdtempSync(join(tmpdir(), 'mcpbench-session-')), backend: 'process', concurrency: 2 };
}

test('a run: run-started, the episodes, run-finished with scores and the report, all typed', { timeout: 120_000 }, async () => {
  const base = await common();
  const events: RunEvent[] = [];
  const finished = await runToEnd({ ...base, mode: 'run', tasks: [join(fixtures, 'travel')], agent: 'noop', trials: 2, seed: 3 }, (e) => events.push(e));
  const types = events.map((e) => e.type);
  assert.equal(types[0], 'run-started');
  assert.equal(types.at(-1), 'run-finished');
  assert.equal(types.filter((t) => t === 'episode-finished').length, 6);
  const started = events[0]!;
  assert.ok(started.type === 'run-started');
  assert.deepEqual([started.kind, started.episodes, started.recorded, started.agent, started.seed], ['run', 6, 0, 'noop', 3]);
  assert.equal(finished.kind, 'run');
  if (finished.kind !== 'run') return;
  assert.equal(finished.interrupted, false);
  assert.deepEqual(finished.scores.episodes, { records: 6, scored: 6, passed: 0, failed: 6, agent_errors: 0, infra_errors: 0, infra_unresolved: 0 }, 'noop passes nothing');
  assert.ok(finished.report && existsSync(finished.report.html) && existsSync(finished.report.junit) && existsSync(finished.report.json));
  // Every episode-started names the work unit its record carries.
  const unitsStarted = new Set(events.flatMap((e) => (e.type === 'episode-started' ? [e.work_unit] : [])));
  assert.deepEqual(new Set(openRun(finished.directory).episodes.map((r) => r.work_unit)), unitsStarted);
});

test('options that cannot make a run are refused before any event and before anything is written', async () => {
  const base = await common();
  const refused = async (options: SessionOptions, check: (error: unknown) => boolean) => {
    const events: RunEvent[] = [];
    await assert.rejects(async () => {
      for await (const event of startRun(options)) events.push(event);
    }, check);
    assert.deepEqual(events, []);
  };
  const tasks = [join(fixtures, 'travel')];
  await refused({ ...base, mode: 'run', tasks, agent: 'psychic' }, (e) => e instanceof AgentOptionsError && /unknown agent psychic: use reference, noop, command, image, endpoint, openai/.test(e.message));
  await refused({ ...base, mode: 'run', tasks, agent: 'command' }, (e) => e instanceof AgentOptionsError && e.option === 'command');
  await refused({ ...base, mode: 'run', tasks, agent: 'endpoint', agentOptions: { url: 'not a url' } }, (e) => e instanceof AgentOptionsError && e.option === 'url');
  await refused({ ...base, mode: 'run', tasks, agent: 'noop', perturbations: ['none', 'wild'] }, (e) => e instanceof SessionError && /wild/.test(e.message));
  await refused({ ...base, mode: 'run', tasks, agent: 'noop', paraphrase: { baseUrl: 'http://127.0.0.1:9', model: 'm' } }, (e) => e instanceof SessionError && /add heavy/.test(e.message));
  await refused({ ...base, mode: 'resume', directory: join(base.cwd, 'nowhere') }, (e) => e instanceof Error && /is not a run folder/.test(e.message));
  await refused({ ...base, mode: 'run', tasks, agent: 'openai', env: {} }, (e) => e instanceof AgentOptionsError && /no model/.test(e.message));
  await refused({ ...base, mode: 'run', tasks, agent: 'noop', maxCost: 1 }, (e) => e instanceof SessionError && /cost budget .*the noop agent's spending is not priced/.test(e.message));
  await refused({ ...base, mode: 'run', tasks, agent: 'openai', agentOptions: { model: 'm', temperature: 9 }, env: {} }, (e) => e instanceof AgentOptionsError && /--temperature/.test(e.message));
  assert.ok(!existsSync(join(base.cwd, 'runs')), 'no run folder was made');

  // The CLI names the flag of a missing agent option, and exits 2.
  const stderr: string[] = [];
  const code = await runCli(['run', tasks[0]!, '--agent', 'command', '--out', join(base.cwd, 'runs'), '--sandbox', 'process'], { stdout: () => undefined, stderr: (t) => stderr.push(t), cwd: base.cwd });
  assert.equal(code, 2);
  assert.match(stderr.join(''), /the command agent option command: .*\(set it with --agent-command\)/);
});

test('a check left mid-way resumes as a check: the same verdicts, checks.json written once it is complete', { timeout: 300_000 }, async () => {
  const base = await common();
  const task = join(fixtures, 'travel', 'travel-confirm-held-001.json');
  let directory: string | undefined;
  let finishedEpisodes = 0;
  // Leaving the loop after two episodes stops the session (as an interrupted process would).
  for await (const event of startRun({ ...base, mode: 'check', tasks: [task], out: join(base.cwd, 'runs') })) {
    if (event.type === 'run-started') directory = event.directory;
    if (event.type === 'episode-finished' && ++finishedEpisodes === 2) break;
  }
  assert.ok(directory);
  assert.equal(readChecks(directory), undefined, 'no verdicts from a check that did not finish');
  const recorded = openRun(directory).episodes.length;
  assert.ok(recorded >= 2);

  const events: RunEvent[] = [];
  const finished = await runToEnd({ ...base, mode: 'resume', directory }, (e) => events.push(e));
  const started = events.find((e) => e.type === 'run-started');
  assert.ok(started?.type === 'run-started' && started.kind === 'check' && started.recorded === recorded, 'the resumed check skips what is recorded');
  assert.equal(finished.kind, 'check');
  if (finished.kind !== 'check') return;
  assert.deepEqual(finished.checks.map((c) => [c.task_id, c.ok, c.problems]), [['travel-confirm-held-001', true, []]]);
  assert.deepEqual(readChecks(directory), finished.checks);
  assert.deepEqual(scratchRoots().flatMap((root) => readdirSync(root)).filter((n) => n.startsWith(`mcpbench-${openRun(directory).config.run_id}-`)), [], 'no sandbox left');
});

test('a model agent records its resolved settings (never the key) and a resume creates it from them alone', async () => {
  const base = await common();
  const prices = join(base.cwd, 'prices.json');
  writeFileSync(prices, JSON.stringify({ currency: 'EUR', models: { 'sim-*': { input: 1, output: 2 } } }));
  const events: RunEvent[] = [];
  const options: SessionOptions = {
    ...base,
    mode: 'run',
    tasks: [join(fixtures, 'travel', 'travel-confirm-held-001.json')],
    agent: 'anthropic',
    // Nothing answers on port 9: the episode is an agent error, which is all this test needs.
    agentOptions: { base_url: 'http://127.0.0.1:9/v1', model: 'sim-claude', temperature: 0.4, prices: 'prices.json', max_retries: 0 },
    env: { ANTHROPIC_API_KEY: 'sk-ant-secret', MCPBENCH_AGENT_MAX_TURNS: '7' },
    seed: 11,
    maxCost: 3,
  };
  const finished = await runToEnd(options, (e) => events.push(e));
  const run = openRun(finished.directory);
  assert.deepEqual(
    [run.config.agent, run.config.max_cost, run.config.agent_options.model, run.config.agent_options.temperature, run.config.agent_options.max_turns, run.config.agent_options.seed, run.config.agent_options.api_key_env],
    ['anthropic', 3, 'sim-claude', 0.4, 7, 11, 'ANTHROPIC_API_KEY'],
    'flags over the environment over the defaults; the run seed is the sampling seed',
  );
  assert.deepEqual(run.config.agent_options.prices, { file: prices, currency: 'EUR', model: { input: 1, output: 2 } });
  assert.ok(!readFileSync(join(finished.directory, 'run.json'), 'utf8').includes('sk-ant-secret'));
  const [episode] = run.episodes;
  assert.deepEqual([episode!.status, episode!.error?.kind, episode!.error?.code, episode!.error?.attempts], ['agent_error', 'agent', 'model-unreachable', 1]);
  assert.equal(episode!.model?.model, 'sim-claude');
  // A resume reads the recorded settings, whatever the environment now says.
  const resumed = await runToEnd({ ...base, mode: 'resume', directory: finished.directory, env: { MCPBENCH_AGENT_MAX_TURNS: '1' }, maxCost: 4 });
  assert.equal(resumed.kind, 'run');
  assert.equal(openRun(finished.directory).config.agent_options.max_turns, 7);
  assert.equal(openRun(finished.directory).config.max_cost, 4);
});

test('what a run is warned of is recorded in run.json: its options (prepare), its creation, and a resume\'s new warnings added once', { timeout: 120_000 }, async () => {
  registerAgent({
    name: 'test-warns',
    description: 'warns when prepared, and when created unconfined',
    options: z.object({ level: z.string() }),
    prepare: (input, { warn }) => {
      warn('no price for this model: its cost is unknown');
      return { ...input, level: 'prepared' };
    },
    create: (_options, { env, warn }) => {
      if (env.TEST_UNCONFINED) warn('the agent is not confined');
      return { name: 'test-warns', callsNoTools: true, run: async () => ({}) };
    },
  });
  const base = await common();
  const tasks = [join(fixtures, 'travel', 'travel-confirm-held-001.json')];
  const events: RunEvent[] = [];
  const finished = await runToEnd({ ...base, mode: 'run', tasks, agent: 'test-warns', env: {} }, (e) => events.push(e));
  const notices = (list: RunEvent[]) => list.flatMap((e) => (e.type === 'notice' && e.level === 'warning' ? [e.message] : []));
  assert.deepEqual(notices(events), ['no price for this model: its cost is unknown']);
  assert.deepEqual(openRun(finished.directory).config.agent_options, { level: 'prepared' }, 'the prepared options are recorded');
  assert.deepEqual(openRun(finished.directory).config.warnings, ['no price for this model: its cost is unknown']);
  // Resumed where its creation warns of something new: shown, and added to the record (atomically rewritten).
  const resumedEvents: RunEvent[] = [];
  await runToEnd({ ...base, mode: 'resume', directory: finished.directory, env: { TEST_UNCONFINED: '1' } }, (e) => resumedEvents.push(e));
  assert.deepEqual(notices(resumedEvents), ['the agent is not confined']);
  assert.deepEqual(openRun(finished.directory).config.warnings, ['no price for this model: its cost is unknown', 'the agent is not confined']);
  // Once recorded, never twice; the options are never prepared again.
  await runToEnd({ ...base, mode: 'resume', directory: finished.directory, env: { TEST_UNCONFINED: '1' } });
  const record = openRun(finished.directory).config;
  assert.deepEqual(record.warnings, ['no price for this model: its cost is unknown', 'the agent is not confined']);
  assert.deepEqual(record.agent_options, { level: 'prepared' });
});

test('a gateway an in-process agent cannot reach is an infrastructure error (retried); a token budget spent is a failure with its reason', { timeout: 120_000 }, async () => {
  registerAgent({
    name: 'test-no-gateway',
    description: 'cannot reach the gateway',
    options: z.object({}),
    create: () => ({
      name: 'test-no-gateway',
      run: async () => {
        throw new AgentError('gateway-unreachable', 'could not connect to the gateway at http://127.0.0.1:9/mcp: ECONNREFUSED');
      },
    }),
  });
  registerAgent({
    name: 'test-budget',
    description: 'runs out of tokens',
    options: z.object({}),
    create: () => ({ name: 'test-budget', run: async () => ({ stopped: { code: 'token-budget', message: 'the episode used 1200 tokens, its budget is 1000' } }) }),
  });
  const base = await common();
  const tasks = [join(fixtures, 'travel', 'travel-confirm-held-001.json')];
  const unreachable = await runToEnd({ ...base, mode: 'run', tasks, agent: 'test-no-gateway', maxInfraRetries: 1 });
  const records = openRun(unreachable.directory).episodes;
  assert.deepEqual(records.map((r) => [r.status, r.error?.kind, r.error?.code, r.attempt]), [['infra_error', 'infra', 'gateway-unreachable', 1], ['infra_error', 'infra', 'gateway-unreachable', 2]]);
  assert.ok(unreachable.kind === 'run' && unreachable.scores.episodes.scored === 0, 'never scored');

  const budget = await runToEnd({ ...base, mode: 'run', tasks, agent: 'test-budget' });
  const [stopped] = openRun(budget.directory).episodes;
  assert.deepEqual([stopped!.status, stopped!.passed, stopped!.error, stopped!.failure?.code], ['failed', false, undefined, 'token-budget']);
  assert.ok(budget.kind === 'run');
  if (budget.kind !== 'run') return;
  assert.deepEqual([budget.scores.episodes.failed, budget.scores.episodes.agent_errors], [1, 0]);
  const report = JSON.parse(readFileSync(budget.report!.json, 'utf8'));
  assert.equal(report.episodes[0].reason, 'token-budget: the episode used 1200 tokens, its budget is 1000');
  assert.match(readFileSync(budget.report!.junit, 'utf8'), /<failure message="token-budget: the episode used 1200 tokens, its budget is 1000" type="token-budget">/);
});

test("an episode's timeout is the agent's error whatever it threw as it was stopped, except a sandbox that never came up (ours)", { timeout: 120_000 }, async () => {
  // Both agents wait until the episode stops them, then throw what an agent might as it is cut off.
  const stoppedWith = (name: string, error: () => Error) =>
    registerAgent({
      name,
      description: 'stopped by the timeout',
      options: z.object({}),
      create: () => ({ name, run: ({ signal }) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(error()), { once: true })) }),
    });
  stoppedWith('test-cut-off', () => new AgentError('gateway-unreachable', 'could not connect to the gateway: the request was aborted'));
  stoppedWith('test-never-up', () => new AgentSetupError("the command agent's podman sandbox had not come up when the episode ended"));
  const base = await common();
  const task = JSON.parse(readFileSync(join(fixtures, 'travel', 'travel-confirm-held-001.json'), 'utf8'));
  const file = join(base.cwd, 'quick.json');
  writeFileSync(file, JSON.stringify({ ...task, timeout_s: 1 }));

  const cut = await runToEnd({ ...base, mode: 'run', tasks: [file], agent: 'test-cut-off' });
  const [timedOut] = openRun(cut.directory).episodes;
  assert.deepEqual([timedOut!.status, timedOut!.error?.kind, timedOut!.error?.code, timedOut!.error?.message], ['agent_error', 'agent', 'agent-timeout', 'the agent did not finish within 1 s']);

  const neverUp = await runToEnd({ ...base, mode: 'run', tasks: [file], agent: 'test-never-up', maxInfraRetries: 1 });
  const records = openRun(neverUp.directory).episodes;
  assert.deepEqual(records.map((r) => [r.status, r.error?.kind, r.error?.code]), [['infra_error', 'infra', 'agent-sandbox'], ['infra_error', 'infra', 'agent-sandbox']], 'retried, ours');
  assert.ok(neverUp.kind === 'run' && neverUp.scores.episodes.scored === 0, 'never scored');
});

test('stopped after its last episode, a run or a check is complete, not interrupted: the report and checks.json are written', { timeout: 300_000 }, async () => {
  const base = await common();
  const task = join(fixtures, 'travel', 'travel-confirm-held-001.json');
  for (const mode of ['run', 'check'] as const) {
    const stop = new AbortController();
    let planned = 0;
    let finishedEpisodes = 0;
    let finished: RunEvent | undefined;
    const options: SessionOptions = mode === 'run' ? { ...base, mode, tasks: [task], agent: 'reference', signal: stop.signal } : { ...base, mode, tasks: [task], signal: stop.signal };
    for await (const event of startRun(options)) {
      if (event.type === 'run-started') planned = event.episodes;
      // The user stops the run as its last episode is recorded (Ctrl-C, Stop in the editor).
      if (event.type === 'episode-finished' && ++finishedEpisodes === planned) stop.abort(new Error('SIGINT'));
      if (event.type === 'run-finished') finished = event;
    }
    assert.ok(stop.signal.aborted, `${mode}: the stop came`);
    assert.ok(finished?.type === 'run-finished' && !finished.interrupted, `${mode}: nothing was cut short`);
    if (finished.kind === 'run') assert.ok(finished.report && existsSync(finished.report.html), 'the report is written');
    else assert.deepEqual(readChecks(finished.directory), finished.checks, 'checks.json is written');
  }
});
