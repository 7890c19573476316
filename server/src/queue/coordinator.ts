/**
 * The coordinator of a queued run: the session's executor (runner/run.ts `Executor`) when the user says
 * `mcpbench run --queue redis://HOST:PORT`. The session plans the run, creates or resumes the run folder and
 * scores it exactly as it does in process; this executor only moves episodes through BullMQ:
 *
 * - one job per work unit still to run (job id `<run id>.<work unit>`, so enqueuing twice is a no-op), on
 *   the queue of the run's agent endpoint (protocol.ts), with that endpoint's global cap of episodes in
 *   flight when `--max-in-flight` is given;
 * - each finished job's record is appended to the run folder (the store of record, not Redis), its
 *   `episode-finished` emitted, and only then the job removed from Redis. Delivery is at least once; the
 *   journal makes it exactly once: a work unit that already has a scored record is never appended again;
 * - infrastructure errors are retried as in process (a new job for the same unit, `maxInfraRetries` times);
 * - reconciling the journal against Redis: at the start (a resumed run re-attaches to the jobs its killed
 *   coordinator left: finished ones are collected, running ones awaited, missing ones enqueued), whenever
 *   Redis comes back after a disconnection or restarts (its run id changes; with or without persistence,
 *   whatever it lost is enqueued again), and every `reconcileMs` as a safety net.
 *
 * Interrupting the coordinator (Ctrl-C) leaves the jobs in Redis: workers go on, and `--resume` collects
 * them. Notices say which workers serve the queue, and which refuse it (another mcpbench version).
 */
import { hostname } from 'node:os';
import { Queue, QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';
import { boxSealer, isSealedSource, keyFromEnvironment, type BoxSealer, type SealKey } from '../tasks/seal.ts';
import { agentEndpoint } from '../runner/agents/registry.ts';
import { specWorkUnit, unrunEpisode, type EpisodeSpec } from '../runner/episode.ts';
import { pendingSpecs, type ExecuteOptions, type Executor } from '../runner/run.ts';
import {
  jobIdFor,
  KEY_PREFIX,
  makePayload,
  QUEUE_PROTOCOL,
  QueueEntrySchema,
  queueNameFor,
  readEntries,
  readResult,
  REGISTRY_CHANNEL,
  REGISTRY_QUEUES,
  REGISTRY_WORKERS,
  RUN_FINISHED_CHANNEL,
  WORKER_GONE_MS,
  WorkerEntrySchema,
  type PayloadContext,
  type QueueEntry,
} from './protocol.ts';
import { checkRedis, connect, infoField, QueueError, redisFailure, redisTarget, type RedisTarget } from './redis.ts';
import { episodeRecordProblem, type EpisodeError, type EpisodeRecord } from '../record/schema.ts';
import { isScored } from '../record/work-units.ts';

export interface QueueExecutorOptions {
  /** `redis://HOST:PORT` */
  url: string;
  /** This mcpbench's version: only workers of the same version take the jobs. */
  version: string;
  /** The cap of episodes in flight for the run's agent endpoint, across all workers (BullMQ global concurrency). */
  maxInFlight?: number;
  /** The set key of a sealed run (default: MCPBENCH_SET_KEY). */
  setKey?: () => SealKey | string;
  /** A full reconcile of journal and Redis at least this often (default 30 s). */
  reconcileMs?: number;
  /** How often Redis (restarted?) and the workers are looked at (default 1 s). */
  watchMs?: number;
}

/** An executor that runs the episodes on queue workers (see the file comment). */
export function queueExecutor(options: QueueExecutorOptions): Executor {
  return (specs, execute) => new Coordinator(options, execute).run(specs);
}

interface Unit {
  spec: EpisodeSpec;
  jobId: string;
  attempt: number;
  /** When the job last recorded finished (its `finishedOn`): a job collected again is not recorded again. */
  collected?: number;
}

const CHUNK = 500;

class Coordinator {
  private readonly target: RedisTarget;
  private readonly units = new Map<string, Unit>();
  private readonly byJob = new Map<string, string>();
  /** Work units being collected or re-enqueued right now (reconcile leaves them alone). */
  private readonly busy = new Set<string>();
  private sealer: BoxSealer | undefined;
  private queue!: Queue;
  private connection!: Redis;
  private context!: PayloadContext;
  private endpoint!: string;
  private done!: () => void;
  private reconciling: Promise<void> | undefined;
  private failure: unknown;

  constructor(
    private readonly options: QueueExecutorOptions,
    private readonly execute: ExecuteOptions,
  ) {
    this.target = redisTarget(options.url);
  }

  private get runId() {
    return this.execute.store.config.run_id;
  }

  private notice(level: 'info' | 'warning', message: string) {
    this.execute.onEvent?.({ type: 'notice', run_id: this.runId, level, message });
  }

  async run(specs: EpisodeSpec[]): Promise<{ interrupted: boolean }> {
    const { store, seed } = this.execute;
    const config = store.config;
    let { runId: redisRunId } = await checkRedis(this.target);
    if (config.task_files.some(isSealedSource)) {
      try {
        this.sealer = boxSealer((this.options.setKey ?? keyFromEnvironment)());
      } catch (error) {
        throw new QueueError(`a sealed run's jobs are sealed with the set key: ${(error as Error).message}`, 'sealed-key');
      }
    }
    for (const spec of pendingSpecs(specs, store.episodes, seed)) {
      const unit = specWorkUnit(spec, seed);
      const jobId = jobIdFor(this.runId, unit);
      this.units.set(unit, { spec, jobId, attempt: 1 });
      this.byJob.set(jobId, unit);
    }
    if (this.units.size === 0) return { interrupted: false };

    this.endpoint = agentEndpoint(config.agent, config.agent_options);
    const name = queueNameFor(this.options.version, this.endpoint);
    this.context = {
      version: this.options.version,
      runId: this.runId,
      seed,
      agent: config.agent,
      agentOptions: config.agent_options,
      ...(this.execute.faultOptions ? { faultOptions: this.execute.faultOptions } : {}),
      ...(this.execute.startTimeoutMs !== undefined ? { startTimeoutMs: this.execute.startTimeoutMs } : {}),
      ...(this.execute.callTimeoutMs !== undefined ? { callTimeoutMs: this.execute.callTimeoutMs } : {}),
    };

    let lost = false;
    let closing = false;
    this.connection = connect(this.target);
    this.connection.on('close', () => {
      if (lost || closing) return;
      lost = true;
      this.notice('warning', `Redis at ${this.target.display} is unreachable; the run waits for it (finished episodes are saved)`);
    });
    this.connection.on('ready', () => {
      if (!lost) return;
      lost = false;
      this.notice('info', `Redis at ${this.target.display} is back: reconciling the journal with the queue`);
      void this.setUpQueue().then(() => this.reconcile()).catch(() => undefined);
    });
    this.queue = new Queue(name, { connection: this.connection, prefix: KEY_PREFIX });
    this.queue.on('error', () => undefined);
    const eventsConnection = connect(this.target);
    const events = new QueueEvents(name, { connection: eventsConnection, prefix: KEY_PREFIX });
    events.on('error', () => undefined);
    events.on('completed', ({ jobId }) => void this.collect(jobId));
    events.on('failed', ({ jobId }) => void this.collect(jobId));
    events.on('active', ({ jobId }) => this.started(jobId));

    const finished = new Promise<void>((resolve) => (this.done = resolve));
    const onAbort = () => this.done();
    this.execute.signal?.addEventListener('abort', onAbort, { once: true });
    if (this.execute.signal?.aborted) onAbort();
    const timers: NodeJS.Timeout[] = [];
    try {
      await events.waitUntilReady();
      await this.setUpQueue();
      const cap = await this.queue.getGlobalConcurrency();
      this.notice(
        'info',
        `queue ${name} on ${this.target.display}: ${this.units.size} episode(s) for workers of mcpbench ${this.options.version} ` +
          `(endpoint ${this.endpoint}; ${cap ? `at most ${cap} in flight across all workers` : 'no cap on episodes in flight'})`,
      );
      await this.reconcile();
      const workers = new WorkerReport(this.options.version, (level, message) => this.notice(level, message));
      let watching = false;
      timers.push(
        setInterval(() => {
          if (watching || lost) return;
          watching = true;
          void (async () => {
            try {
              const now = infoField(await this.connection.info('server'), 'run_id') ?? '';
              if (now && now !== redisRunId) {
                redisRunId = now;
                this.notice('warning', `Redis at ${this.target.display} restarted: reconciling the journal with the queue`);
                await this.setUpQueue();
                await this.reconcile();
              }
              workers.update(await this.connection.hgetall(REGISTRY_WORKERS));
            } catch {
              // Redis is away: the connection's events say so, and the next tick looks again.
            } finally {
              watching = false;
            }
          })();
        }, this.options.watchMs ?? 1_000),
        setInterval(() => void this.reconcile().catch(() => undefined), this.options.reconcileMs ?? 30_000),
      );
      if (this.units.size > 0) await finished;
      if (this.failure) throw this.failure;
      if (this.units.size === 0) await this.connection.publish(RUN_FINISHED_CHANNEL, this.runId).catch(() => 0);
    } catch (error) {
      throw redisFailure(error, this.target);
    } finally {
      closing = true;
      for (const timer of timers) clearInterval(timer);
      this.execute.signal?.removeEventListener('abort', onAbort);
      await events.close().catch(() => undefined);
      await this.queue.close().catch(() => undefined);
      // BullMQ leaves the connections it was given open.
      eventsConnection.disconnect();
      this.connection.disconnect();
    }
    return { interrupted: this.units.size > 0 };
  }

  /** Registers the queue for workers to find, and applies --max-in-flight (both are lost when Redis loses its data). */
  private async setUpQueue(): Promise<void> {
    const entry: QueueEntry = QueueEntrySchema.parse({ version: this.options.version, protocol: QUEUE_PROTOCOL, endpoint: this.endpoint, updated_at: new Date().toISOString() });
    await this.connection.hset(REGISTRY_QUEUES, this.queue.name, JSON.stringify(entry));
    await this.connection.publish(REGISTRY_CHANNEL, this.queue.name);
    if (this.options.maxInFlight !== undefined) await this.queue.setGlobalConcurrency(this.options.maxInFlight);
  }

  private started(jobId: string) {
    const unit = this.byJob.get(jobId);
    const entry = unit ? this.units.get(unit) : undefined;
    if (!unit || !entry) return;
    const { spec } = entry;
    const goal = spec.key.perturbation !== 'none' || spec.goal !== spec.task.goal ? { goal: spec.goal } : {};
    this.execute.onEvent?.({ type: 'episode-started', run_id: this.runId, work_unit: unit, key: spec.key, ...goal });
  }

  private async enqueue(units: readonly string[]): Promise<void> {
    for (let i = 0; i < units.length; i += CHUNK) {
      const jobs = units.slice(i, i + CHUNK).flatMap((unit) => {
        const entry = this.units.get(unit);
        if (!entry) return [];
        return [{ name: 'episode', data: makePayload(entry.spec, unit, entry.attempt, this.context, this.sealer), opts: { jobId: entry.jobId } }];
      });
      await this.queue.addBulk(jobs);
    }
  }

  /**
   * The journal against Redis, for every work unit still to run: a finished job is collected, a job Redis no
   * longer holds is enqueued again, a waiting or running one is left alone. One at a time.
   */
  private reconcile(): Promise<void> {
    this.reconciling ??= (async () => {
      try {
        const missing: string[] = [];
        const units = [...this.units.keys()];
        for (let i = 0; i < units.length; i += CHUNK) {
          const chunk = units.slice(i, i + CHUNK).filter((unit) => !this.busy.has(unit));
          const states = await Promise.all(chunk.map((unit) => this.queue.getJobState(this.units.get(unit)!.jobId)));
          const collecting: Promise<void>[] = [];
          chunk.forEach((unit, n) => {
            const state = states[n];
            if (state === 'completed' || state === 'failed') collecting.push(this.collect(this.units.get(unit)!.jobId));
            else if (state === 'unknown') missing.push(unit);
          });
          await Promise.all(collecting);
        }
        const enqueue = missing.filter((unit) => this.units.has(unit) && !this.busy.has(unit));
        for (const unit of enqueue) this.busy.add(unit);
        try {
          await this.enqueue(enqueue);
        } finally {
          for (const unit of enqueue) this.busy.delete(unit);
        }
      } finally {
        this.reconciling = undefined;
      }
    })();
    return this.reconciling;
  }

  /**
   * A finished job: its record appended (unless this result is already recorded), then the job removed and,
   * for an infrastructure error with attempts left, enqueued again. Idempotent: a job collected twice (an
   * event and a reconcile, or a removal Redis lost) is recorded once.
   */
  private async collect(jobId: string): Promise<void> {
    const unit = this.byJob.get(jobId);
    if (!unit || this.busy.has(unit)) return;
    const entry = this.units.get(unit);
    this.busy.add(unit);
    try {
      let finished: { finishedOn: number; returnValue: unknown; failedReason: string | undefined };
      try {
        const job = await this.queue.getJob(jobId);
        if (!job) return;
        const state = await job.getState();
        if (state !== 'completed' && state !== 'failed') return;
        // A second delivery of a unit already recorded (at-least-once): the journal has it; drop the job.
        if (!entry) return void (await this.queue.remove(jobId));
        finished = { finishedOn: job.finishedOn ?? 0, returnValue: state === 'completed' ? job.returnvalue : undefined, failedReason: job.failedReason };
      } catch {
        // Redis went away mid-way: the job stays where it is, and the next reconcile collects it.
        return;
      }
      if (entry.collected !== finished.finishedOn) {
        const record = this.recordOf(entry, unit, jobId, finished.returnValue, finished.failedReason);
        record.attempt = entry.attempt;
        // The run folder refusing a record (a full disk ...) ends the run: nothing may be collected past it.
        this.execute.store.append(record);
        entry.collected = finished.finishedOn;
        this.execute.onEvent?.({ type: 'episode-finished', run_id: this.runId, result: record });
        if (!isScored(record) && entry.attempt <= (this.execute.maxInfraRetries ?? 2)) entry.attempt++;
        else {
          this.units.delete(unit);
          if (this.units.size === 0) this.done();
          return void (await this.queue.remove(jobId).catch(() => 0));
        }
      }
      try {
        await this.queue.remove(jobId);
        await this.enqueue([unit]);
      } catch {
        // The next reconcile enqueues it (or removes the old job first, as here).
      }
    } catch (error) {
      this.failure ??= error;
      this.done();
    } finally {
      this.busy.delete(unit);
    }
  }

  private recordOf(entry: Unit, unit: string, jobId: string, returnValue: unknown, failedReason: string | undefined): EpisodeRecord {
    const infra = (error: EpisodeError) => unrunEpisode(entry.spec, { runId: this.runId, seed: this.execute.seed }, error);
    if (returnValue === undefined) return infra({ kind: 'infra', code: 'harness', message: `the job failed on a worker: ${failedReason ?? 'no reason given'}` });
    const read = readResult(returnValue, jobId, this.sealer);
    if ('error' in read) return infra({ kind: 'infra', code: 'harness', message: read.error });
    if (read.outcome.type === 'refused') return infra(read.outcome.error);
    const { record } = read.outcome;
    if (record.work_unit !== unit || record.run_id !== this.runId) {
      return infra({ kind: 'infra', code: 'harness', message: `worker ${read.host} handed back the record of another episode (${record.run_id} ${record.work_unit})`, host: read.host });
    }
    const problem = episodeRecordProblem(record);
    return problem ? infra({ kind: 'infra', code: 'harness', message: `worker ${read.host} handed back an inconsistent record: ${problem}`, host: read.host }) : record;
  }
}

/** Says which workers serve the queue (this version) and which refuse it (another version), when that changes. */
class WorkerReport {
  private last = '';
  private since = Date.now();
  private warnedIdle = false;

  constructor(
    private readonly version: string,
    private readonly notice: (level: 'info' | 'warning', message: string) => void,
  ) {}

  update(hash: Record<string, string>) {
    const now = Date.now();
    const live = [...readEntries(hash, WorkerEntrySchema).values()].filter((w) => now - w.seen_at < WORKER_GONE_MS);
    const ours = live.filter((w) => w.version === this.version && w.protocol === QUEUE_PROTOCOL);
    const others = live.filter((w) => !ours.includes(w));
    const summary = JSON.stringify([ours.map((w) => w.id).sort(), others.map((w) => w.id).sort()]);
    if (summary !== this.last) {
      this.last = summary;
      this.since = now;
      this.warnedIdle = false;
      const slots = ours.reduce((n, w) => n + w.concurrency, 0);
      if (ours.length) this.notice('info', `workers: ${ours.length} (${slots} episode slot(s)) on ${[...new Set(ours.map((w) => w.host))].join(', ')}`);
      for (const w of others) this.notice('warning', `worker ${w.id} runs mcpbench ${w.version} and refuses this run's jobs (this run needs mcpbench ${this.version})`);
    }
    if (!ours.length && !this.warnedIdle && now - this.since > 10_000) {
      this.warnedIdle = true;
      this.notice('warning', `no worker of mcpbench ${this.version} is serving the queue: start one with mcpbench worker --queue <url> (this host: ${hostname()})`);
    }
  }
}
