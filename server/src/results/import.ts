/**
 * `mcpbench results import`: run folders (config, episodes, calls, faults, verdicts, scores, tokens and cost
 * where recorded, each failed episode's failure mode) and rotation manifests (Historical-YYYY-MM.json) into
 * the results database.
 *
 * Idempotent: a run is identified by its run id and the fingerprint of its plan (run.json plan); its rows by
 * the SHA-256 of its run.json and journal (with its labels and the version of the failure-mode rules).
 * Importing an unchanged folder again changes nothing, and a folder that changed (a resumed run) replaces its
 * rows in one transaction; but never one with another plan, nor one with fewer episodes or fewer scored ones
 * (a partial copy): those are refused with the reason. Within a run an episode is identified by its work-unit key. Rotations are keyed by set and
 * month and inserted once.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { sql, type Insertable, type Transaction } from 'kysely';
import type { Registry } from '../mcp/registry.ts';
import { isHistoricalFileName, readHistoricalManifest } from '../generator/rotate.ts';
import { deriveRun } from '../scoring/derive.ts';
import type { ScoreOptions } from '../scoring/metrics.ts';
import type { Task } from '../tasks/model.ts';
import { callIsError, FAILURE_RULES_VERSION, invalidArguments, requiredTools } from '../scoring/failure-modes.ts';
import type { ResultsDb } from './db.ts';
import { isRunFolder, openSourceRun, type SourceEpisode, type SourceRun } from './run-source.ts';
import type { ResultsDatabase } from './schema.ts';
import type { NodeVerdict, RunRecord as RunConfig } from '../record/schema.ts';
import { loadRunTasks } from '../tasks/load.ts';
import { McpbenchError } from '../errors.ts';
import { runCompleteness, type Completeness } from '../record/work-units.ts';
import { scoringConfiguration } from './configuration.ts';

export interface ImportOptions {
  registry: Registry;
  /** More task files or folders to judge runs against (found by canonical hash), besides the runs' own. */
  tasks?: string[];
  /** The set and month the runs measured, when run.json does not record them. */
  set?: string;
  month?: string;
  /** The agent label to rank the runs under (default: the plug-in and its model). */
  agentLabel?: string;
  scoring?: ScoreOptions;
}

export type ImportOutcome =
  | {
      kind: 'run';
      path: string;
      run_id: string;
      status: 'imported' | 'replaced' | 'unchanged' | 'refused';
      episodes: number;
      calls: number;
      warnings: string[];
      completeness: Completeness;
      /** Why the folder was not imported (status refused): what the database holds would be lost. */
      refused?: { code: 'fewer-episodes' | 'other-plan'; message: string };
    }
  | { kind: 'rotation'; path: string; set: string; month: string; status: 'imported' | 'unchanged'; tasks: number };

export class ImportError extends McpbenchError {
  static override readonly code: string = 'results-import';
}

const MAX_JSON_CHARS = 100_000;
const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

/** Text PostgreSQL accepts: no NUL characters (text and jsonb both refuse them). */
const pgText = (text: string) => text.replace(/\u0000/g, '\uFFFD');
const pgTextOrNull = (text: string | undefined | null) => (text === undefined || text === null ? null : pgText(text));

/** JSON text for a jsonb column: NUL escapes replaced (jsonb refuses \u0000), over-long values cut to a stub. */
export function jsonText(value: unknown): string {
  let text = JSON.stringify(value === undefined ? null : value) ?? 'null';
  text = text.replace(/(\\+)u0000/g, (match, slashes: string) => (slashes.length % 2 === 1 ? `${slashes}ufffd` : match));
  if (text.length > MAX_JSON_CHARS) text = JSON.stringify({ truncated: true, chars: text.length, head: text.slice(0, 2000) }).replace(/(\\+)u0000/g, (m, s: string) => (s.length % 2 === 1 ? `${s}ufffd` : m));
  return text;
}

/** The paths a user named, expanded: run folders, Historical manifests, and folders holding either. */
export function expandImportPaths(paths: readonly string[]): { runs: string[]; rotations: string[] } {
  const runs: string[] = [];
  const rotations: string[] = [];
  const visit = (path: string, depth: number) => {
    if (!existsSync(path)) throw new ImportError(`${path}: no such file or folder`);
    if (statSync(path).isFile()) {
      if (isHistoricalFileName(basename(path))) rotations.push(path);
      else if (depth === 0) throw new ImportError(`${path}: not a run folder or a Historical-YYYY-MM.json manifest`);
      return;
    }
    if (isRunFolder(path)) {
      runs.push(path);
      return;
    }
    if (depth >= 3) return;
    const before = runs.length + rotations.length;
    for (const name of readdirSync(path).sort()) {
      const child = join(path, name);
      if (name.startsWith('.') || name.endsWith('.pglite')) continue;
      if (statSync(child).isDirectory() || isHistoricalFileName(name)) visit(child, depth + 1);
    }
    if (depth === 0 && runs.length + rotations.length === before) throw new ImportError(`${path}: no run folder (with run.json) or Historical-YYYY-MM.json in it`);
  };
  for (const path of paths) visit(resolve(path), 0);
  return { runs: [...new Set(runs)], rotations: [...new Set(rotations)] };
}

// ---------------------------------------------------------------------------------------------------------

interface RunIdentity {
  agent_label: string;
  model: string | null;
  set_name: string | null;
  month: string;
  month_source: 'set' | 'created_at';
}

const str = (value: unknown) => (typeof value === 'string' && value.trim() ? value.trim() : undefined);

export function runIdentity(config: RunConfig, options: Pick<ImportOptions, 'set' | 'month' | 'agentLabel'>): RunIdentity {
  const model = str(config.agent_options.model) ?? null;
  const setMonth = options.month ?? str(config.set?.month);
  if (setMonth !== undefined && !MONTH.test(setMonth)) throw new ImportError(`month ${setMonth}: expected YYYY-MM`);
  const created = str(config.created_at)?.slice(0, 7);
  return {
    agent_label: options.agentLabel ?? (model ? `${config.agent}:${model}` : config.agent),
    model,
    set_name: options.set ?? str(config.set?.name) ?? null,
    month: setMonth ?? (created && MONTH.test(created) ? created : '1970-01'),
    month_source: setMonth !== undefined ? 'set' : 'created_at',
  };
}

function verdictRows(run_id: string, work_unit: string, verdict: NodeVerdict | undefined) {
  const rows: Insertable<ResultsDatabase['verdict_nodes']>[] = [];
  if (!verdict) return rows;
  const seen = new Set<string>();
  const visit = (node: NodeVerdict, depth: number, underNot: boolean) => {
    const path = JSON.stringify(node.path ?? []);
    if (!seen.has(path)) {
      seen.add(path);
      rows.push({ run_id, work_unit, path, kind: node.kind, name: node.name ?? null, value: typeof node.value === 'boolean' ? node.value : null, undecided: pgTextOrNull(node.undecided), depth, under_not: underNot });
    }
    for (const child of node.children ?? []) visit(child, depth + 1, underNot !== (node.kind === 'not'));
  };
  visit(verdict, 0, false);
  return rows;
}

function taskRow(episode: SourceEpisode, task: Task | undefined): Insertable<ResultsDatabase['tasks']> {
  const namespaces = task ? (Array.isArray(task.server) ? task.server : [task.server]) : episode.namespaces;
  return {
    task_hash: episode.task_hash,
    task_id: episode.task_id,
    namespaces,
    primary_namespace: namespaces[0] ?? 'unknown',
    category: task?.category ?? episode.category,
    difficulty: task?.difficulty ?? null,
    max_steps: task?.max_steps ?? episode.max_steps,
    information: task ? JSON.stringify(task.success_predicate).includes('"answer.') : null,
    required_tools: task ? requiredTools(task) : null,
    task: task ? jsonText(task) : null,
  };
}

async function insertChunked<T extends keyof ResultsDatabase>(tx: Transaction<ResultsDatabase>, table: T, rows: Insertable<ResultsDatabase[T]>[], perChunk: number) {
  for (let i = 0; i < rows.length; i += perChunk) {
    await tx.insertInto(table).values(rows.slice(i, i + perChunk) as any).execute();
  }
}

interface Standing {
  plan_fingerprint: string | null;
  units: number;
  unresolved_units: number;
}

/**
 * Why a folder must not replace what the database holds for its run id: another plan (a different run under
 * the same id), or fewer episodes, or fewer scored ones (a partial copy, an older copy). Undefined when it may.
 */
export function refusal(held: Standing & { directory: string }, incoming: Standing): { code: 'fewer-episodes' | 'other-plan'; message: string } | undefined {
  if (held.plan_fingerprint && incoming.plan_fingerprint && held.plan_fingerprint !== incoming.plan_fingerprint) {
    return { code: 'other-plan', message: `the database holds this run id with another plan (${held.plan_fingerprint.slice(0, 12)}, from ${held.directory}); this folder's plan is ${incoming.plan_fingerprint.slice(0, 12)}: not replaced` };
  }
  const heldScored = held.units - held.unresolved_units;
  const scored = incoming.units - incoming.unresolved_units;
  if (incoming.units < held.units || scored < heldScored) {
    return { code: 'fewer-episodes', message: `the database holds ${held.units} episodes of this run (${heldScored} scored, from ${held.directory}); this folder has ${incoming.units} (${scored} scored): a partial or older copy does not replace it` };
  }
  return undefined;
}

/** Imports one run folder; see the module comment for identity and idempotence. */
export async function importRun(db: ResultsDb, source: SourceRun, options: ImportOptions): Promise<ImportOutcome & { kind: 'run' }> {
  const config = source.config;
  const identity = runIdentity(config, options);
  // What the rows are derived from: the folder's bytes, how it is labelled, and the rules that derive them.
  const fingerprint = createHash('sha256').update(source.sha256).update(JSON.stringify(identity)).update(`failure-rules:${FAILURE_RULES_VERSION}`).digest('hex');
  const existing = await db.selectFrom('runs').select(['source_sha256']).where('run_id', '=', config.run_id).executeTakeFirst();
  const tasks = loadRunTasks(config, options.tasks);
  const derived = deriveRun({ config, episodes: source.records, warnings: source.warnings }, { tasks, registry: options.registry, ...(options.scoring ? { scoring: options.scoring } : {}) });
  const episodes = derived.standing.map((episode) => ({ episode, attempts: derived.attempts.get(episode.work_unit)! }));
  const callCount = episodes.reduce((s, e) => s + (e.episode.calls?.length ?? 0), 0);
  const standing = runCompleteness(config, source.records);
  const outcome = { kind: 'run' as const, path: source.directory, run_id: config.run_id, episodes: episodes.length, calls: callCount, warnings: source.warnings, completeness: standing.completeness };
  if (existing?.source_sha256 === fingerprint) return { ...outcome, status: 'unchanged' };
  const planFingerprint = config.plan?.fingerprint ?? null;

  const run_id = config.run_id;
  const taskRows = new Map<string, Insertable<ResultsDatabase['tasks']>>();
  const episodeRows: Insertable<ResultsDatabase['episodes']>[] = [];
  const callRows: Insertable<ResultsDatabase['calls']>[] = [];
  const nodeRows: Insertable<ResultsDatabase['verdict_nodes']>[] = [];
  for (const { episode, attempts } of episodes) {
    const task = tasks.get(episode.task_hash);
    if (!taskRows.has(episode.task_hash)) taskRows.set(episode.task_hash, taskRow(episode, task));
    const calls = episode.calls ?? [];
    const invalid = calls.map((call) => invalidArguments(call, options.registry) !== undefined);
    const diagnosis = derived.diagnose(episode);
    episodeRows.push({
      run_id,
      work_unit: episode.work_unit,
      task_id: episode.task_id,
      task_hash: episode.task_hash,
      variant: episode.variant,
      trial: episode.trial,
      fault_profile: episode.fault_profile,
      perturbation: episode.perturbation,
      seed: episode.seed,
      agent: episode.agent,
      status: episode.status,
      passed: episode.passed,
      attempts,
      category: episode.category,
      namespaces: episode.namespaces,
      max_steps: episode.max_steps,
      tool_calls: episode.tool_calls,
      unlisted_calls: episode.unlisted_calls,
      errors_seen: episode.errors_seen,
      budget_exceeded: episode.budget_exceeded,
      calls: calls.length,
      invalid_argument_calls: invalid.filter(Boolean).length,
      malformed_calls: episode.usage?.malformed_calls ?? null,
      prompt_tokens: episode.usage?.prompt_tokens ?? null,
      completion_tokens: episode.usage?.completion_tokens ?? null,
      cached_tokens: episode.usage?.cached_tokens ?? null,
      cost_usd: episode.usage?.cost_usd ?? null,
      error_kind: episode.error?.kind ?? null,
      error_code: pgTextOrNull(episode.error?.code),
      error_message: pgTextOrNull(episode.error?.message),
      answer: pgTextOrNull(episode.answer),
      goal: pgTextOrNull(episode.goal),
      perturbed: episode.perturbed !== undefined,
      verdict: episode.verdict ? jsonText(episode.verdict) : null,
      failure_mode: diagnosis?.mode ?? null,
      failure_evidence: diagnosis ? jsonText(diagnosis.evidence) : null,
      failure_also: diagnosis ? diagnosis.also : null,
      started_at: episode.started_at,
      duration_ms: episode.duration_ms,
    });
    calls.forEach((call, i) => {
      callRows.push({
        run_id,
        work_unit: episode.work_unit,
        call_index: i,
        tool: pgText(String(call.tool)),
        qualified: call.qualified ?? null,
        status: call.status,
        is_error: callIsError(call),
        invalid_arguments: invalid[i]!,
        fault_type: call.fault?.type ?? null,
        fault_executed: call.fault ? call.fault.executed : null,
        fault_detail: pgTextOrNull(call.fault?.detail),
        latency_ms: call.latency_ms,
        arguments: jsonText(call.arguments),
        result: jsonText(call.result),
      });
    });
    nodeRows.push(...verdictRows(run_id, episode.work_unit, episode.verdict));
  }

  const { scores } = derived;
  const scoreRows: Insertable<ResultsDatabase['run_scores']>[] = [
    { run_id, metric: 'success_rate', k: null, value: scores.success_rate.value, ci_low: scores.success_rate.ci?.low ?? null, ci_high: scores.success_rate.ci?.high ?? null, numerator: scores.success_rate.numerator, denominator: scores.success_rate.denominator },
    ...scores.pass_k.map((p) => ({ run_id, metric: `pass^${p.k}`, k: p.k, value: p.value, ci_low: p.ci?.low ?? null, ci_high: p.ci?.high ?? null, numerator: null, denominator: p.tasks })),
    { run_id, metric: 'tool_call_efficiency', k: null, value: scores.tool_call_efficiency.value, ci_low: null, ci_high: null, numerator: null, denominator: scores.tool_call_efficiency.episodes },
    { run_id, metric: 'hallucinated_tool_rate', k: null, value: scores.hallucinated_tool_rate.value, ci_low: null, ci_high: null, numerator: scores.hallucinated_tool_rate.numerator, denominator: scores.hallucinated_tool_rate.denominator },
    { run_id, metric: 'recovery_rate', k: null, value: scores.recovery_rate.value, ci_low: null, ci_high: null, numerator: scores.recovery_rate.numerator, denominator: scores.recovery_rate.denominator },
  ];

  const decided = await db.transaction().execute(async (tx) => {
    // One importer of a run at a time, deciding on what the database holds inside its own transaction.
    await sql`select pg_advisory_xact_lock(hashtext(${`mcpbench-import:${run_id}`}))`.execute(tx);
    const current = await tx.selectFrom('runs').select(['source_sha256', 'plan_fingerprint', 'units', 'unresolved_units', 'directory']).where('run_id', '=', run_id).executeTakeFirst();
    if (current?.source_sha256 === fingerprint) return { status: 'unchanged' as const };
    const refused = current && refusal(current, { plan_fingerprint: planFingerprint, units: standing.units, unresolved_units: standing.unresolved });
    if (refused) return { status: 'refused' as const, refused };
    await tx.deleteFrom('runs').where('run_id', '=', run_id).execute();
    for (const row of taskRows.values()) {
      await tx
        .insertInto('tasks')
        .values(row)
        .onConflict((oc) =>
          oc.column('task_hash').doUpdateSet({
            difficulty: sql`coalesce(tasks.difficulty, excluded.difficulty)`,
            information: sql`coalesce(tasks.information, excluded.information)`,
            required_tools: sql`coalesce(tasks.required_tools, excluded.required_tools)`,
            task: sql`coalesce(tasks.task, excluded.task)`,
          }),
        )
        .execute();
    }
    await tx
      .insertInto('runs')
      .values({
        run_id,
        directory: source.directory,
        record_version: typeof config.version === 'number' ? config.version : null,
        agent: config.agent,
        agent_label: identity.agent_label,
        model: identity.model,
        fault_profile: config.fault_profile,
        perturbation: config.perturbations.join(','),
        trials: config.trials,
        seed: config.seed,
        set_name: identity.set_name,
        month: identity.month,
        month_source: identity.month_source,
        created_at: config.created_at,
        imported_at: new Date(),
        source_sha256: fingerprint,
        config: jsonText(config),
        episode_records: source.records.length,
        warnings: jsonText(source.warnings),
        plan_fingerprint: planFingerprint,
        planned_units: standing.planned,
        units: standing.units,
        unresolved_units: standing.unresolved,
        completeness: standing.completeness,
        configuration: scoringConfiguration(config),
      })
      .execute();
    await insertChunked(tx, 'episodes', episodeRows, 400);
    await insertChunked(tx, 'calls', callRows, 1000);
    await insertChunked(tx, 'verdict_nodes', nodeRows, 2000);
    await insertChunked(tx, 'run_scores', scoreRows, 100);
    return { status: current ? ('replaced' as const) : ('imported' as const) };
  });
  return { ...outcome, ...decided };
}

/** Imports a Historical-YYYY-MM.json: the rotation and the tasks it retired (once per set and month). */
export async function importRotation(db: ResultsDb, file: string): Promise<ImportOutcome & { kind: 'rotation' }> {
  const manifest = readHistoricalManifest(file);
  const outcome = { kind: 'rotation' as const, path: resolve(file), set: manifest.set, month: manifest.month, tasks: manifest.retired.length };
  const existing = await db.selectFrom('rotations').select('month').where('set_name', '=', manifest.set).where('month', '=', manifest.month).executeTakeFirst();
  if (existing) return { ...outcome, status: 'unchanged' };
  const status = await db.transaction().execute(async (tx) => {
    await sql`select pg_advisory_xact_lock(hashtext(${`mcpbench-rotation:${manifest.set}:${manifest.month}`}))`.execute(tx);
    if (await tx.selectFrom('rotations').select('month').where('set_name', '=', manifest.set).where('month', '=', manifest.month).executeTakeFirst()) return 'unchanged' as const;
    await tx.insertInto('rotations').values({ set_name: manifest.set, month: manifest.month, tag: manifest.tag, seed: manifest.seed, share: manifest.share, source_file: resolve(file) }).execute();
    const rows = manifest.retired.map((t) => ({ set_name: manifest.set, month: manifest.month, task_id: t.task_id, task_hash: t.sha256, namespace: t.namespace, category: t.category, added: t.added }));
    await insertChunked(tx, 'retired_tasks', rows, 1000);
    return 'imported' as const;
  });
  return { ...outcome, status };
}

/** Imports everything the paths name: run folders, Historical manifests, folders of them. */
export async function importPaths(db: ResultsDb, paths: readonly string[], options: ImportOptions): Promise<ImportOutcome[]> {
  const { runs, rotations } = expandImportPaths(paths);
  const outcomes: ImportOutcome[] = [];
  for (const file of rotations) outcomes.push(await importRotation(db, file));
  for (const dir of runs) outcomes.push(await importRun(db, openSourceRun(dir), options));
  return outcomes;
}
