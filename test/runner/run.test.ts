/**
 * `mcpbench run` and `check` as a user runs them (the built CLI): a run killed with SIGKILL mid-way and
 * resumed ends with every episode recorded exactly once; Ctrl-C stops cleanly and leaves no server process;
 * the same seed gives the same trace; check catches a broken task; jsonl events carry the whole story.
 * Perturbed runs (`--perturb` levels, the optional `--paraphrase`) and sealed sets read in memory.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { perturbGoal, perturbGoalDetailed, type PerturbationLevel } from '../../server/src/runner/perturb.ts';
import { readTaskSources, seal } from '../../server/src/tasks/seal.ts';
import { openRun } from '../../server/src/record/run-folder.ts';
import type {  RunEvent } from '../../server/src/engine/protocol.ts';
import { scratchRoot, scratchRoots } from '../../server/src/runner/scratch.ts';
import { collectTaskFiles } from '../../server/src/tasks/files.ts';
import type { Task } from '../../server/src/tasks/model.ts';
import { startOpenAISimulation } from '../simulations/openai-simulation.ts';
import type { EpisodeRecord } from '../../server/src/record/schema.ts';

const root = join(__dirname, '..', '..');
const cli = join(root, 'dist', 'cli.js');
const tasks = join(root, 'test', 'fixtures', 'tasks');

function run(args: string[], cwd: string) {
  return spawnSync(process.execPath, [cli, ...args], { cwd, encoding: 'utf8', timeout: 300_000 });
}

function runFolder(out: string): string {
  const [folder] = readdirSync(out).filter((f) => f.startsWith('run-') || f.startsWith('check-'));
  assert.ok(folder, `a run folder in ${out}`);
  return join(out, folder);
}

/** Processes still alive whose command line names a sandbox of the run (`marker`: its sandbox folders' prefix). */
function strayServers(marker: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
      if (cmd.includes(marker)) found.push(`${pid}: ${cmd}`);
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}

test('SIGKILL mid-run, a damaged line, then --resume: every episode recorded exactly once, the damage quarantined, leftover sandboxes removed', { timeout: 300_000 }, async () => {
  const work = mkdtempSync(join(tmpdir(), 'mcpbench-kill-'));
  const out = join(work, 'runs');
  const taskDirs = ['calendar', 'travel', 'shop'].map((ns) => join(tasks, ns));
  const args = ['run', ...taskDirs, '--trials', '2', '--out', out, '--reporter', 'jsonl', '--no-report', '--sandbox', 'process'];
  const child = spawn(process.execPath, [cli, ...args], { cwd: work, stdio: ['ignore', 'pipe', 'pipe'] });
  // Kill it after the third finished episode: mid-run, with episodes in flight.
  let finished = 0;
  let buffer = '';
  await new Promise<void>((resolve) => {
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop()!;
      for (const line of lines) if (JSON.parse(line).type === 'episode-finished' && ++finished === 3) child.kill('SIGKILL');
    });
    child.on('exit', () => resolve());
  });
  const folder = runFolder(out);
  const before = [...openRun(folder).episodes];
  assert.ok(before.length >= 3 && before.length < 18, `killed mid-run (${before.length} recorded)`);
  // A damaged line in the middle of the journal (a disk error, a bad edit): resume must keep what follows it.
  const journal = readFileSync(join(folder, 'episodes.jsonl'), 'utf8').split('\n');
  journal.splice(1, 0, '{"work_unit": "damaged');
  writeFileSync(join(folder, 'episodes.jsonl'), journal.join('\n'));
  // Sandbox folders the killed run left where sandboxes are made (as an episode in flight does), and one in
  // the temporary folder, where earlier versions made them.
  const runId = JSON.parse(readFileSync(join(folder, 'run.json'), 'utf8')).run_id as string;
  const leftovers = [join(scratchRoot(), `mcpbench-${runId}-Xy12Z9`), join(tmpdir(), `mcpbench-${runId}-Ab34C5`)];
  for (const leftover of leftovers) mkdirSync(join(leftover, 'travel'), { recursive: true });

  const resumed = run(['run', '--resume', folder, '--reporter', 'none', '--sandbox', 'process'], work);
  assert.equal(resumed.status, 0, resumed.stderr);
  assert.match(resumed.stderr, /\d damaged line\(s\) of .*episodes\.jsonl moved to the quarantine file/);
  assert.match(resumed.stderr, /removed \d+ sandbox folder\(s\) the interrupted run left behind/);
  assert.deepEqual(leftovers.filter((leftover) => existsSync(leftover)), [], 'leftover sandboxes are removed');
  assert.deepEqual(scratchRoots().flatMap((root) => readdirSync(root)).filter((name) => name.startsWith(`mcpbench-${runId}-`)), [], 'and none of the resumed run remain');
  assert.ok(readFileSync(join(folder, 'episodes.quarantine.jsonl'), 'utf8').startsWith('{"work_unit": "damaged\n'), 'the damaged line, as it was');
  const after = [...openRun(folder).episodes].filter((r) => r.status !== 'infra_error');
  const ids = after.map((r) => `${r.task_id}|${r.trial}`);
  assert.equal(ids.length, 18, '9 tasks x 2 trials');
  assert.equal(new Set(ids).size, 18, 'no episode counted twice');
  for (const r of before) assert.ok(after.some((a) => a.task_id === r.task_id && a.trial === r.trial && a.started_at === r.started_at), 'episodes recorded before the kill are kept as they were');
  assert.match(resumed.stdout, /success rate\s+100\.0%/);
});

test('Ctrl-C stops the run cleanly and leaves no server process behind', { timeout: 120_000 }, async () => {
  const work = mkdtempSync(join(tmpdir(), 'mcpbench-sigint-'));
  const out = join(work, 'runs');
  // A fault profile with long latencies keeps episodes in flight when the signal comes.
  writeFileSync(join(work, 'slow.json'), JSON.stringify({ name: 'slow', failure_rate: 1, fault_weights: { HighLatency: 1 } }));
  const child = spawn(process.execPath, [cli, 'run', join(tasks, 'travel'), '--faults', join(work, 'slow.json'), '--concurrency', '2', '--out', out, '--reporter', 'jsonl', '--sandbox', 'process'], { cwd: work, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  await new Promise<void>((resolve) => child.stdout.on('data', (c: Buffer) => c.toString().includes('"type":"call"') && resolve()));
  // Every server of this run (those of its episodes and those its pool started ahead) runs in a sandbox
  // folder named after the run, and its command line says so.
  const runId = JSON.parse(readFileSync(join(runFolder(out), 'run.json'), 'utf8')).run_id as string;
  const sandboxMarker = `mcpbench-${runId}-`;
  assert.ok(strayServers(sandboxMarker).length > 0, 'the run has servers running when the signal comes');
  child.kill('SIGINT');
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  assert.equal(code, 130);
  assert.match(stderr, /SIGINT: stopping; finished episodes are saved/);
  await new Promise((r) => setTimeout(r, 500));
  assert.deepEqual(strayServers(sandboxMarker), []);
  const folder = runFolder(out);
  for (const r of [...openRun(folder).episodes]) assert.ok(['passed', 'failed'].includes(r.status), 'no half-recorded episode');
});

test('the same seed gives the same trace; jsonl events tell the whole run', { timeout: 120_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'mcpbench-seed-'));
  const traces: string[] = [];
  for (const n of [1, 2]) {
    const out = join(work, `runs${n}`);
    // SchemaDrift answers at once (renamed fields); at this rate every episode meets some.
    const result = run(['run', join(tasks, 'travel'), '--faults', 'drift-only', '--fault-rate', '0.6', '--retry', '--seed', '7', '--out', out, '--reporter', 'jsonl', '--no-report', '--sandbox', 'process'], work);
    assert.equal(result.status, 0, result.stderr);
    const events = result.stdout.trim().split('\n').map((l) => JSON.parse(l) as RunEvent);
    assert.equal(events[0]!.type, 'run-started');
    assert.equal(events.at(-1)!.type, 'run-finished');
    const finished = events.filter((e): e is Extract<RunEvent, { type: 'episode-finished' }> => e.type === 'episode-finished');
    assert.equal(finished.length, 3);
    const calls = events.filter((e) => e.type === 'call').length;
    assert.equal(calls, finished.reduce((n, e) => n + e.result.calls.length, 0), 'one call event per recorded call');
    const results = [...openRun(runFolder(out)).episodes].sort((a, b) => a.task_id.localeCompare(b.task_id));
    traces.push(JSON.stringify(results.map((r: EpisodeRecord) => [r.task_id, r.status, r.calls.map((c) => [c.tool, c.status, c.fault?.type, c.arguments, c.result])])));
  }
  assert.equal(traces[0], traces[1]);
  assert.match(traces[0]!, /"SchemaDrift"/, 'faults were injected');
});

test('failed episodes carry their failure mode in the jsonl events: noop and counterexamples of a check', { timeout: 180_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'mcpbench-modes-'));
  const dir = join(work, 'tasks');
  mkdirSync(dir);
  cpSync(join(tasks, 'travel', 'travel-confirm-held-001.json'), join(dir, 'held.json'));
  const result = run(['check', dir, '--out', join(work, 'runs'), '--reporter', 'jsonl', '--sandbox', 'process'], work);
  assert.equal(result.status, 0, result.stderr);
  const finished = result.stdout.trim().split('\n').map((l) => JSON.parse(l) as RunEvent).filter((e): e is Extract<RunEvent, { type: 'episode-finished' }> => e.type === 'episode-finished');
  const failed = finished.filter((e) => e.result.status === 'failed');
  assert.ok(failed.length >= 2, 'noop and the counterexample fail');
  for (const e of failed) assert.ok(e.failure && e.failure.evidence.detail, `${e.result.variant} is diagnosed`);
  assert.equal(failed.find((e) => e.result.variant === 'noop')!.failure!.mode, 'no_tool_use');
  assert.ok(failed.filter((e) => e.result.variant.startsWith('counterexample')).every((e) => e.failure!.mode !== 'unknown'), 'counterexamples get a specific mode');
  for (const e of finished.filter((e) => e.result.status === 'passed')) assert.equal(e.failure, null);
});

test('check fails a task whose predicate holds without any action, and a counterexample that passes', { timeout: 120_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'mcpbench-check-'));
  const dir = join(work, 'tasks');
  mkdirSync(dir);
  const task = JSON.parse(readFileSync(join(tasks, 'travel', 'travel-cheapest-flight-001.json'), 'utf8'));
  // The counterexample books the wrong flight; a predicate that only asks for "some confirmed reservation for Bob" lets it pass.
  task.success_predicate = { 'travel.reservationExists': { passenger: 'Bob', status: 'confirmed' } };
  writeFileSync(join(dir, 'loose.json'), JSON.stringify(task, null, 2));
  cpSync(join(tasks, 'travel', 'travel-confirm-held-001.json'), join(dir, 'good.json'));
  const result = run(['check', dir, '--out', join(work, 'runs'), '--reporter', 'none', '--sandbox', 'process'], work);
  assert.equal(result.status, 1, result.stderr);
  assert.match(result.stdout, /^FAIL travel-cheapest-flight-001/m);
  assert.match(result.stdout, /counterexample 1 passes: the predicate is not specific enough/);
  assert.match(result.stdout, /^ok {3}travel-confirm-held-001 .*recovers under 7\/7 fault types/m);
  assert.ok(existsSync(join(runFolder(join(work, 'runs')), 'episodes.jsonl')));
});

// ---- Perturbed goals -------------------------------------------------------------------------------------

/** Runs the CLI without blocking this process (a scripted endpoint in it must keep answering). */
function runAsync(args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('exit', (status) => resolve({ status, stdout, stderr }));
  });
}

const LEVELS = ['none', 'light', 'medium', 'heavy'] as const;
const readTask = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Task;

test('run --perturb none,light,medium,heavy: the seed fixes every goal, the reference agent passes at every level, journal and report carry the level', { timeout: 180_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'mcpbench-perturb-'));
  const sets = [join(tasks, 'calendar'), join(tasks, 'travel')];
  const byFile = new Map(collectTaskFiles(sets).map((file) => [readTask(file).id, readTask(file)]));
  const goals: string[] = [];
  for (const n of [1, 2]) {
    const out = join(work, `runs${n}`);
    const result = run(['run', ...sets, '--perturb', LEVELS.join(','), '--seed', '5', '--out', out, '--reporter', 'jsonl', '--sandbox', 'process'], work);
    assert.equal(result.status, 0, result.stderr);
    const folder = runFolder(out);
    const results = [...openRun(folder).episodes];
    assert.equal(results.length, byFile.size * LEVELS.length, 'every task once per level');
    for (const r of results) {
      assert.equal(r.status, 'passed', `${r.task_id} at ${r.perturbation}: end-state equivalence, the predicate still holds`);
      const task = byFile.get(r.task_id)!;
      if (r.perturbation === 'none') {
        assert.equal(r.goal, undefined, 'the task goal itself is not recorded again');
        continue;
      }
      // The goal shown is the perturbation of (task, level, seed, trial), recorded with what was done.
      assert.equal(r.goal, perturbGoal(task, r.perturbation as PerturbationLevel, 5, r.trial));
      assert.deepEqual(r.perturbed?.applied, perturbGoalDetailed(task, r.perturbation as PerturbationLevel, 5, r.trial).applied);
      if (r.perturbation === 'heavy') assert.notEqual(r.goal, task.goal);
    }
    const events = result.stdout.trim().split('\n').map((l) => JSON.parse(l) as RunEvent);
    const started = events.filter((e): e is Extract<RunEvent, { type: 'episode-started' }> => e.type === 'episode-started');
    assert.ok(started.some((e) => e.key.perturbation === 'heavy' && typeof e.goal === 'string'), 'the editor sees the goal shown as the episode starts');
    goals.push(JSON.stringify(results.map((r) => [r.task_id, r.perturbation, r.goal ?? null]).sort()));

    // The run's configuration, the report's reliability surface, JUnit and the HTML trace carry the levels.
    assert.deepEqual(JSON.parse(readFileSync(join(folder, 'run.json'), 'utf8')).perturbations, [...LEVELS]);
    const report = JSON.parse(readFileSync(join(folder, 'report.json'), 'utf8'));
    const cells = report.scores.surface.filter((c: { k: number }) => c.k === 1);
    assert.deepEqual(cells.map((c: { perturbation: string }) => c.perturbation).sort(), [...LEVELS].sort());
    for (const cell of cells) assert.deepEqual([cell.pass_k, cell.tasks], [1, byFile.size], JSON.stringify(cell));
    assert.match(readFileSync(join(folder, 'junit.xml'), 'utf8'), /\[perturbation heavy\]/);
    assert.match(readFileSync(join(folder, 'report.html'), 'utf8'), /Today is /, 'the heavy goals are in the report');
    if (n === 1) {
      const text = run(['report', folder], work);
      assert.equal(text.status, 0, text.stderr);
      assert.match(text.stdout, /reliability surface/);
      assert.match(text.stdout, /^\s+heavy\s+none\s+100\.0%/m);
    }
  }
  assert.equal(goals[0], goals[1], 'the same seed shows the same goals');
  const other = byFile.get('travel-cheapest-flight-001')!;
  assert.notEqual(perturbGoal(other, 'heavy', 6, 0), perturbGoal(other, 'heavy', 5, 0), 'another seed, another goal');
});

test('--perturb refuses an unknown level, and --paraphrase without heavy or an endpoint (exit 2)', { timeout: 60_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'mcpbench-perturb-usage-'));
  const env = { ...process.env, MCPBENCH_OPENAI_BASE_URL: '', MCPBENCH_OPENAI_MODEL: '', MCPBENCH_PARAPHRASE_BASE_URL: '', MCPBENCH_PARAPHRASE_MODEL: '' };
  const cases: [string[], RegExp][] = [
    [['--perturb', 'none,wild'], /--perturb none,wild: use none, light, medium, heavy/],
    [['--perturb', 'light', '--paraphrase'], /add heavy to --perturb/],
    [['--perturb', 'heavy', '--paraphrase'], /--paraphrase needs an OpenAI-compatible base URL/],
    [['--perturb', 'heavy', '--paraphrase-model', 'm'], /take effect with --paraphrase/],
  ];
  for (const [flags, message] of cases) {
    const result = spawnSync(process.execPath, [cli, 'run', join(tasks, 'travel'), ...flags, '--out', join(work, 'runs'), '--sandbox', 'process'], { cwd: work, encoding: 'utf8', env });
    assert.equal(result.status, 2, `${flags.join(' ')}: ${result.stderr}`);
    assert.match(result.stderr, message);
  }
  assert.ok(!existsSync(join(work, 'runs')), 'nothing was started');
});

test('--paraphrase sends heavy goals through an OpenAI-compatible endpoint; a paraphrase that drops a value is refused', { timeout: 120_000 }, async () => {
  const work = mkdtempSync(join(tmpdir(), 'mcpbench-paraphrase-'));
  const dir = join(work, 'tasks');
  mkdirSync(dir);
  for (const name of ['travel-cheapest-flight-001', 'travel-confirm-held-001']) cpSync(join(tasks, 'travel', `${name}.json`), join(dir, `${name}.json`));
  // A faithful rewording of whatever it is given, except for the confirm task: that one loses its values.
  const server = await startOpenAISimulation((_index, body) => {
    const goal = String(body.messages.at(-1).content);
    return { message: { content: goal.includes('IB-310') ? 'Please confirm the held flight for Alice.' : `In other words: ${goal}` } };
  });
  try {
    const env = { ...process.env, MCPBENCH_PARAPHRASE_API_KEY: 'k-paraphrase' };
    const args = ['run', dir, '--perturb', 'none,heavy', '--paraphrase', '--paraphrase-base-url', server.baseUrl, '--paraphrase-model', 'local-paraphraser', '--out', join(work, 'runs'), '--reporter', 'none', '--no-report', '--sandbox', 'process'];
    const result = await runAsync(args, work, env);
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stderr, /paraphrase \(local-paraphraser\): 1 of 2 heavy goal\(s\) paraphrased/);
    assert.equal(server.requests.length, 2, 'asked once per heavy (task, trial), never at level none');
    assert.equal(server.requests[0]!.headers.authorization, 'Bearer k-paraphrase');
    assert.equal(server.requests[0]!.body.model, 'local-paraphraser');

    const folder = runFolder(join(work, 'runs'));
    const config = JSON.parse(readFileSync(join(folder, 'run.json'), 'utf8'));
    assert.deepEqual(config.paraphrase, { baseUrl: server.baseUrl, model: 'local-paraphraser' });
    assert.doesNotMatch(readFileSync(join(folder, 'run.json'), 'utf8'), /k-paraphrase/, 'the key is never recorded');
    const results = [...openRun(folder).episodes];
    assert.equal(results.length, 4);
    for (const r of results) assert.equal(r.status, 'passed', `${r.task_id} ${r.perturbation}`);
    const heavy = (id: string) => results.find((r) => r.task_id === id && r.perturbation === 'heavy')!;
    const flight = heavy('travel-cheapest-flight-001');
    const flightTask = readTask(join(dir, 'travel-cheapest-flight-001.json'));
    assert.equal(flight.goal, `In other words: ${perturbGoal(flightTask, 'heavy', 1, 0)}`);
    assert.deepEqual(flight.perturbed?.paraphrase, { paraphrased: true, model: 'local-paraphraser' });
    const held = heavy('travel-confirm-held-001');
    assert.equal(held.goal, perturbGoal(readTask(join(dir, 'travel-confirm-held-001.json')), 'heavy', 1, 0), 'the deterministic goal is kept');
    assert.equal(held.perturbed?.paraphrase?.paraphrased, false);
    assert.match(held.perturbed?.paraphrase?.error ?? '', /dropped .*IB-310/);
  } finally {
    await server.close();
  }
});

// ---- Sealed sets -----------------------------------------------------------------------------------------

/** Every file under `dir` (recursively) whose text holds `needle`. */
function filesHolding(dir: string, needle: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    if (readFileSync(path, 'utf8').includes(needle)) found.push(path);
  }
  return found;
}

test('run and check read a sealed set in memory; a wrong or missing key is a usage error; a killed perturbed run over it resumes', { timeout: 300_000 }, async () => {
  const work = mkdtempSync(join(tmpdir(), 'mcpbench-sealed-run-'));
  const setDir = join(mkdtempSync(join(tmpdir(), 'mcpbench-sealed-src-')), 'private');
  for (const ns of ['travel', 'shop']) cpSync(join(tasks, ns), join(setDir, 'tasks', ns), { recursive: true });
  const key = randomBytes(32).toString('hex');
  const sealedFile = join(work, 'private.sealed.json');
  seal(setDir, key, { out: sealedFile });
  const withKey = { ...process.env, MCPBENCH_SET_KEY: key };
  const out = join(work, 'runs');

  // A wrong key and a missing key: exit 2 with a message that says what to do, nothing run.
  for (const [env, message] of [
    [{ ...process.env, MCPBENCH_SET_KEY: randomBytes(32).toString('hex') }, /the key is wrong or the file was changed/],
    [{ ...process.env, MCPBENCH_SET_KEY: '' }, /private\.sealed\.json is a sealed set: set MCPBENCH_SET_KEY/],
  ] as const) {
    for (const command of ['run', 'check']) {
      const result = spawnSync(process.execPath, [cli, command, sealedFile, '--out', out, '--sandbox', 'process'], { cwd: work, encoding: 'utf8', env });
      assert.equal(result.status, 2, `${command}: ${result.stderr}`);
      assert.match(result.stderr, message);
    }
  }
  assert.ok(!existsSync(out), 'nothing was run');

  const checked = spawnSync(process.execPath, [cli, 'check', sealedFile, '--out', out, '--reporter', 'none', '--sandbox', 'process'], { cwd: work, encoding: 'utf8', env: withKey, timeout: 240_000 });
  assert.equal(checked.status, 0, checked.stderr + checked.stdout);
  assert.match(checked.stdout, /^ok {3}travel-confirm-held-001 .*private\.sealed\.json#tasks\/travel\/travel-confirm-held-001\.json/m);
  assert.match(checked.stdout, /6 tasks checked: 6 ok, 0 failing/);

  // A perturbed run over the sealed set, killed after its third episode, then resumed.
  const child = spawn(process.execPath, [cli, 'run', sealedFile, '--perturb', 'none,medium', '--out', out, '--reporter', 'jsonl', '--no-report', '--sandbox', 'process'], { cwd: work, env: withKey, stdio: ['ignore', 'pipe', 'pipe'] });
  let finished = 0;
  let buffer = '';
  await new Promise<void>((resolve) => {
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop()!;
      for (const line of lines) if (JSON.parse(line).type === 'episode-finished' && ++finished === 3) child.kill('SIGKILL');
    });
    child.on('exit', () => resolve());
  });
  const folder = readdirSync(out).filter((f) => f.startsWith('run-')).map((f) => join(out, f))[0]!;
  const before = [...openRun(folder).episodes];
  assert.ok(before.length >= 3 && before.length < 12, `killed mid-run (${before.length} recorded)`);
  const config = JSON.parse(readFileSync(join(folder, 'run.json'), 'utf8'));
  assert.ok(config.task_files.every((f: string) => f.startsWith(`${sealedFile}#tasks/`)), 'the journal names tasks inside the sealed set');

  const noKey = spawnSync(process.execPath, [cli, 'run', '--resume', folder, '--sandbox', 'process'], { cwd: work, encoding: 'utf8', env: { ...process.env, MCPBENCH_SET_KEY: '' } });
  assert.equal(noKey.status, 2, 'resuming needs the key too');
  const resumed = spawnSync(process.execPath, [cli, 'run', '--resume', folder, '--reporter', 'none', '--sandbox', 'process'], { cwd: work, encoding: 'utf8', env: withKey, timeout: 240_000 });
  assert.equal(resumed.status, 0, resumed.stderr);
  const after = [...openRun(folder).episodes].filter((r) => r.status !== 'infra_error');
  const ids = after.map((r) => `${r.task_id}|${r.perturbation}|${r.trial}`);
  assert.equal(ids.length, 12, '6 tasks x 2 levels');
  assert.equal(new Set(ids).size, 12, 'no episode counted twice');
  assert.ok(after.every((r) => r.status === 'passed'));
  for (const r of after.filter((r) => r.perturbation === 'medium')) {
    const task = JSON.parse(readTaskSources([`${sealedFile}#tasks/${r.namespaces[0]}/${r.task_id}.json`], () => key)[0]!.text) as Task;
    assert.equal(r.goal, perturbGoal(task, 'medium', 1, r.trial), 'resumed episodes show the goals the seed fixes');
  }

  // The tasks were never written out in plain text: no file of the work folder holds a task body.
  for (const key of ['"initial_state"', '"reference_solutions"', '"counterexamples"', '"available_tools"']) assert.deepEqual(filesHolding(work, key), [], key);
});

// ---- Errors are visible -------------------------------------------------------------------------------

test('an agent that crashes and an endpoint that answers garbage are agent errors in every report, never failures', { timeout: 180_000 }, async () => {
  const work = mkdtempSync(join(tmpdir(), 'mcpbench-agent-errors-'));
  const task = join(tasks, 'travel', 'travel-confirm-held-001.json');
  const { createServer } = await import('node:http');
  const garbage = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>not an answer</html>'));
  await new Promise<void>((resolve) => garbage.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(garbage.address() as { port: number }).port}/agent`;
  try {
    const cases = [
      { args: ['--agent', 'command', '--agent-command', "echo 'Traceback: KeyError boom' >&2; exit 3"], code: 'agent-exit', message: 'command agent exited with code 3', junit: /exit code 3, the process had exited[\s\S]*Traceback: KeyError boom/ },
      { args: ['--agent', 'endpoint', '--endpoint', url], code: 'agent-response', message: `endpoint agent: ${url} answered HTTP 200 with a body that is not JSON`, junit: /HTTP 200/ },
    ];
    for (const [i, c] of cases.entries()) {
      const out = join(work, `runs${i}`);
      const result = await runAsync(['run', task, ...c.args, '--out', out, '--sandbox', 'process'], work);
      assert.equal(result.status, 0, result.stderr);
      // The CLI summary counts it apart and names the most frequent message.
      assert.match(result.stdout, /Outcomes: 0 passed, 0 failed, 1 agent error, 0 infrastructure errors/);
      assert.match(result.stdout, new RegExp(`most frequent errors:\\n +1x agent ${c.code}: ${c.message.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`));
      const folder = runFolder(out);
      const [record] = openRun(folder).episodes;
      assert.equal(record!.status, 'agent_error');
      assert.equal(record!.error?.code, c.code);
      // junit: an <error> of type agent_error, no <failure>.
      const junit = readFileSync(join(folder, 'junit.xml'), 'utf8');
      assert.match(junit, /<testsuites [^>]*tests="1" failures="0" errors="1"/);
      assert.match(junit, new RegExp(`<error message="agent error: ${c.code}: [^"]*" type="agent_error">`));
      assert.match(junit, c.junit);
      assert.doesNotMatch(junit, /<failure/);
      // report.json: the outcome and the reason per episode.
      const report = JSON.parse(readFileSync(join(folder, 'report.json'), 'utf8'));
      assert.equal(report.episodes[0].status, 'agent_error');
      assert.match(report.episodes[0].reason, new RegExp(`^${c.code}: `));
      assert.equal(report.scores.episodes.agent_errors, 1);
      assert.match(readFileSync(join(folder, 'report.html'), 'utf8'), /<option value="agent_error">agent error<\/option>/);
    }
  } finally {
    garbage.close();
  }
});
