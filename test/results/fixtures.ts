/**
 * Run folders for the results tests: run.json and episodes.jsonl written the way the journal writes them,
 * from episode records built here (real task fixtures, real canonical hashes).
 */
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { canonicalHash } from '../../server/src/canonical-json.ts';
import { TaskSchema, type Task } from '../../server/src/tasks/model.ts';
import type { CallRecord, EpisodeRecord } from '../../server/src/record/schema.ts';
import { workUnitKey } from '../../server/src/record/work-units.ts';
import { runCli } from '../../server/src/cli/main.ts';

/** The `mcpbench` command in this process, run in `cwd`: its exit code and what it printed. */
export function cliIn(cwd: string): (...argv: string[]) => Promise<{ code: number; stdout: string; stderr: string }> {
  return async (...argv) => {
    let stdout = '';
    let stderr = '';
    const code = await runCli(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), cwd });
    return { code, stdout, stderr };
  };
}

export const MOVE_FILE = join(__dirname, '..', 'fixtures', 'tasks', 'filesystem', 'fs-move-report-001.json');
export const MOVE: Task = TaskSchema.parse(JSON.parse(readFileSync(MOVE_FILE, 'utf8')));
export const MOVE_HASH = canonicalHash(JSON.parse(readFileSync(MOVE_FILE, 'utf8')));

export interface RunFixture {
  run_id: string;
  agent?: string;
  created_at?: string;
  seed?: number;
  trials?: number;
  extra?: Record<string, unknown>;
  task_files?: string[];
}

export function writeRunFolder(dir: string, run: RunFixture, episodes: EpisodeRecord[]): string {
  mkdirSync(dir, { recursive: true });
  const config = {
    run_id: run.run_id,
    created_at: run.created_at ?? '2026-05-02T10:00:00.000Z',
    task_files: run.task_files ?? [MOVE_FILE],
    tasks: [...new Set(episodes.map((e) => e.task_id))],
    agent: run.agent ?? 'reference',
    fault_profile: 'none',
    perturbation: 'none',
    trials: run.trials ?? 1,
    seed: run.seed ?? 7,
    concurrency: 1,
    sandbox: 'process',
    ...run.extra,
  };
  writeFileSync(join(dir, 'run.json'), JSON.stringify(config, null, 2) + '\n');
  writeFileSync(join(dir, 'episodes.jsonl'), episodes.map((e) => JSON.stringify(e) + '\n').join(''));
  return dir;
}

/** A model agent's usage record (store.ts ModelRecordSchema) with a cost in US dollars. */
export function modelUsage(cost: number): NonNullable<EpisodeRecord['model']> {
  return { protocol: 'openai', model: 'sim-1', requests: 2, turns: 2, retries: 0, prompt_tokens: 900, completion_tokens: 100, cached_tokens: 0, cache_write_tokens: 0, responses_without_usage: 0, cost, currency: 'USD', turn_latency_ms: [120, 80], calls: [] };
}

/** The record with its work-unit key recomputed from its fields (after a fixture changed task, variant or trial). */
export function rekeyed(episode: EpisodeRecord): EpisodeRecord {
  return { ...episode, work_unit: workUnitKey(episode) };
}

export function appendEpisode(dir: string, episode: EpisodeRecord): void {
  appendFileSync(join(dir, 'episodes.jsonl'), JSON.stringify(episode) + '\n');
}

export function moveCall(index: number, args: Record<string, unknown>, extra: Partial<CallRecord> = {}): CallRecord {
  return { index, tool: 'filesystem_move_file', qualified: 'filesystem.move_file', arguments: args, status: 'ok', result: { content: [{ type: 'text', text: 'moved' }] }, latency_ms: 4, ...extra };
}

/** An episode of the move task; passed ones carry a true verdict, failed ones the verdict of an untouched state. */
export function moveEpisode(run_id: string, fields: Partial<EpisodeRecord> & Pick<EpisodeRecord, 'trial' | 'passed'>): EpisodeRecord {
  const unit = { task_hash: MOVE_HASH, variant: fields.variant ?? 'reference:0', trial: fields.trial, fault_profile: fields.fault_profile ?? 'none', perturbation: fields.perturbation ?? 'none', seed: fields.seed ?? 7 };
  const verdict = {
    path: ['success_predicate'],
    kind: 'all' as const,
    value: fields.passed,
    children: [
      { path: ['success_predicate', 'all', 0], kind: 'leaf' as const, name: 'filesystem.fileExists', value: fields.passed, evidence: { path: 'archive/report.txt' } },
      { path: ['success_predicate', 'all', 1], kind: 'not' as const, value: fields.passed, children: [{ path: ['success_predicate', 'all', 1, 'not'], kind: 'leaf' as const, name: 'filesystem.fileExists', value: !fields.passed }] },
    ],
  };
  return {
    work_unit: workUnitKey(unit),
    run_id,
    task_id: MOVE.id,
    task_hash: MOVE_HASH,
    agent: 'reference',
    seed: 7,
    variant: 'reference:0',
    fault_profile: 'none',
    perturbation: 'none',
    status: fields.passed ? 'passed' : 'failed',
    category: MOVE.category,
    namespaces: ['filesystem'],
    max_steps: MOVE.max_steps,
    tool_calls: 1,
    unlisted_calls: 0,
    errors_seen: 0,
    budget_exceeded: false,
    calls: [moveCall(0, { source: 'report.txt', destination: 'archive/report.txt' })],
    started_at: '2026-05-02T10:00:01.000Z',
    duration_ms: 1200,
    attempt: 1,
    verdict,
    ...fields,
  };
}
