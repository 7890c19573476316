/**
 * The run store (server/src/runner/store.ts): one typed reader and writer of a run folder. Damaged journals
 * (a middle line, a torn last line, duplicate work units, a line of another version) are read the same by
 * every reader, and a resume keeps exactly the good episodes, before and after the damage, and moves the
 * damaged bytes to the quarantine file. Old (version-less) runs open; newer ones are refused clearly. Every
 * atomic file survives a failure between its write and its rename.
 */
import { test, mock } from 'node:test';
import assert from 'node:assert/strict';
import fs, { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createRun,
  EPISODES_FILE,
  listRuns,
  openRun,
  QUARANTINE_FILE,
  readChecks,
  resumeRun,
  RUN_FILE,
  RunStoreError
} from '../../server/src/record/run-folder.ts';
import { reportRun } from '../../server/src/scoring/report.ts';
import { RUN_RECORD_VERSION, type EpisodeRecord, type NewRunRecord } from '../../server/src/record/schema.ts';
import { finishedWorkUnits, latestByWorkUnit, outcomeCounts, workUnitKey } from '../../server/src/record/work-units.ts';

const config: NewRunRecord = {
  kind: 'run',
  run_id: 'run-20260101-000000-abcdef',
  created_at: '2026-01-01T00:00:00.000Z',
  task_files: ['/tasks/a.json', '/tasks/b.json'],
  tasks: ['a', 'b'],
  agent: 'reference',
  agent_options: { retry: true },
  fault_profile: 'light',
  perturbations: ['none'],
  trials: 3,
  seed: 5,
  concurrency: 2,
  sandbox: 'process',
};

function episode(task_id: string, trial: number, status: EpisodeRecord['status'] = 'passed', over: Partial<EpisodeRecord> = {}): EpisodeRecord {
  const base = {
    run_id: config.run_id,
    task_id,
    task_hash: `hash-${task_id}`,
    trial,
    variant: 'reference:0',
    fault_profile: 'light',
    perturbation: 'none',
    agent: 'reference',
    seed: 5,
    status,
    passed: status === 'passed',
    category: 'single-tool',
    namespaces: ['travel'],
    max_steps: 5,
    tool_calls: 1,
    unlisted_calls: 0,
    errors_seen: 0,
    budget_exceeded: false,
    calls: [{ index: 0, tool: 'travel_search_flights', qualified: 'travel.search_flights', arguments: { from: 'A' }, status: 'ok' as const, result: { content: [] }, latency_ms: 3, decided: 'StaleData' as const }],
    verdict: { path: ['success_predicate'], kind: 'leaf' as const, name: 'travel.reservationExists', value: status === 'passed' },
    started_at: '2026-01-01T00:00:01.000Z',
    duration_ms: 10,
    attempt: 1,
    ...(status === 'infra_error' ? { error: { kind: 'infra' as const, code: 'server-exited', message: 'the travel server exited', exited: true } } : {}),
    ...(status === 'agent_error' ? { error: { kind: 'agent' as const, code: 'agent-exit', message: 'command agent exited with code 1', exit_code: 1, signal: null } } : {}),
    ...over,
  };
  return { work_unit: workUnitKey(base), ...base };
}

const scratch = () => mkdtempSync(join(tmpdir(), 'mcpbench-store-'));
const line = (record: unknown) => `${JSON.stringify(record)}\n`;

/** A run folder with `lines` as its journal, exactly. */
function runWith(lines: string): string {
  const dir = join(scratch(), 'run');
  createRun(dir, config);
  writeFileSync(join(dir, EPISODES_FILE), lines);
  return dir;
}

test('create, append, open: typed records in file order; run.json has the record version', () => {
  const dir = join(scratch(), 'run');
  const run = createRun(dir, config);
  const records = [episode('a', 0), episode('a', 1, 'failed'), episode('b', 0, 'agent_error'), episode('b', 1, 'infra_error')];
  for (const r of records) run.append(r);
  assert.equal(JSON.parse(readFileSync(join(dir, RUN_FILE), 'utf8')).version, RUN_RECORD_VERSION);
  const opened = openRun(dir);
  assert.deepEqual(opened.config, { version: RUN_RECORD_VERSION, ...config });
  assert.deepEqual(opened.episodes, records);
  assert.deepEqual(opened.damaged, []);
  assert.deepEqual(outcomeCounts([...opened.episodes]), { passed: 1, failed: 1, agent_error: 1, infra_error: 1 });
  assert.throws(() => createRun(dir, config), (e: unknown) => e instanceof RunStoreError && e.code === 'exists' && /already holds a run: resume it/.test(e.message));
  // The writer refuses what its readers would refuse.
  const { error: _error, ...errorless } = episode('c', 0, 'infra_error');
  assert.throws(() => run.append(errorless), /refused to append an invalid episode record: error: status infra_error needs an error of kind infra/);
  assert.throws(() => run.append({ ...episode('c', 0), work_unit: 'nope' }), /refused to append an invalid episode record: work_unit/);
  assert.equal(openRun(dir).episodes.length, 4);
});

test('a model agent\'s records: spending and malformed calls read back typed; a token-budget failure only on a failed episode; a new cost budget rewrites run.json', () => {
  const dir = join(scratch(), 'run');
  const run = createRun(dir, { ...config, agent: 'openai', agent_options: { base_url: 'http://127.0.0.1:1/v1', model: 'm' }, max_cost: 2 });
  const model = {
    protocol: 'openai', model: 'm', requests: 3, turns: 2, retries: 1, prompt_tokens: 900, completion_tokens: 100, cached_tokens: 0, cache_write_tokens: 0,
    responses_without_usage: 0, cost: 0.002, currency: 'USD', turn_latency_ms: [12, 30], end: 'token-budget',
    calls: [{ turn: 0, format: 'hermes', name: 'travel_hold_flight', status: 'malformed' as const, problem: 'bad-json' }, { turn: 1, format: 'native', name: 'travel_hold_flight', status: 'sent' as const }],
  };
  const stopped = episode('a', 0, 'failed', { model, malformed_calls: 1, failure: { code: 'token-budget', message: 'the episode used 1000 tokens, its budget is 800' } });
  const broke = episode('b', 0, 'agent_error', { model, error: { kind: 'agent', code: 'model-5xx', message: 'failed after 5 attempts', http_status: 503, attempts: 5 } });
  run.append(stopped);
  run.append(broke);
  assert.deepEqual(openRun(dir).episodes, [stopped, broke]);
  assert.throws(() => run.append(episode('c', 0, 'passed', { failure: { code: 'token-budget', message: 'x' } })), /refused to append an invalid episode record: failure: status passed has no failure/);
  assert.throws(() => run.append(episode('c', 0, 'passed', { model: { ...model, cost: -1 } })), /refused to append an invalid episode record: model\.cost/);
  // A resume with another budget records it (atomically, through the store); the rest of run.json is unchanged.
  const resumed = resumeRun(dir);
  resumed.updateRecord({ max_cost: 10 });
  assert.equal(resumed.config.max_cost, 10);
  assert.deepEqual(openRun(dir).config, { version: RUN_RECORD_VERSION, ...config, agent: 'openai', agent_options: { base_url: 'http://127.0.0.1:1/v1', model: 'm' }, max_cost: 10 });
  assert.throws(() => resumed.updateRecord({ max_cost: -1 }), /max_cost/);
  assert.equal(openRun(dir).config.max_cost, 10, 'a refused update leaves run.json as it was');
});

test('the work-unit key: one per (task hash, variant, trial, fault profile, perturbation, seed), nothing else', () => {
  const unit = { task_hash: 'h', variant: 'reference:0', trial: 0, fault_profile: 'light', perturbation: 'none', seed: 1 };
  const key = workUnitKey(unit);
  assert.match(key, /^[0-9a-f]{64}$/);
  assert.equal(workUnitKey({ ...unit }), key, 'stable');
  for (const change of [{ task_hash: 'h2' }, { variant: 'reference:1' }, { trial: 1 }, { fault_profile: 'heavy' }, { perturbation: 'light' }, { seed: 2 }]) {
    assert.notEqual(workUnitKey({ ...unit, ...change }), key, JSON.stringify(change));
  }
  // Volatile fields of a record (run id, timing, attempt) are not part of it.
  assert.equal(episode('a', 0, 'passed', { run_id: 'other', duration_ms: 99, attempt: 3 }).work_unit, episode('a', 0).work_unit);
});

test('a damaged middle line: every reader reads the lines before and after it; resume moves it, byte for byte, and keeps every good episode', () => {
  const good = [episode('a', 0), episode('a', 1), episode('b', 0), episode('b', 1)];
  const damagedBytes = '{"work_unit": "f00", "status": "pas\u00e9d", \u0000 garbage';
  const journal = line(good[0]) + line(good[1]) + damagedBytes + '\n' + line(good[2]) + line(good[3]);
  const dir = runWith(journal);

  const read = openRun(dir);
  assert.deepEqual(read.episodes, good, 'the episodes after the damage are read too');
  assert.deepEqual(read.damaged.map((d) => [d.line, d.torn]), [[3, false]]);
  assert.match(read.warnings[0]!, /episodes\.jsonl:3: skipped a damaged line: not JSON/);
  assert.equal(readFileSync(join(dir, EPISODES_FILE), 'utf8'), journal, 'reading never changes the folder');
  assert.deepEqual([...listRuns(join(dir, '..'))].map((r) => [r.episodes, r.damaged]), [[4, 1]], 'the run list reads the same');

  const resumed = resumeRun(dir);
  assert.deepEqual(resumed.episodes, good);
  assert.equal(resumed.moved.length, 1);
  assert.equal(readFileSync(join(dir, EPISODES_FILE), 'utf8'), line(good[0]) + line(good[1]) + line(good[2]) + line(good[3]), 'the good lines, byte for byte, in order');
  assert.deepEqual(readFileSync(join(dir, QUARANTINE_FILE)), Buffer.from(damagedBytes + '\n'), 'the damaged line, byte for byte');
  const after = openRun(dir);
  assert.deepEqual(after.episodes, good);
  assert.deepEqual(after.damaged, []);
  assert.equal(after.quarantined, 1);
  assert.match(after.warnings[0]!, /episodes\.quarantine\.jsonl: 1 damaged line\(s\) were moved here/);
  // A second resume moves nothing more and keeps the quarantine as it is.
  resumeRun(dir);
  assert.deepEqual(readFileSync(join(dir, QUARANTINE_FILE)), Buffer.from(damagedBytes + '\n'));
});

test('a torn last line: reported as torn, not read; resume quarantines it and its work unit runs again', () => {
  const good = [episode('a', 0), episode('a', 1)];
  const torn = line(episode('a', 2)).slice(0, 80);
  const dir = runWith(line(good[0]) + line(good[1]) + torn);
  const read = openRun(dir);
  assert.deepEqual(read.episodes, good);
  assert.deepEqual(read.damaged.map((d) => [d.line, d.torn]), [[3, true]]);
  const resumed = resumeRun(dir);
  assert.equal(readFileSync(join(dir, QUARANTINE_FILE), 'utf8'), `${torn}\n`);
  assert.ok(!finishedWorkUnits(resumed.episodes).has(episode('a', 2).work_unit), 'the torn episode is not done');
  // Appending after the repair gives a clean journal.
  resumed.append(episode('a', 2));
  assert.deepEqual(openRun(dir).episodes, [...good, episode('a', 2)]);
  assert.deepEqual(openRun(dir).damaged, []);
});

test('duplicate work units: the standing record is the last scored one; counted once; a retried infra error does not stand', () => {
  const first = episode('a', 0, 'failed');
  const again = episode('a', 0, 'passed', { attempt: 2 });
  const infra = episode('a', 1, 'infra_error');
  const retried = episode('a', 1, 'passed', { attempt: 2 });
  const lateInfra = episode('a', 1, 'infra_error', { attempt: 3 });
  const dir = runWith([first, again, infra, retried, lateInfra].map(line).join(''));
  const { episodes } = openRun(dir);
  assert.equal(episodes.length, 5, 'the journal keeps every record');
  assert.deepEqual(latestByWorkUnit(episodes), [again, retried]);
  assert.deepEqual(outcomeCounts([...episodes]), { passed: 2, failed: 0, agent_error: 0, infra_error: 0 });
  assert.deepEqual([...finishedWorkUnits(episodes)], [first.work_unit, infra.work_unit]);
});

test('a line of another version: an old-format line is upgraded (work unit computed, error typed); an unknown shape is damage', () => {
  const current = episode('a', 0);
  const { work_unit: _unit, error: _error, ...rest } = episode('b', 0, 'infra_error');
  const legacyInfra = { ...rest, status: 'infra_error', infra_error: 'could not start the servers: travel server failed to start' };
  const { work_unit: _u2, error: _e2, ...rest2 } = episode('b', 1, 'agent_error');
  const legacyAgent = { ...rest2, status: 'failed', agent_error: 'command agent exited with code 2' };
  const future = { ...episode('a', 1), status: 'timed_out' };
  const { error: _e3, ...errorless } = episode('a', 2, 'agent_error');
  const dir = runWith([current, legacyInfra, legacyAgent, future, errorless].map(line).join(''));
  const read = openRun(dir);
  assert.deepEqual(read.episodes.map((e) => [e.task_id, e.trial, e.status, e.error?.kind, e.error?.code, e.error?.message]), [
    ['a', 0, 'passed', undefined, undefined, undefined],
    ['b', 0, 'infra_error', 'infra', 'legacy', 'could not start the servers: travel server failed to start'],
    ['b', 1, 'agent_error', 'agent', 'legacy', 'command agent exited with code 2'],
  ]);
  assert.equal(read.episodes[1]!.work_unit, episode('b', 0).work_unit, 'the same work unit a current record of it has');
  assert.deepEqual(read.damaged.map((d) => d.line), [4, 5]);
  assert.match(read.damaged[0]!.reason, /not an episode record: status/);
  assert.match(read.damaged[1]!.reason, /not an episode record: error: status agent_error needs an error of kind agent/);
});

test('a version-less run.json (written before the typed record) opens upgraded; resume rewrites it in the current version', () => {
  const dir = join(scratch(), 'old-run');
  mkdirSync(dir);
  const old = {
    run_id: 'run-20250101-000000-000000', created_at: '2025-01-01T00:00:00.000Z', task_files: ['/t/a.json'], tasks: ['a'], agent: 'command',
    agent_options: { agentCommand: 'python agent.py', endpoint: undefined, faultRate: 0.5 }, fault_profile: 'medium@0.5', perturbation: 'none,heavy',
    perturbations: ['none', 'heavy'], trials: 2, seed: 9, concurrency: 1, sandbox: 'bwrap', retry: false, version: '0.1.0',
  };
  writeFileSync(join(dir, RUN_FILE), JSON.stringify(old));
  const { work_unit: _u, ...legacyEpisode } = episode('a', 0);
  writeFileSync(join(dir, EPISODES_FILE), line(legacyEpisode));
  const read = openRun(dir);
  assert.deepEqual(read.config, {
    version: RUN_RECORD_VERSION, kind: 'run', run_id: old.run_id, created_at: old.created_at, mcpbench_version: '0.1.0', task_files: ['/t/a.json'], tasks: ['a'],
    agent: 'command', agent_options: { command: 'python agent.py' }, fault_profile: 'medium@0.5', fault_rate: 0.5, perturbations: ['none', 'heavy'],
    trials: 2, seed: 9, concurrency: 1, sandbox: 'bwrap',
  });
  assert.equal(read.episodes.length, 1);
  assert.equal(JSON.parse(readFileSync(join(dir, RUN_FILE), 'utf8')).version, '0.1.0', 'reading does not rewrite');
  resumeRun(dir);
  assert.equal(JSON.parse(readFileSync(join(dir, RUN_FILE), 'utf8')).version, RUN_RECORD_VERSION);
  assert.deepEqual(openRun(dir).config, read.config);
});

test('run.json: missing, not JSON, invalid, or of a newer version is a clear error naming the file', () => {
  const dir = scratch();
  assert.throws(() => openRun(dir), (e: unknown) => e instanceof RunStoreError && e.code === 'not-a-run' && /is not a run folder \(no run\.json\)/.test(e.message));
  writeFileSync(join(dir, RUN_FILE), '{"run_id": ');
  assert.throws(() => openRun(dir), /run\.json: not readable JSON/);
  writeFileSync(join(dir, RUN_FILE), JSON.stringify({ version: RUN_RECORD_VERSION, ...config, seed: 'five' }));
  assert.throws(() => openRun(dir), /run\.json: not a run record: seed: /);
  writeFileSync(join(dir, RUN_FILE), JSON.stringify({ ...config, version: 99 }));
  assert.throws(() => openRun(dir), (e: unknown) => e instanceof RunStoreError && e.code === 'newer-version' && /written by a newer mcpbench \(run record version 99; this one reads up to 2\)/.test(e.message));
  writeFileSync(join(dir, RUN_FILE), JSON.stringify({ run_id: 'x', agent: 'noop' }));
  assert.throws(() => openRun(dir), /run\.json: not a run record of any version: /);
});

test('listRuns: newest first, outcomes per run, an unreadable folder listed with why', () => {
  const runs = scratch();
  const older = createRun(join(runs, 'run-1'), { ...config, run_id: 'run-1', created_at: '2026-01-01T00:00:00.000Z' });
  older.append(episode('a', 0));
  const newer = createRun(join(runs, 'run-2'), { ...config, run_id: 'run-2', created_at: '2026-02-01T00:00:00.000Z' });
  newer.append(episode('a', 0, 'agent_error'));
  mkdirSync(join(runs, 'broken'));
  writeFileSync(join(runs, 'broken', RUN_FILE), 'not json');
  mkdirSync(join(runs, 'not-a-run'));
  const listed = listRuns(runs);
  assert.deepEqual(listed.map((r) => [r.id, r.outcomes.passed, r.outcomes.agent_error, r.error !== undefined]), [
    ['run-2', 0, 1, false],
    ['run-1', 1, 0, false],
    ['broken', 0, 0, true],
  ]);
});

// ---- Atomic files: a failure between write and rename leaves the old file, and no temporary file -----------

/** Runs `action` with renameSync failing for renames onto `target` (what a kill between write and rename leaves). */
function failingRename<T>(target: (to: string) => boolean, action: () => T): void {
  const original = fs.renameSync;
  const renamed = mock.method(fs, 'renameSync', (from: fs.PathLike, to: fs.PathLike) => {
    if (target(String(to))) throw Object.assign(new Error('killed between write and rename'), { code: 'EKILLED' });
    return original(from, to);
  });
  try {
    assert.throws(action, /killed between write and rename/);
  } finally {
    renamed.mock.restore();
  }
}

const leftovers = (dir: string) => readdirSync(dir).filter((name) => /\.\d+$/.test(name));

test('atomic run.json: a failed create leaves no run; a failed upgrade on resume leaves the old run.json', () => {
  const dir = join(scratch(), 'run');
  failingRename((to) => to.endsWith(RUN_FILE), () => createRun(dir, config));
  assert.ok(!existsSync(join(dir, RUN_FILE)), 'no half-created run');
  createRun(dir, config); // and the same command then works

  const old = join(scratch(), 'old');
  mkdirSync(old);
  const text = JSON.stringify({ run_id: 'r', created_at: 'c', tasks: [], agent: 'noop', fault_profile: 'none', seed: 1 });
  writeFileSync(join(old, RUN_FILE), text);
  failingRename((to) => to.endsWith(RUN_FILE), () => resumeRun(old));
  assert.equal(readFileSync(join(old, RUN_FILE), 'utf8'), text);
  assert.deepEqual(leftovers(old), []);
  resumeRun(old);
  assert.equal(JSON.parse(readFileSync(join(old, RUN_FILE), 'utf8')).version, RUN_RECORD_VERSION);
});

test('atomic journal repair: a resume that fails before its rename leaves the journal as it was; the next resume finishes', () => {
  const good = [episode('a', 0), episode('a', 1)];
  const journal = line(good[0]) + '{broken\n' + line(good[1]);
  const dir = runWith(journal);
  failingRename((to) => to.endsWith(EPISODES_FILE), () => resumeRun(dir));
  assert.equal(readFileSync(join(dir, EPISODES_FILE), 'utf8'), journal, 'the journal is untouched');
  assert.equal(readFileSync(join(dir, QUARANTINE_FILE), 'utf8'), '{broken\n', 'the damaged line is already safe');
  const resumed = resumeRun(dir);
  assert.deepEqual(resumed.episodes, good);
  assert.equal(readFileSync(join(dir, QUARANTINE_FILE), 'utf8'), '{broken\n', 'not copied twice');
  assert.deepEqual(leftovers(dir), []);
});

test('atomic checks.json and report files: a failed write keeps the previous file whole', () => {
  const dir = join(scratch(), 'run');
  const run = createRun(dir, { ...config, kind: 'check' });
  const coverage = { paths: { covered: 1, total: 1 }, leaves: { covered: 1, total: 1 }, items: [] };
  run.writeChecks([{ task_id: 'a', file: '/t/a.json', task_hash: 'h', ok: true, problems: [], coverage, faults: {}, findings: [] }]);
  failingRename((to) => to.endsWith('checks.json'), () => run.writeChecks([{ task_id: 'a', file: '/t/a.json', task_hash: 'h', ok: false, problems: ['x'], coverage, faults: {}, findings: [] }]));
  assert.equal(readChecks(dir)?.[0]?.ok, true);

  run.append(episode('a', 0));
  const first = reportRun(dir, { scoring: { resamples: 10 } });
  const before = Object.fromEntries(Object.values(first.files).map((f) => [f, readFileSync(f, 'utf8')]));
  run.append(episode('b', 0, 'failed'));
  for (const file of Object.values(first.files)) {
    failingRename((to) => to === file, () => reportRun(dir, { scoring: { resamples: 10 } }));
    for (const [path, text] of Object.entries(before)) if (path === file) assert.equal(readFileSync(path, 'utf8'), text, `${file} is the old one`);
  }
  assert.deepEqual(leftovers(dir), []);
  reportRun(dir, { scoring: { resamples: 10 } });
  assert.equal(JSON.parse(readFileSync(first.files.json, 'utf8')).scores.episodes.scored, 2);
});

test('append after a torn write keeps the journal readable line by line', () => {
  const dir = runWith(line(episode('a', 0)));
  appendFileSync(join(dir, EPISODES_FILE), '{"torn":');
  const resumed = resumeRun(dir);
  resumed.append(episode('a', 1));
  assert.deepEqual(openRun(dir).episodes.map((e) => e.trial), [0, 1]);
});

test('the run list says what a check decided, from checks.json: nothing until it is written, then ok or the failing tasks', () => {
  const runs = scratch();
  const coverage = { paths: { covered: 1, total: 1 }, leaves: { covered: 1, total: 1 }, items: [] };
  const check = createRun(join(runs, 'check-20260101-000000-abcdef'), { ...config, kind: 'check', run_id: 'check-20260101-000000-abcdef', agent: 'check', trials: 1 });
  check.append(episode('a', 0));
  const listed = () => listRuns(runs).find((r) => r.id === 'check-20260101-000000-abcdef')!;
  assert.equal(listed().checks, undefined, 'a check without checks.json (running, or interrupted) has no verdict');
  check.writeChecks([
    { task_id: 'a', file: '/t/a.json', task_hash: 'h', ok: true, problems: [], coverage, faults: {}, findings: [] },
    { task_id: 'b', file: '/t/b.json', task_hash: 'h', ok: false, problems: ['counterexample 1 passes'], coverage, faults: {}, findings: [] },
  ]);
  assert.deepEqual(listed().checks, { tasks: 2, failing: ['b'] });
  check.writeChecks([{ task_id: 'a', file: '/t/a.json', task_hash: 'h', ok: true, problems: [], coverage, faults: {}, findings: [] }]);
  assert.deepEqual(listed().checks, { tasks: 1, failing: [] });
  // A run is not a check: no verdicts to list.
  createRun(join(runs, 'run-20260101-000000-abcdef'), config);
  assert.equal(listRuns(runs).find((r) => r.id === config.run_id)!.checks, undefined);
});
