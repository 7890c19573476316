/**
 * What travels through Redis between a coordinator (`mcpbench run --queue`) and its workers (`mcpbench
 * worker`): one zod schema and one reader per message, as for the files of a run folder.
 *
 * - A queue per (mcpbench version, agent endpoint): `episodes-<version>-<endpoint hash>`, BullMQ key prefix
 *   `mcpbench`. Workers serve the queues of their own version only, so a worker of another version never
 *   runs a job (it says so, and the coordinator lists it); the global cap of episodes in flight
 *   (`--max-in-flight`) is BullMQ's global concurrency of the endpoint's queue, shared by every run and
 *   every worker that uses that endpoint.
 * - A job per work unit, its id `<run id>.<work-unit key>`: enqueuing it twice is a no-op.
 * - The payload holds everything a worker needs to rebuild the episode's spec (the task itself, its hash, the
 *   shown goal, the agent's recorded options, the resolved fault profile): no task file, profile file or
 *   run folder is needed on the worker. A sealed run's payload and result are sealed boxes (the set key's
 *   AES-256-GCM, see generator/seal.ts); the key never enters Redis: workers read it from their environment.
 * - A registry of queues (hash `mcpbench-registry:queues`) workers discover, and of workers (hash
 *   `mcpbench-registry:workers`, a heartbeat each) a coordinator reports.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { BoxSealer, SealedBox } from '../tasks/seal.ts';
import type { EpisodeSpec } from '../runner/episode.ts';
import { QueueError } from './redis.ts';
import { FAULT_TYPES, type FaultProfile, type FaultOptions } from '../record/faults.ts';
import { EpisodeErrorSchema, EpisodeRecordSchema, GoalPerturbationSchema, type EpisodeError, type EpisodeRecord } from '../record/schema.ts';
import { McpbenchError } from '../errors.ts';

/** The message format; a worker reads the jobs of its own mcpbench version, whose protocol is this one. */
export const QUEUE_PROTOCOL = 1 as const;
/** BullMQ's key prefix for the queues (`mcpbench:<queue>:...`). */
export const KEY_PREFIX = 'mcpbench';
export const REGISTRY_QUEUES = 'mcpbench-registry:queues';
export const REGISTRY_WORKERS = 'mcpbench-registry:workers';
/** A pub/sub channel a coordinator announces a (re-)registered queue on, so workers need not wait for their next look. */
export const REGISTRY_CHANNEL = 'mcpbench-registry:queue-added';
/**
 * A pub/sub channel a coordinator announces a finished run on (its id): every worker then removes the sandbox
 * folders of that run its machine still holds (those of a SIGKILLed worker, or of a duplicate still running).
 */
export const RUN_FINISHED_CHANNEL = 'mcpbench-registry:run-finished';

export const endpointHash = (endpoint: string) => createHash('sha256').update(endpoint).digest('hex').slice(0, 16);

/** The queue of an agent endpoint for one mcpbench version. */
export function queueNameFor(version: string, endpoint: string): string {
  return `episodes-${version.replace(/[^A-Za-z0-9.-]/g, '_')}-${endpointHash(endpoint)}`;
}

/** A work unit's job id within its run (BullMQ ids may not hold `:`). */
export function jobIdFor(runId: string, workUnit: string): string {
  if (runId.includes(':')) throw new QueueError(`run id ${runId}: a queued run's id may not contain ':'`, 'run-id');
  return `${runId}.${workUnit}`;
}

const SealedBoxSchema: z.ZodType<SealedBox> = z.object({
  kdf: z.union([
    z.object({ name: z.literal('none') }),
    z.object({ name: z.literal('scrypt'), salt: z.string(), N: z.number().int(), r: z.number().int(), p: z.number().int() }),
  ]),
  nonce: z.string(),
  tag: z.string(),
  ciphertext: z.string(),
});

const FaultProfileSchema: z.ZodType<FaultProfile> = z.object({
  name: z.string(),
  failure_rate: z.number().min(0).max(1),
  fault_weights: z.partialRecord(z.enum(FAULT_TYPES), z.number().nonnegative()),
});

/** The fault timings a run overrides (a check's shorter ones); numbers and flags only. */
const FaultOptionsSchema = z
  .object({
    timeoutMs: z.number(),
    timeoutExecutes: z.boolean(),
    latencyMs: z.number(),
    retryAfterMs: z.number(),
    cascadeLength: z.number(),
    partialKeep: z.number(),
  })
  .partial();

/** One episode to run: its spec without the agent object, which the worker creates from `agent` and its options. */
const EpisodeWorkSchema = z.object({
  /** The task as planned; the worker checks it against TaskSchema and `task_hash`. */
  task: z.unknown(),
  task_hash: z.string(),
  key: z.object({ task_id: z.string(), trial: z.number().int().nonnegative(), variant: z.string(), fault_profile: z.string(), perturbation: z.string() }),
  goal: z.string(),
  perturbed: GoalPerturbationSchema.optional(),
  agent: z.string(),
  agent_options: z.record(z.string(), z.unknown()),
  profile: FaultProfileSchema,
  fault_options: FaultOptionsSchema.optional(),
  start_timeout_ms: z.number().optional(),
  call_timeout_ms: z.number().optional(),
});
export type EpisodeWork = z.infer<typeof EpisodeWorkSchema>;

const JobPayloadSchema = z.object({
  format: z.literal('mcpbench-job'),
  protocol: z.literal(QUEUE_PROTOCOL),
  mcpbench_version: z.string(),
  run_id: z.string(),
  seed: z.number().int(),
  work_unit: z.string().regex(/^[0-9a-f]{64}$/),
  /** Which attempt of the work unit this job is (infrastructure errors are retried as new jobs). */
  attempt: z.number().int().positive(),
  /** The episode, in plain JSON (a run of public tasks) ... */
  episode: EpisodeWorkSchema.optional(),
  /** ... or sealed with the set key (a run of a sealed set). */
  sealed: SealedBoxSchema.optional(),
});
export type JobPayload = z.infer<typeof JobPayloadSchema>;

const OutcomeSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('record'), record: EpisodeRecordSchema }),
  /** The worker could not take the job (no set key, a namespace it cannot start): the coordinator records an infra_error. */
  z.object({ type: z.literal('refused'), error: EpisodeErrorSchema }),
]);
export type JobOutcome = z.infer<typeof OutcomeSchema>;

const JobResultSchema = z.object({
  format: z.literal('mcpbench-job-result'),
  host: z.string(),
  worker: z.string(),
  outcome: OutcomeSchema.optional(),
  sealed: SealedBoxSchema.optional(),
});
export type JobResult = z.infer<typeof JobResultSchema>;

export const QueueEntrySchema = z.object({
  version: z.string(),
  protocol: z.number().int(),
  /** The agent endpoint the queue's jobs call (`agentEndpoint`), for people. */
  endpoint: z.string(),
  updated_at: z.string(),
});
export type QueueEntry = z.infer<typeof QueueEntrySchema>;

export const WorkerEntrySchema = z.object({
  id: z.string(),
  host: z.string(),
  pid: z.number().int(),
  version: z.string(),
  protocol: z.number().int(),
  concurrency: z.number().int(),
  started_at: z.string(),
  /** Refreshed every few seconds while the worker runs: an entry not seen for WORKER_GONE_MS is gone. */
  seen_at: z.number(),
});
export type WorkerEntry = z.infer<typeof WorkerEntrySchema>;
export const WORKER_GONE_MS = 15_000;

const issues = (error: z.ZodError) => error.issues.slice(0, 3).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');

/** Parses a registry hash's values, leaving out what does not parse (another tool's, a newer version's). */
export function readEntries<T>(hash: Record<string, string>, schema: z.ZodType<T>): Map<string, T> {
  const entries = new Map<string, T>();
  for (const [field, text] of Object.entries(hash)) {
    try {
      const parsed = schema.safeParse(JSON.parse(text));
      if (parsed.success) entries.set(field, parsed.data);
    } catch {
      // not JSON: not ours
    }
  }
  return entries;
}

export interface PayloadContext {
  version: string;
  runId: string;
  seed: number;
  agent: string;
  agentOptions: Record<string, unknown>;
  faultOptions?: Partial<FaultOptions>;
  startTimeoutMs?: number;
  callTimeoutMs?: number;
}

const boxContext = (kind: 'job' | 'result', jobId: string) => `${kind}:${jobId}`;

/** The job of one attempt of a planned episode; sealed when `sealer` is given. */
export function makePayload(spec: EpisodeSpec, workUnit: string, attempt: number, context: PayloadContext, sealer?: BoxSealer): JobPayload {
  const { now: _now, ...faultOptions } = context.faultOptions ?? {};
  const episode: EpisodeWork = {
    task: spec.task,
    task_hash: spec.taskHash,
    key: spec.key,
    goal: spec.goal,
    ...(spec.perturbed ? { perturbed: spec.perturbed } : {}),
    agent: context.agent,
    agent_options: context.agentOptions,
    profile: spec.profile,
    ...(Object.keys(faultOptions).length ? { fault_options: faultOptions } : {}),
    ...(context.startTimeoutMs !== undefined ? { start_timeout_ms: context.startTimeoutMs } : {}),
    ...(context.callTimeoutMs !== undefined ? { call_timeout_ms: context.callTimeoutMs } : {}),
  };
  const base = { format: 'mcpbench-job' as const, protocol: QUEUE_PROTOCOL, mcpbench_version: context.version, run_id: context.runId, seed: context.seed, work_unit: workUnit, attempt };
  return sealer ? { ...base, sealed: sealer.seal(JSON.stringify(episode), boxContext('job', jobIdFor(context.runId, workUnit))) } : { ...base, episode };
}

/** Why a job's payload could not be read: `sealed` when it needs the set key (missing or wrong). */
export class PayloadError extends McpbenchError {
  static override readonly code: string = 'job-payload';
  constructor(
    message: string,
    readonly sealed: boolean,
  ) {
    super(message);
  }
}

/** Reads a job's payload (the envelope, then the episode, opened with `sealer` when sealed). */
export function readPayload(data: unknown, jobId: string, sealer: () => BoxSealer): { payload: JobPayload; episode: EpisodeWork } {
  const parsed = JobPayloadSchema.safeParse(data);
  if (!parsed.success) throw new PayloadError(`not a job of this mcpbench (queue protocol ${QUEUE_PROTOCOL}): ${issues(parsed.error)}`, false);
  const payload = parsed.data;
  if (payload.episode) return { payload, episode: payload.episode };
  if (!payload.sealed) throw new PayloadError('the job holds no episode', false);
  let text: string;
  try {
    text = sealer().open(payload.sealed, boxContext('job', jobId));
  } catch (error) {
    throw new PayloadError(`cannot open the sealed job: ${(error as Error).message}`, true);
  }
  const episode = EpisodeWorkSchema.safeParse(JSON.parse(text));
  if (!episode.success) throw new PayloadError(`the sealed job holds no episode: ${issues(episode.error)}`, false);
  return { payload, episode: episode.data };
}

export function makeResult(outcome: JobOutcome, jobId: string, worker: { host: string; id: string }, sealer?: BoxSealer): JobResult {
  const base = { format: 'mcpbench-job-result' as const, host: worker.host, worker: worker.id };
  return sealer ? { ...base, sealed: sealer.seal(JSON.stringify(outcome), boxContext('result', jobId)) } : { ...base, outcome };
}

/** Reads what a worker handed back; an error (never a throw) when it cannot be read. */
export function readResult(value: unknown, jobId: string, sealer: BoxSealer | undefined): { outcome: JobOutcome; host: string } | { error: string } {
  const parsed = JobResultSchema.safeParse(value);
  if (!parsed.success) return { error: `a worker handed back a result this mcpbench cannot read: ${issues(parsed.error)}` };
  const { host } = parsed.data;
  if (parsed.data.outcome) return { outcome: parsed.data.outcome, host };
  if (!parsed.data.sealed || !sealer) return { error: 'a worker handed back a result with no outcome' };
  let text: string;
  try {
    text = sealer.open(parsed.data.sealed, boxContext('result', jobId));
  } catch (error) {
    return { error: `cannot open the sealed result of worker ${host}: ${(error as Error).message}` };
  }
  const outcome = OutcomeSchema.safeParse(JSON.parse(text));
  return outcome.success ? { outcome: outcome.data, host } : { error: `the sealed result of worker ${host} holds no outcome: ${issues(outcome.error)}` };
}

export type { EpisodeError, EpisodeRecord };
