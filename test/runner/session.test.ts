/**
 * The run session in process (runner/session.ts): `startRun` returns typed events in order and ends with a
 * typed `run-finished` (`run` with scores and report files, `check` with verdicts); options that cannot make
 * a run are refused before anything is written; a check left mid-way resumes and finishes, checks.json last.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { AgentOptionsError } from '../../server/src/runner/agents/registry.ts';
import { runToEnd, SessionError, startRun, type SessionOptions } from '../../server/src/runner/session.ts';
import { openRun, readChecks } from '../../server/src/runner/store.ts';
import type { RunEvent } from '../../server/src/runner/types.ts';
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
  await refused({ ...base, mode: 'run', tasks, agent: 'psychic' }, (e) => e instanceof AgentOptionsError && /unknown agent psychic: use reference, noop, command, endpoint, openai/.test(e.message));
  await refused({ ...base, mode: 'run', tasks, agent: 'command' }, (e) => e instanceof AgentOptionsError && e.option === 'command');
  await refused({ ...base, mode: 'run', tasks, agent: 'endpoint', agentOptions: { url: 'not a url' } }, (e) => e instanceof AgentOptionsError && e.option === 'url');
  await refused({ ...base, mode: 'run', tasks, agent: 'noop', perturbations: ['none', 'wild'] }, (e) => e instanceof SessionError && /wild/.test(e.message));
  await refused({ ...base, mode: 'run', tasks, agent: 'noop', paraphrase: { baseUrl: 'http://127.0.0.1:9', model: 'm' } }, (e) => e instanceof SessionError && /add heavy/.test(e.message));
  await refused({ ...base, mode: 'resume', directory: join(base.cwd, 'nowhere') }, (e) => e instanceof Error && /is not a run folder/.test(e.message));
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
  assert.deepEqual(readdirSync(tmpdir()).filter((n) => n.startsWith(`mcpbench-${openRun(directory).config.run_id}-`)), [], 'no sandbox left');
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
