/**
 * The submission service's engine side: submissions (an endpoint URL or a container image run on the dev
 * set), their executor, and the public reads (the dev set's tasks, the leaderboard, published runs). It knows
 * nothing of HTTP: `service/http.ts` maps the contract's operations onto these methods.
 *
 * A submission is a row of `submissions` (results database). The executor takes queued ones in order, at most
 * `concurrency` at a time, and hands each to the `launch` function it was given (the engine's run session: an
 * in-process executor on one machine, the queue's coordinator with `--queue`); progress is written as episodes
 * finish, then the run folder is imported into the results database under the submission's label, and the
 * scores become the submission's result. An account has a quota of submissions queued or running.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { canonicalHash, canonicalJson } from '../canonical-json.ts';
import type { Registry } from '../mcp/registry.ts';
import { buildLeaderboard, type Leaderboard } from '../results/leaderboard.ts';
import type { ResultsDb } from '../results/db.ts';
import { importPaths } from '../results/import.ts';
import { ENDPOINT_SIGNING_KEY_ENV } from '../runner/agents/endpoint.ts';
import { imageId, type ContainerEngine } from '../runner/container.ts';
import type { Scores } from '../scoring/metrics.ts';
import { collectTaskFiles } from '../tasks/files.ts';
import { loadTasks, type LoadedTask } from '../tasks/load.ts';
import { problemOf, randomId, ServiceError, type Caller, type Problem } from './store.ts';


/** What a submission asks to run (schemas/openapi.yaml `SubmissionRequest`, validated before it gets here). */
export interface SubmissionRequest {
  agent: { kind: 'endpoint'; url: string } | { kind: 'image'; image: string };
  set: string;
  label?: string;
  trials?: number;
  faults?: 'none' | 'light' | 'medium' | 'heavy';
  publish?: boolean;
}

/** The events of a run the executor reads (the engine's RunEvent, structurally). */
export type LaunchEvent =
  | { type: 'run-started'; episodes: number; recorded: number }
  | { type: 'episode-finished'; result: { status: string } }
  | { type: string };

export interface LaunchRequest {
  runId: string;
  /** Where the run folder goes (`<out>/<run id>`). */
  out: string;
  tasks: readonly string[];
  agent: 'endpoint' | 'image';
  agentOptions: Record<string, unknown>;
  trials: number;
  faults: string;
  set: { name: string; month: string };
  /** The agents' environment: the process's, plus the endpoint's signing key. */
  env: Record<string, string | undefined>;
  signal: AbortSignal;
}

export interface LaunchOutcome {
  run_id: string;
  directory: string;
  interrupted: boolean;
  scores: Scores;
}

/** Runs one submission's run to its end (the engine's run session). */
export type Launcher = (request: LaunchRequest, onEvent: (event: LaunchEvent) => void) => Promise<LaunchOutcome>;

export interface ServiceOptions {
  db: ResultsDb;
  registry: Registry;
  launch: Launcher;
  /** The public dev set: a folder of task files. */
  devSet: string;
  /** Where run folders go. */
  runsDir: string;
  /** Submissions running at once, over all accounts (default 1). */
  concurrency?: number;
  /** Whether an endpoint may be on this machine or a private network (default false: for tests and one machine only). */
  allowPrivateEndpoints?: boolean;
  /** How an image reference resolves to the id it runs as (default: podman, then docker, on this machine). */
  resolveImage?: (image: string) => string | undefined;
  env?: Record<string, string | undefined>;
  now?: () => Date;
  log?: (line: string) => void;
}

type Status = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

interface Progress {
  episodes: number;
  done: number;
  passed: number;
  failed: number;
  agent_errors: number;
  infra_errors: number;
}

const EMPTY_PROGRESS: Progress = { episodes: 0, done: 0, passed: 0, failed: 0, agent_errors: 0, infra_errors: 0 };

/** A submission as the contract shows it (`Submission`). */
export interface SubmissionView {
  id: string;
  status: Status;
  created_at: string;
  started_at?: string;
  finished_at?: string;
  set: string;
  month: string;
  sealed: boolean;
  agent: { kind: 'endpoint'; url: string } | { kind: 'image'; image: string; image_id?: string };
  label: string;
  trials: number;
  faults: string;
  publish: boolean;
  progress: Progress;
  result: Record<string, unknown> | null;
  error: Problem | null;
}

const IDEMPOTENCY_MS = 24 * 3600_000;

export const monthOf = (date: Date) => date.toISOString().slice(0, 7);

/** Whether a URL's host is this machine or a private network, by its literal name (a name that resolves there is not caught). */
export function isPrivateHost(url: string): boolean {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost') || host === '::1' || host === '::' || host.startsWith('fe80:') || host.startsWith('fc') || host.startsWith('fd')) return true;
  const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(host);
  if (!v4) return false;
  const [a, b] = [Number(v4[1]), Number(v4[2])];
  return a === 127 || a === 10 || a === 0 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 169 && b === 254) || (a === 100 && b >= 64 && b <= 127);
}

function defaultResolveImage(image: string): string | undefined {
  for (const engine of ['podman', 'docker'] as ContainerEngine[]) {
    try {
      const id = imageId(engine, image);
      if (id) return id;
    } catch {
      // that engine is not here
    }
  }
  return undefined;
}

/** The result a submission shows: the run's scores on the contract's four axes (`SubmissionResult`). */
export function resultOf(runId: string, scores: Scores): Record<string, unknown> {
  return {
    run_id: runId,
    tasks: scores.tasks,
    success_rate: scores.success_rate,
    tool_call_efficiency: scores.tool_call_efficiency,
    hallucinated_tool_rate: scores.hallucinated_tool_rate,
    recovery_rate: scores.recovery_rate,
    pass_k: scores.pass_k,
    by_namespace: scores.by_namespace,
    by_category: scores.by_category,
  };
}

const iso = (value: Date | string | null | undefined) => (value === null || value === undefined ? undefined : new Date(value).toISOString());

type SubmissionRow = Awaited<ReturnType<SubmissionService['row']>>;

export class SubmissionService {
  readonly db: ResultsDb;
  private readonly options: ServiceOptions;
  private readonly now: () => Date;
  private readonly tasks: LoadedTask[];
  private readonly taskById: Map<string, LoadedTask>;
  private readonly running = new Map<string, AbortController>();
  private readonly settled = new Set<Promise<void>>();
  private boardCache = new Map<string, Promise<Leaderboard>>();
  private stopped = false;
  private pumping = false;

  private constructor(options: ServiceOptions, tasks: LoadedTask[]) {
    this.options = options;
    this.db = options.db;
    this.now = options.now ?? (() => new Date());
    this.tasks = [...tasks].sort((a, b) => (a.task.id < b.task.id ? -1 : a.task.id > b.task.id ? 1 : 0));
    this.taskById = new Map(this.tasks.map((t) => [t.task.id, t]));
  }

  /**
   * Loads (and lints) the dev set, marks submissions a stopped service left running as failed, and starts
   * the queued ones.
   */
  static async start(options: ServiceOptions): Promise<SubmissionService> {
    const tasks = loadTasks(collectTaskFiles([options.devSet]), options.registry);
    const service = new SubmissionService(options, tasks);
    await options.db
      .updateTable('submissions')
      .set({ status: 'failed', finished_at: service.now(), error: JSON.stringify(problemOf('internal', 'the service stopped while this submission ran; submit it again')) })
      .where('status', '=', 'running')
      .execute();
    service.pump();
    return service;
  }

  /** Stops taking queued submissions and aborts the running ones (they are marked failed). */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const controller of this.running.values()) controller.abort(new Error('the service is stopping'));
    await Promise.all([...this.settled]);
  }

  // ------------------------------------------------------------------------------------------ submissions

  private async row(accountId: string, id: string) {
    return this.db.selectFrom('submissions').selectAll().where('submission_id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
  }

  private view(row: NonNullable<SubmissionRow>): SubmissionView {
    const agent = row.agent as SubmissionView['agent'];
    return {
      id: row.submission_id,
      status: row.status,
      created_at: iso(row.created_at)!,
      ...(row.started_at ? { started_at: iso(row.started_at) } : {}),
      ...(row.finished_at ? { finished_at: iso(row.finished_at) } : {}),
      set: row.set_name,
      month: row.month,
      sealed: false,
      agent,
      label: row.label,
      trials: row.trials,
      faults: row.faults,
      publish: row.publish,
      progress: row.progress as Progress,
      result: (row.result as Record<string, unknown> | null) ?? null,
      error: (row.error as Problem | null) ?? null,
    };
  }

  /** One of the caller's submissions; another account's or an unknown id is `not-found`. */
  async get(caller: Caller, id: string): Promise<SubmissionView> {
    const row = await this.row(caller.account.account_id, id);
    if (!row) throw new ServiceError('not-found');
    return this.view(row);
  }

  /**
   * A new submission (`created`, with an endpoint's secret), or with an idempotency key used before for the
   * same body, that earlier one (`created: false`). Throws ServiceError: set-unavailable, image-unavailable,
   * endpoint-unreachable, idempotency-key-reused, quota-exceeded.
   */
  async submit(caller: Caller, request: SubmissionRequest, idempotencyKey?: string): Promise<{ created: boolean; submission: SubmissionView; endpointSecret?: string }> {
    const account = caller.account;
    const requestHash = canonicalHash(request);
    if (request.set !== 'dev') {
      throw new ServiceError('set-unavailable', request.set === 'private' ? 'this service has no private set configured' : `this service serves the set dev, not ${request.set}`);
    }
    let agent: SubmissionView['agent'];
    let endpointSecret: string | undefined;
    if (request.agent.kind === 'endpoint') {
      if (!this.options.allowPrivateEndpoints && isPrivateHost(request.agent.url)) {
        throw new ServiceError('endpoint-unreachable', `${new URL(request.agent.url).hostname} is on this machine or a private network; the service only calls public endpoints`);
      }
      agent = { kind: 'endpoint', url: request.agent.url };
      endpointSecret = randomBytes(32).toString('base64url');
    } else {
      const id = (this.options.resolveImage ?? defaultResolveImage)(request.agent.image);
      if (!id) throw new ServiceError('image-unavailable', `${request.agent.image} is not on the service's machine (nothing is pulled at run time)`);
      agent = { kind: 'image', image: request.agent.image, image_id: id.startsWith('sha256:') ? id : `sha256:${id}` };
    }
    const now = this.now();
    const outcome = await this.db.transaction().execute(async (trx) => {
      // The account row is the lock: two submissions of one account are decided one after the other.
      await trx.selectFrom('accounts').select('account_id').where('account_id', '=', account.account_id).forUpdate().execute();
      if (idempotencyKey !== undefined) {
        const earlier = await trx.selectFrom('submissions').selectAll().where('account_id', '=', account.account_id).where('idempotency_key', '=', idempotencyKey).executeTakeFirst();
        if (earlier && now.getTime() - new Date(earlier.created_at).getTime() < IDEMPOTENCY_MS) {
          if (earlier.request_sha256 !== requestHash) throw new ServiceError('idempotency-key-reused', 'this Idempotency-Key was used with another request body');
          return { created: false as const, row: earlier };
        }
        if (earlier) await trx.updateTable('submissions').set({ idempotency_key: null }).where('submission_id', '=', earlier.submission_id).execute();
      }
      const inFlight = await trx
        .selectFrom('submissions')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('account_id', '=', account.account_id)
        .where('status', 'in', ['queued', 'running'])
        .executeTakeFirstOrThrow();
      if (Number(inFlight.n) >= account.max_in_flight) {
        throw new ServiceError('quota-exceeded', `${inFlight.n} submissions of this account are in flight (the quota is ${account.max_in_flight})`);
      }
      const row = await trx
        .insertInto('submissions')
        .values({
          submission_id: randomId('sub', 26),
          account_id: account.account_id,
          status: 'queued',
          set_name: request.set,
          month: monthOf(now),
          agent: JSON.stringify(agent),
          label: request.label ?? account.name,
          trials: request.trials ?? 1,
          faults: request.faults ?? 'none',
          publish: request.publish ?? false,
          endpoint_secret: endpointSecret ?? null,
          idempotency_key: idempotencyKey ?? null,
          request_sha256: requestHash,
          progress: JSON.stringify(EMPTY_PROGRESS),
          created_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return { created: true as const, row };
    });
    if (outcome.created) this.pump();
    return { created: outcome.created, submission: this.view(outcome.row), ...(outcome.created && endpointSecret ? { endpointSecret } : {}) };
  }

  /** Starts queued submissions, oldest first, while there is room. */
  private pump(): void {
    if (this.pumping || this.stopped) return;
    this.pumping = true;
    const next = async () => {
      try {
        while (!this.stopped && this.running.size < (this.options.concurrency ?? 1)) {
          const row = await this.db.selectFrom('submissions').selectAll().where('status', '=', 'queued').where('submission_id', 'not in', ['', ...this.running.keys()]).orderBy('created_at').orderBy('submission_id').executeTakeFirst();
          if (!row) break;
          const controller = new AbortController();
          this.running.set(row.submission_id, controller);
          const done: Promise<void> = this.execute(row, controller.signal)
            .catch((error: unknown) => this.options.log?.(`submission ${row.submission_id}: ${(error as Error).message}`))
            .finally(() => {
              this.running.delete(row.submission_id);
              this.settled.delete(done);
              this.pump();
            });
          this.settled.add(done);
        }
      } finally {
        this.pumping = false;
      }
    };
    void next().catch((error: unknown) => this.options.log?.(`executor: ${(error as Error).message}`));
  }

  private async execute(row: NonNullable<SubmissionRow>, signal: AbortSignal): Promise<void> {
    const id = row.submission_id;
    const runId = `run-${id.slice(4)}`;
    const agent = row.agent as SubmissionView['agent'];
    const progress: Progress = { ...EMPTY_PROGRESS };
    await this.db.updateTable('submissions').set({ status: 'running', started_at: this.now(), run_id: runId }).where('submission_id', '=', id).execute();
    let writing = Promise.resolve();
    let lastWrite = 0;
    const writeProgress = (force = false) => {
      if (!force && Date.now() - lastWrite < 250) return;
      lastWrite = Date.now();
      const snapshot = JSON.stringify(progress);
      writing = writing.then(() => this.db.updateTable('submissions').set({ progress: snapshot }).where('submission_id', '=', id).execute().then(() => undefined)).catch(() => undefined);
    };
    const onEvent = (event: LaunchEvent) => {
      if (event.type === 'run-started' && 'episodes' in event) {
        progress.episodes = event.episodes;
        writeProgress(true);
      } else if (event.type === 'episode-finished' && 'result' in event) {
        const status = event.result.status;
        if (status === 'infra_error') progress.infra_errors++;
        else {
          progress.done++;
          if (status === 'passed') progress.passed++;
          else if (status === 'agent_error') progress.agent_errors++;
          else progress.failed++;
        }
        writeProgress();
      }
    };
    const env: Record<string, string | undefined> = { ...(this.options.env ?? process.env) };
    if (row.endpoint_secret) env[ENDPOINT_SIGNING_KEY_ENV] = row.endpoint_secret;
    else delete env[ENDPOINT_SIGNING_KEY_ENV];
    try {
      const outcome = await this.options.launch(
        {
          runId,
          out: this.options.runsDir,
          tasks: this.tasks.map((t) => t.file),
          agent: agent.kind,
          agentOptions: agent.kind === 'endpoint' ? { url: agent.url } : { image: agent.image },
          trials: row.trials,
          faults: row.faults,
          set: { name: row.set_name, month: row.month },
          env,
          signal,
        },
        onEvent,
      );
      if (outcome.interrupted) throw new Error('the run was interrupted');
      writeProgress(true);
      await writing;
      await importPaths(this.db, [outcome.directory], { registry: this.options.registry, tasks: [this.options.devSet], agentLabel: row.label, set: row.set_name, month: row.month });
      this.boardCache.clear();
      await this.db
        .updateTable('submissions')
        .set({ status: 'succeeded', finished_at: this.now(), progress: JSON.stringify(progress), result: JSON.stringify(resultOf(outcome.run_id, outcome.scores)) })
        .where('submission_id', '=', id)
        .execute();
    } catch (error) {
      await writing;
      const detail = signal.aborted ? 'the service stopped while this submission ran; submit it again' : `the run could not be completed: ${(error as Error).message}`;
      const code = !signal.aborted && agent.kind === 'image' && /image/i.test((error as Error).message) ? 'image-unavailable' : 'internal';
      await this.db
        .updateTable('submissions')
        .set({ status: 'failed', finished_at: this.now(), progress: JSON.stringify(progress), error: JSON.stringify(problemOf(code, detail.slice(0, 2000))) })
        .where('submission_id', '=', id)
        .execute();
    }
  }

  // ------------------------------------------------------------------------------------------ public reads

  /** A page of the dev set's tasks, by id, after `cursor` (the last id of the previous page, base64url). */
  listTasks(query: { namespace?: string; category?: string; difficulty?: string; limit?: number; cursor?: string }): { tasks: Record<string, unknown>[]; next: string | null } {
    let after = '';
    if (query.cursor !== undefined) {
      after = Buffer.from(query.cursor, 'base64url').toString('utf8');
      if (!after || Buffer.from(after, 'utf8').toString('base64url') !== query.cursor) throw new ServiceError('invalid-request', 'the cursor is not one this service gave', [{ pointer: 'query/cursor', detail: 'not a cursor of this service' }]);
    }
    const limit = query.limit ?? 50;
    const matching = this.tasks.filter(({ task }) => {
      const servers = Array.isArray(task.server) ? task.server : [task.server];
      return (
        task.id > after &&
        (query.namespace === undefined || servers.includes(query.namespace)) &&
        (query.category === undefined || task.category === query.category) &&
        (query.difficulty === undefined || task.difficulty === query.difficulty)
      );
    });
    const page = matching.slice(0, limit);
    return {
      tasks: page.map(({ task, hash }) => ({ id: task.id, server: task.server, category: task.category, difficulty: task.difficulty, max_steps: task.max_steps, goal: task.goal, sha256: hash })),
      next: matching.length > limit ? Buffer.from(page[page.length - 1]!.task.id, 'utf8').toString('base64url') : null,
    };
  }

  /** A dev-set task as its file holds it, and its canonical hash; anything else (a private task too) is `not-found`. */
  getTask(id: string): { task: unknown; hash: string } {
    const loaded = this.taskById.get(id);
    if (!loaded) throw new ServiceError('not-found');
    return { task: JSON.parse(loaded.text ?? readFileSync(loaded.file, 'utf8')), hash: loaded.hash };
  }

  /** The leaderboard (`mcpbench leaderboard`'s rows), report links pointing at published runs only. */
  async leaderboard(query: { set?: string; month?: string }): Promise<Leaderboard> {
    const key = canonicalJson({ set: query.set ?? null });
    let board = this.boardCache.get(key);
    if (!board) {
      board = this.buildBoard(query.set);
      this.boardCache.set(key, board);
      board.catch(() => this.boardCache.delete(key));
    }
    const full = await board;
    return { ...full, sections: full.sections.filter((s) => query.month === undefined || s.month === query.month) };
  }

  private async buildBoard(set: string | undefined): Promise<Leaderboard> {
    const board = await buildLeaderboard(this.db, set === undefined ? {} : { set });
    const published = new Set((await this.db.selectFrom('submissions').select('run_id').where('publish', '=', true).where('status', '=', 'succeeded').execute()).map((r) => r.run_id));
    return {
      ...board,
      sections: board.sections.map((section) => ({
        ...section,
        entries: section.entries.map((entry) => ({ ...entry, runs: entry.runs.map((r) => ({ run_id: r.run_id, report: published.has(r.run_id) ? `/runs/${encodeURIComponent(r.run_id)}` : null, completeness: r.completeness })) })),
      })),
    };
  }

  /** A run: published, or the caller's own; anything else is `not-found` (never told apart). */
  async getRun(id: string, caller: Caller | undefined): Promise<Record<string, unknown>> {
    const sub = await this.db.selectFrom('submissions').selectAll().where('run_id', '=', id).where('status', '=', 'succeeded').executeTakeFirst();
    if (!sub || !(sub.publish || (caller && caller.account.account_id === sub.account_id && caller.token.scopes.includes('submissions')))) throw new ServiceError('not-found');
    const episodes = await this.db.selectFrom('episodes').selectAll().where('run_id', '=', id).where('status', '!=', 'infra_error').orderBy('task_id').orderBy('trial').orderBy('work_unit').execute();
    const calls = await this.db.selectFrom('calls').select(['work_unit', 'call_index', 'tool', 'status', 'fault_type', 'arguments', 'result', 'latency_ms']).where('run_id', '=', id).orderBy('work_unit').orderBy('call_index').execute();
    const byUnit = new Map<string, typeof calls>();
    for (const call of calls) byUnit.set(call.work_unit, [...(byUnit.get(call.work_unit) ?? []), call]);
    return {
      run_id: id,
      set: sub.set_name,
      month: sub.month,
      label: sub.label,
      published: sub.publish,
      redacted: false,
      scores: sub.result,
      episodes: episodes.map((e) => ({
        task: e.task_id,
        trial: e.trial,
        fault_profile: e.fault_profile,
        perturbation: e.perturbation,
        status: e.status,
        passed: e.passed,
        ...(e.goal !== null ? { goal: e.goal } : {}),
        ...(e.answer !== null ? { answer: e.answer } : {}),
        calls: (byUnit.get(e.work_unit) ?? []).map((c) => ({
          index: c.call_index,
          tool: c.tool,
          status: c.status,
          ...(c.fault_type !== null ? { fault: c.fault_type } : {}),
          arguments: c.arguments,
          result: c.result,
          latency_ms: c.latency_ms,
        })),
      })),
    };
  }
}

