/**
 * A queue worker (`mcpbench worker --queue redis://HOST:PORT`): takes episode jobs from every queue of its
 * own mcpbench version (the registry says which exist; it looks again every few seconds), rebuilds each
 * episode's spec from the job (the task, its hash and work unit checked), runs it with the same engine as an
 * in-process run (`runEpisode`: sandboxes, gateway, faults, the agent from the agent registry with keys from
 * this machine's environment), and hands back the episode record. It never writes a run folder.
 *
 * Leases (BullMQ locks): a job taken is leased for `leaseMs` (default 30 s) and the lease renewed every
 * half of it while the episode runs. A worker that dies (SIGKILL, a lost machine) stops renewing; every
 * `stallCheckMs` (default 15 s) the live workers look for jobs whose lease lapsed and put them back in the
 * queue, so the episode runs again elsewhere after at most `leaseMs + 2 * stallCheckMs`. A job whose worker
 * was lost more than `maxStalls` times (default 3) fails, and the coordinator records it as an infrastructure
 * error (and retries it as a new job like any other).
 *
 * Servers ready before they are needed, as in process (runner/episode.ts `EpisodePool`): a worker takes up to
 * `concurrency + 2` jobs per queue and starts each one's servers as soon as it has it, in their own new
 * sandboxes, while its agent waits for one of `concurrency` slots. A taken job is leased (and counts against
 * `--max-in-flight`) from the moment it is taken.
 *
 * `stop()` (SIGTERM, Ctrl-C) takes no new job and returns when the episodes running have been handed back.
 * A job of another mcpbench version is never taken: its queue is refused, with a log line saying why.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import pLimit from 'p-limit';
import { boxSealer, keyFromEnvironment, type BoxSealer } from '../tasks/seal.ts';
import type { Registry } from '../mcp/registry.ts';
import { namespacesOf } from '../mcp/names.ts';
import { AgentOptionsError, createAgent } from '../runner/agents/registry.ts';
import type { Agent } from '../runner/agents/agent.ts';
import { POOL_EXTRA, prepareEpisode, removeLeftoverSandboxes, runEpisode, specWorkUnit, type EpisodeEnvironment, type EpisodeSpec } from '../runner/episode.ts';
import type { SandboxBackend } from '../runner/sandbox.ts';
import { canonicalHash } from '../canonical-json.ts';
import { TaskSchema } from '../tasks/model.ts';
import {
  KEY_PREFIX,
  makeResult,
  PayloadError,
  QUEUE_PROTOCOL,
  QueueEntrySchema,
  readEntries,
  readPayload,
  REGISTRY_CHANNEL,
  REGISTRY_QUEUES,
  REGISTRY_WORKERS,
  RUN_FINISHED_CHANNEL,
  WorkerEntrySchema,
  type JobOutcome,
  type JobResult,
} from './protocol.ts';
import { checkRedis, connect, redisTarget, type RedisTarget } from './redis.ts';
import type { EpisodeError } from '../record/schema.ts';
import { taskNamespaces } from '../tasks/vocabulary.ts';

export const DEFAULT_LEASE_MS = 30_000;
export const DEFAULT_STALL_CHECK_MS = 15_000;
export const DEFAULT_MAX_STALLS = 3;

export interface QueueWorkerOptions {
  /** `redis://HOST:PORT` */
  url: string;
  /** This mcpbench's version: the worker serves only the queues of this version. */
  version: string;
  registry: Registry;
  backend: SandboxBackend;
  /** Episodes at a time, per agent endpoint queue. */
  concurrency: number;
  leaseMs?: number;
  stallCheckMs?: number;
  maxStalls?: number;
  /** How often the registry is read for new queues and the heartbeat written (default 2 s). */
  discoverMs?: number;
  /** Where agents read their keys and the set key is read (default: process.env). */
  env?: Record<string, string | undefined>;
  /** The name this worker gives in records and logs (default: the host name). */
  host?: string;
  /** One line per event (taken, finished, refused, connection lost ...). */
  log: (line: string) => void;
}

export interface QueueWorker {
  readonly id: string;
  readonly host: string;
  /** Takes no new job; resolves when the episodes running have been handed back and the connections closed. */
  stop(): Promise<void>;
}

/** Starts a worker; rejects (QueueError) when Redis cannot be reached or does not suit the queue. */
export async function startQueueWorker(options: QueueWorkerOptions): Promise<QueueWorker> {
  const target = redisTarget(options.url);
  await checkRedis(target);
  const worker = new EpisodeWorker(options, target);
  await worker.start();
  return worker;
}

class EpisodeWorker implements QueueWorker {
  readonly host: string;
  readonly id: string;
  private readonly env: Record<string, string | undefined>;
  private readonly started = new Date().toISOString();
  private readonly workers = new Map<string, { worker: Worker; connection: Redis }>();
  private readonly refused = new Set<string>();
  private readonly agents = new Map<string, Agent>();
  private sealer: BoxSealer | undefined;
  private connection!: Redis;
  private subscriber!: Redis;
  private timer: NodeJS.Timeout | undefined;
  private stopping: Promise<void> | undefined;
  private unreachable = false;

  constructor(
    private readonly options: QueueWorkerOptions,
    private readonly target: RedisTarget,
  ) {
    this.host = options.host ?? hostname();
    this.id = `${this.host}/${process.pid}/${randomBytes(2).toString('hex')}`;
    this.env = options.env ?? process.env;
  }

  async start(): Promise<void> {
    this.connection = connect(this.target, (error) => this.connectionError(error));
    this.connection.on('ready', () => {
      if (!this.unreachable) return;
      this.unreachable = false;
      this.options.log(`Redis at ${this.target.display} is back`);
    });
    // A new queue is served as soon as a coordinator announces it; the periodic look is the safety net.
    this.subscriber = connect(this.target);
    this.subscriber.on('message', (channel: string, message: string) => {
      if (channel !== RUN_FINISHED_CHANNEL) return void this.tick();
      const removed = removeLeftoverSandboxes(message);
      if (removed) this.options.log(`removed ${removed} sandbox folder(s) of the finished run ${message}`);
    });
    await this.subscriber.subscribe(REGISTRY_CHANNEL, RUN_FINISHED_CHANNEL);
    await this.tick();
    this.timer = setInterval(() => void this.tick(), this.options.discoverMs ?? 2_000);
    this.options.log(
      `worker ${this.id} (mcpbench ${this.options.version}, ${this.options.concurrency} episode(s) at a time per endpoint, sandbox ${this.options.backend}, ` +
        `lease ${(this.options.leaseMs ?? DEFAULT_LEASE_MS) / 1000} s) waiting for jobs on ${this.target.display}`,
    );
  }

  private connectionError(error: Error) {
    if (this.unreachable || this.stopping) return;
    this.unreachable = true;
    this.options.log(`Redis at ${this.target.display} is unreachable (${error.message}); retrying, the episodes running go on`);
  }

  /** The heartbeat, and a worker for each queue of this version not yet served. */
  private async tick(): Promise<void> {
    if (this.stopping) return;
    try {
      const entry = WorkerEntrySchema.parse({
        id: this.id,
        host: this.host,
        pid: process.pid,
        version: this.options.version,
        protocol: QUEUE_PROTOCOL,
        concurrency: this.options.concurrency,
        started_at: this.started,
        seen_at: Date.now(),
      });
      await this.connection.hset(REGISTRY_WORKERS, this.id, JSON.stringify(entry));
      for (const [name, queue] of readEntries(await this.connection.hgetall(REGISTRY_QUEUES), QueueEntrySchema)) {
        if (this.workers.has(name) || this.stopping) continue;
        if (queue.version !== this.options.version || queue.protocol !== QUEUE_PROTOCOL) {
          if (!this.refused.has(name)) {
            this.refused.add(name);
            this.options.log(`refusing queue ${name}: its jobs are for mcpbench ${queue.version} (queue protocol ${queue.protocol}); this worker is mcpbench ${this.options.version}`);
          }
          continue;
        }
        this.serve(name, queue.endpoint);
      }
    } catch {
      // Redis is away: connectionError said so; the next tick tries again.
    }
  }

  private serve(name: string, endpoint: string) {
    const connection = connect(this.target, (error) => this.connectionError(error));
    // Episodes run `concurrency` at a time; the jobs taken beyond that have their servers started meanwhile.
    const slots = pLimit(this.options.concurrency);
    const worker = new Worker(name, (job: Job) => this.process(job, slots), {
      connection,
      prefix: KEY_PREFIX,
      concurrency: this.options.concurrency + POOL_EXTRA,
      lockDuration: this.options.leaseMs ?? DEFAULT_LEASE_MS,
      stalledInterval: this.options.stallCheckMs ?? DEFAULT_STALL_CHECK_MS,
      maxStalledCount: this.options.maxStalls ?? DEFAULT_MAX_STALLS,
      // The coordinator removes each job once its record is in the run folder.
      removeOnComplete: { age: 7 * 24 * 3600 },
      removeOnFail: { age: 7 * 24 * 3600 },
      name: this.id,
    });
    worker.on('error', () => undefined);
    worker.on('failed', (job, error) => this.options.log(`job ${job?.id ?? '?'} failed: ${error.message}`));
    this.workers.set(name, { worker, connection });
    this.options.log(`serving queue ${name} (endpoint ${endpoint})`);
  }

  private agentFor(name: string, options: Record<string, unknown>): Agent {
    const key = JSON.stringify([name, options]);
    let agent = this.agents.get(key);
    if (!agent) {
      agent = createAgent(name, options, { env: this.env }).agent;
      this.agents.set(key, agent);
    }
    return agent;
  }

  private process = async (job: Job, slots: pLimit.Limit): Promise<JobResult> => {
    const jobId = job.id ?? '';
    const me = { host: this.host, id: this.id };
    const refuse = (error: Omit<EpisodeError, 'kind' | 'host'>, sealer?: BoxSealer): JobResult => {
      this.options.log(`refused job ${jobId}: ${error.message}`);
      return makeResult({ type: 'refused', error: { kind: 'infra', ...error, host: this.host } }, jobId, me, sealer);
    };
    let read: ReturnType<typeof readPayload>;
    try {
      read = readPayload(job.data, jobId, () => (this.sealer ??= boxSealer(keyFromEnvironment(this.env))));
    } catch (error) {
      if (!(error instanceof PayloadError)) throw error;
      return refuse({ code: error.sealed ? 'worker-setup' : 'harness', message: `worker ${this.host}: ${error.message}` });
    }
    const { payload, episode } = read;
    const sealer = payload.sealed ? this.sealer : undefined;
    if (payload.mcpbench_version !== this.options.version) {
      return refuse({ code: 'worker-setup', message: `worker ${this.host} runs mcpbench ${this.options.version} and refuses a job of mcpbench ${payload.mcpbench_version}` }, sealer);
    }
    const task = TaskSchema.safeParse(episode.task);
    if (!task.success || canonicalHash(episode.task) !== episode.task_hash) {
      return refuse({ code: 'harness', message: `worker ${this.host}: the job's task does not match its hash ${episode.task_hash.slice(0, 12)}` }, sealer);
    }
    const names = new Set([...taskNamespaces(task.data), ...namespacesOf(task.data.available_tools)]);
    const unknown = [...names].find((name) => !this.options.registry.get(name));
    if (unknown) {
      return refuse({ code: 'server-start', namespace: unknown, message: `worker ${this.host} cannot start namespace ${unknown}: this mcpbench ${this.options.version} has no server for it` }, sealer);
    }
    let agent: Agent;
    try {
      agent = this.agentFor(episode.agent, episode.agent_options);
    } catch (error) {
      if (!(error instanceof AgentOptionsError)) throw error;
      return refuse({ code: 'worker-setup', message: `worker ${this.host} cannot create the ${episode.agent} agent from its environment: ${error.message}` }, sealer);
    }
    const spec: EpisodeSpec = {
      task: task.data,
      taskHash: episode.task_hash,
      key: episode.key,
      agent,
      profile: episode.profile,
      goal: episode.goal,
      ...(episode.perturbed ? { perturbed: episode.perturbed } : {}),
    };
    if (specWorkUnit(spec, payload.seed) !== payload.work_unit) {
      return refuse({ code: 'harness', message: `worker ${this.host}: the job's episode does not match its work unit ${payload.work_unit.slice(0, 12)}` }, sealer);
    }
    const what = `${episode.key.task_id} ${episode.key.variant} trial=${episode.key.trial}${episode.key.perturbation === 'none' ? '' : ` perturb=${episode.key.perturbation}`} (${payload.run_id} attempt ${payload.attempt})`;
    const env: EpisodeEnvironment = {
      runId: payload.run_id,
      registry: this.options.registry,
      seed: payload.seed,
      backend: this.options.backend,
      ...(episode.fault_options ? { faultOptions: episode.fault_options } : {}),
      ...(episode.start_timeout_ms !== undefined ? { startTimeoutMs: episode.start_timeout_ms } : {}),
      ...(episode.call_timeout_ms !== undefined ? { callTimeoutMs: episode.call_timeout_ms } : {}),
    };
    // Its servers start now; a start that fails is made again when the episode runs (runEpisode says so).
    this.options.log(`took ${what}: starting its servers`);
    const prepared = prepareEpisode(spec, env);
    const record = await slots(async () => {
      this.options.log(`started ${what}`);
      const finished = await runEpisode(spec, env, prepared);
      this.options.log(`finished ${finished.status} ${what} in ${(finished.duration_ms / 1000).toFixed(1)} s`);
      return finished;
    });
    record.attempt = payload.attempt;
    if (record.error) record.error.host = this.host;
    const outcome: JobOutcome = { type: 'record', record };
    return makeResult(outcome, jobId, me, sealer);
  };

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      if (this.timer) clearInterval(this.timer);
      await Promise.all([...this.workers.values()].map(({ worker }) => worker.close().catch(() => undefined)));
      for (const { connection } of this.workers.values()) connection.disconnect();
      await this.connection.hdel(REGISTRY_WORKERS, this.id).catch(() => 0);
      this.subscriber.disconnect();
      this.connection.disconnect();
    })();
    return this.stopping;
  }
}
