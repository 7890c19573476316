/**
 * `mcpbench run` and `check` as a user runs them (the built CLI): a run killed with SIGKILL mid-way and
 * resumed ends with every episode recorded exactly once; Ctrl-C stops cleanly and leaves no server process;
 * the same seed gives the same trace; check catches a broken task; jsonl events carry the whole story.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readEpisodes } from '../../server/src/runner/journal.ts';
import type { EpisodeResult, RunEvent } from '../../server/src/runner/types.ts';

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

/** Server processes started from our CLI still alive (their command line names `serve` and the sandbox). */
function strayServers(marker: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
      if (cmd.includes(marker) && cmd.includes(' serve ')) found.push(`${pid}: ${cmd}`);
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}

test('SIGKILL mid-run, then --resume: every episode recorded exactly once', { timeout: 300_000 }, async () => {
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
  const before = readEpisodes(folder).results;
  assert.ok(before.length >= 3 && before.length < 18, `killed mid-run (${before.length} recorded)`);

  const resumed = run(['run', '--resume', folder, '--reporter', 'none', '--sandbox', 'process'], work);
  assert.equal(resumed.status, 0, resumed.stderr);
  const after = readEpisodes(folder).results.filter((r) => r.status !== 'infra_error');
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
  const sandboxMarker = 'mcpbench-run-';
  child.kill('SIGINT');
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  assert.equal(code, 130);
  assert.match(stderr, /SIGINT: stopping; finished episodes are saved/);
  await new Promise((r) => setTimeout(r, 500));
  assert.deepEqual(strayServers(sandboxMarker), []);
  const folder = runFolder(out);
  for (const r of readEpisodes(folder).results) assert.ok(['passed', 'failed'].includes(r.status), 'no half-recorded episode');
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
    const results = readEpisodes(runFolder(out)).results.sort((a, b) => a.task_id.localeCompare(b.task_id));
    traces.push(JSON.stringify(results.map((r: EpisodeResult) => [r.task_id, r.status, r.calls.map((c) => [c.tool, c.status, c.fault?.type, c.arguments, c.result])])));
  }
  assert.equal(traces[0], traces[1]);
  assert.match(traces[0]!, /"SchemaDrift"/, 'faults were injected');
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
