/**
 * The run record: the one reader and writer of a run folder, used by the CLI, the session, the reports, the
 * language server and the extension alike.
 *
 *   runs/<run-id>/run.json                   RunRecord: what the run was asked to do (written atomically)
 *   runs/<run-id>/episodes.jsonl             one EpisodeRecord per line, appended and fsynced per episode
 *   runs/<run-id>/episodes.quarantine.jsonl  lines that did not parse, moved here byte for byte on resume
 *   runs/<run-id>/checks.json                CheckRecords of a check run (written atomically at its end)
 *
 * Every episode carries its work-unit key (`workUnitKey`): a hash of what decides its outcome (task hash,
 * variant, trial, fault profile, perturbation level, run seed), never of volatile config. Resume, retries,
 * scoring and the queue all identify an episode by it.
 *
 * Reading never changes a folder: `openRun` reports damaged lines (and a torn last line, which a writer may
 * still be finishing) and reads every good line, before and after the damage. `resumeRun` opens a run to
 * append to it: it first moves damaged lines to the quarantine file, so their work units run again and no
 * good episode is ever dropped. Every reader reads the same episodes.
 *
 * Versions: run.json has `version` (RUN_RECORD_VERSION). A run.json without a numeric version (written
 * before the record was typed, where `version` held the package version) is read and upgraded in memory,
 * its episode lines too (their work unit is computed from their fields); a newer version is refused with a
 * message that says so.
 */
import { createHash } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { writeFileAtomicSync, writeJsonAtomicSync } from '../atomic-file.ts';
import type { NodeVerdict } from '../predicates/evaluate.ts';
import { FAULT_TYPES } from './types.ts';

export const RUN_FILE = 'run.json';
export const EPISODES_FILE = 'episodes.jsonl';
export const QUARANTINE_FILE = 'episodes.quarantine.jsonl';
export const CHECKS_FILE = 'checks.json';
export const REPORT_FILES = { json: 'report.json', junit: 'junit.xml', html: 'report.html' } as const;

/** The format of run.json, episodes.jsonl and checks.json this code writes (and the newest it reads). */
export const RUN_RECORD_VERSION = 2;

export class RunStoreError extends Error {
  constructor(
    message: string,
    /** The file at fault. */
    readonly file: string,
    readonly code: 'not-a-run' | 'unreadable' | 'invalid' | 'newer-version' | 'exists',
  ) {
    super(message);
  }
}

// ---- Schemas --------------------------------------------------------------------------------------------

const FaultTypeSchema = z.enum(FAULT_TYPES);

export const InjectedFaultSchema = z.object({
  type: FaultTypeSchema,
  /** Whether the call reached the server (a timeout may or may not have executed). */
  executed: z.boolean(),
  detail: z.string().optional(),
});

export const CallStatusSchema = z.enum(['ok', 'tool-error', 'fault', 'unlisted', 'over-budget', 'infra-error']);

export const CallRecordSchema = z.object({
  /** 0-based position among the episode's calls. */
  index: z.number().int().nonnegative(),
  /** The name the agent called (`<ns>_<tool>`). */
  tool: z.string(),
  /** `<ns>.<tool>` when the name is one of the task's available tools. */
  qualified: z.string().optional(),
  arguments: z.unknown(),
  status: CallStatusSchema,
  /** The fault the agent received (injected now, or carried over: a rate-limit window, a cascade). */
  fault: InjectedFaultSchema.optional(),
  /**
   * The fault the seeded generator decided for this call, whether or not it could be delivered (StaleData
   * needs an earlier read result, SchemaDrift a field to rename). The profile's rates are rates of decisions.
   */
  decided: FaultTypeSchema.optional(),
  /** What the agent received (MCP CallToolResult, or `{ error }` for a protocol-level error). */
  result: z.unknown(),
  /** Milliseconds from the agent's request to the gateway's answer. */
  latency_ms: z.number(),
});

/** One connection attempt of a confined command agent through its egress proxy, allowed or refused. */
export const EgressRecordSchema = z.object({
  /** Milliseconds since the proxy started. */
  at_ms: z.number(),
  /** `CONNECT` for a tunnel (HTTPS), else the HTTP method of a plain request. */
  method: z.string(),
  host: z.string(),
  port: z.number().int(),
  allowed: z.boolean(),
  /** Why it was refused. */
  reason: z.string().optional(),
});

const JsonPathSchema = z.array(z.union([z.string(), z.number()]));

/** A verdict tree node; `value` is absent on disk when the node was undecided. */
export const NodeVerdictSchema: z.ZodType<NodeVerdict, unknown> = z.lazy(() =>
  z
    .object({
      path: JsonPathSchema,
      kind: z.enum(['leaf', 'not', 'all', 'any', 'invalid']),
      name: z.string().optional(),
      value: z.boolean().optional(),
      evidence: z.unknown().optional(),
      undecided: z.string().optional(),
      children: z.array(NodeVerdictSchema).optional(),
    })
    .transform((node): NodeVerdict => ({ ...node, value: node.value })),
);

export const GoalPerturbationSchema = z.object({
  /** The transforms applied, in order: `{ kind: 'synonym', detail: 'book -> reserve' }` ... */
  applied: z.array(z.object({ kind: z.string(), detail: z.string() })),
  /** Set when an LLM paraphrase was asked for: whether it was used, or why the deterministic goal was kept. */
  paraphrase: z.object({ paraphrased: z.boolean(), model: z.string(), error: z.string().optional() }).optional(),
});

/** The three outcomes an episode can have besides passing (see `EpisodeStatus`). */
export const EPISODE_STATUSES = ['passed', 'failed', 'agent_error', 'infra_error'] as const;
export const EpisodeStatusSchema = z.enum(EPISODE_STATUSES);

/**
 * Known error codes (the schema accepts any code, so a record written by a newer version still reads):
 * - agent: `agent-exit` (non-zero exit or killed by a signal), `agent-timeout` (did not finish in time),
 *   `agent-spawn` (could not be started), `agent-http` (its endpoint answered an HTTP error),
 *   `agent-unreachable` (its endpoint could not be reached), `agent-response` (an answer that breaks the
 *   protocol: not JSON, wrong types), `agent-exception` (an in-process agent threw), `agent-runaway` (it kept
 *   calling tools past its budget, CALLS_PAST_BUDGET calls past max_steps, and the gateway ended the episode),
 *   `sandbox-full` (the episode's sandboxes grew past `MCPBENCH_SANDBOX_MAX_BYTES`, default 2 GiB: what the
 *   agent made its servers write; the servers were stopped and no end state was judged).
 *   An episode's timeout is always `agent-timeout`, whatever the agent threw as it was stopped, with one
 *   exception: a confined agent whose sandbox never came up before it was stopped is `agent-sandbox` (ours).
 * - agent, the model endpoint a model agent (openai, anthropic) calls, each after its retries where retrying
 *   makes sense (`attempts` says how many requests were made): `model-unreachable` (connection refused, DNS,
 *   reset), `model-timeout` (no answer within the request timeout), `model-rate-limited` (HTTP 429),
 *   `model-5xx` (HTTP 5xx, and Anthropic's 529 overloaded), `model-rejected` (another 4xx: a bad key, an
 *   unknown model; not retried), `model-non-json` (a 2xx body that is not JSON), `model-empty-response` (a
 *   2xx without a message: `choices: []`), `model-bad-response` (JSON that is not the protocol's response),
 *   `model-content-filter` (the provider refused by content filter; not retried), `model-endpoint` (any
 *   other failure of the model API; what versions before these codes recorded).
 * - infra: `server-start` (a server did not start), `server-exited` (a server died during the episode),
 *   `server-timeout` (a server stopped answering), `server-failed` (another server failure),
 *   `state-seed` / `state-read` (the initial state could not be written, the end state read),
 *   `gateway-unreachable` (an in-process agent could not connect to our gateway), `agent-sandbox` (the
 *   runner could not build a confined agent's sandbox: its backend did not start, or did not come up before
 *   the agent's deadline, or its sockets or egress proxy could not be set up), `harness` (anything else on
 *   our side), `worker-setup` (a queue worker could not take the job: no set key for a
 *   sealed run, an agent it cannot create from its own environment).
 * - `legacy`: an error recorded as text by a version before errors were typed.
 */
export const AGENT_ERROR_CODES = [
  'agent-exit',
  'agent-timeout',
  'agent-spawn',
  'agent-http',
  'agent-unreachable',
  'agent-response',
  'agent-exception',
  'agent-runaway',
  'sandbox-full',
  'model-unreachable',
  'model-timeout',
  'model-rate-limited',
  'model-5xx',
  'model-rejected',
  'model-non-json',
  'model-empty-response',
  'model-bad-response',
  'model-content-filter',
  'model-endpoint',
] as const;
export const INFRA_ERROR_CODES = ['server-start', 'server-exited', 'server-timeout', 'server-failed', 'state-seed', 'state-read', 'gateway-unreachable', 'agent-sandbox', 'harness', 'worker-setup'] as const;
export type AgentErrorCode = (typeof AGENT_ERROR_CODES)[number];
export type InfraErrorCode = (typeof INFRA_ERROR_CODES)[number];

export const EpisodeErrorSchema = z.object({
  /** `agent`: the agent process or its model endpoint broke; `infra`: our side (servers, sandboxes, state). */
  kind: z.enum(['agent', 'infra']),
  code: z.string().min(1),
  /** One readable sentence (no stack trace); details are in the fields below. */
  message: z.string(),
  /** The namespace whose server failed (infra). */
  namespace: z.string().optional(),
  /** Whether the process (agent or server) had exited when the error was seen. */
  exited: z.boolean().optional(),
  exit_code: z.number().int().nullable().optional(),
  signal: z.string().nullable().optional(),
  /** The last lines of the process's stderr. */
  stderr_tail: z.string().optional(),
  /** The HTTP status an endpoint answered with (the last one, after retries). */
  http_status: z.number().int().optional(),
  /** Requests made to the endpoint before giving up (a model endpoint's retries included). */
  attempts: z.number().int().positive().optional(),
  /** The machine the episode ran on, when a queue worker ran it (`mcpbench worker`). */
  host: z.string().optional(),
});

/**
 * Why a `failed` episode failed when it is more than its predicate: the agent was stopped before it
 * finished. Known codes: `token-budget` (the episode used up `--max-tokens-per-episode` before a final
 * answer). A failure is the agent's own outcome (scored as not passed), never an error.
 */
export const FAILURE_CODES = ['token-budget'] as const;
export type FailureCode = (typeof FAILURE_CODES)[number];
export const EpisodeFailureSchema = z.object({ code: z.string().min(1), message: z.string() });

/** One tool call a model agent attempted (malformed ones were answered by the agent and never reached the gateway). */
export const AttemptedCallRecordSchema = z.object({
  /** 0-based model turn the call was written in. */
  turn: z.number().int().nonnegative(),
  /** `native` (the protocol's own tool calls) or the text format it was written in (`hermes`, `llama3` ...). */
  format: z.string(),
  /** The function name, when the model gave one. */
  name: z.string().optional(),
  /** `sent` went to the gateway; `malformed` was answered with an error by the agent itself. */
  status: z.enum(['sent', 'malformed']),
  /** What was wrong with a malformed call: `no-name`, `bad-json`, `arguments-not-object`. */
  problem: z.string().optional(),
});

/** How a model agent's loop ended: its final answer, its turn limit, its token budget, an error, an interruption. */
export const MODEL_ENDS = ['answer', 'max-turns', 'token-budget', 'error', 'aborted'] as const;

/** What a model agent spent in one episode: tokens, cost, latency per turn, the calls it attempted. */
export const ModelRecordSchema = z.object({
  /** `openai`, `anthropic`, or `endpoint` (usage an endpoint agent reported, the editor's language model too). */
  protocol: z.string(),
  model: z.string(),
  /** HTTP requests made to the model endpoint, retries included. */
  requests: z.number().int().nonnegative(),
  /** Model responses the loop acted on (one per turn). */
  turns: z.number().int().nonnegative(),
  /** Requests retried after a transient failure (429, 5xx, timeouts, unreadable bodies). */
  retries: z.number().int().nonnegative(),
  /** Every input token, cached ones included (OpenAI's prompt_tokens; Anthropic's input + cache read + cache write). */
  prompt_tokens: z.number().nonnegative(),
  completion_tokens: z.number().nonnegative(),
  /** Input tokens read from the provider's prompt cache (part of prompt_tokens). */
  cached_tokens: z.number().nonnegative(),
  /** Input tokens written to the cache (part of prompt_tokens). */
  cache_write_tokens: z.number().nonnegative(),
  /** Responses that carried no usage (their tokens are unknown, not zero). */
  responses_without_usage: z.number().int().nonnegative(),
  /** In the price file's currency; null when no price was given for the model. */
  cost: z.number().nonnegative().nullable(),
  currency: z.string().optional(),
  /** Milliseconds of the request that produced each turn (back-off between retries excluded). */
  turn_latency_ms: z.array(z.number().nonnegative()),
  calls: z.array(AttemptedCallRecordSchema),
  /** How the loop ended (`MODEL_ENDS`; any string reads). */
  end: z.string().optional(),
  /** The per-episode token budget, when one was set. */
  max_tokens_per_episode: z.number().int().positive().optional(),
});

const EpisodeCommon = {
  run_id: z.string(),
  task_id: z.string(),
  /** SHA-256 of the task's canonical JSON: which version of the task this result is for. */
  task_hash: z.string(),
  /** 0-based trial number (pass^k runs k trials per task). */
  trial: z.number().int().nonnegative(),
  /** Which sequence the reference agent replays: `reference:0`, `counterexample:1`; the agent name otherwise. */
  variant: z.string(),
  fault_profile: z.string(),
  perturbation: z.string(),
  agent: z.string(),
  seed: z.number(),
  /** Predicate true, no budget exceeded, no error: status is `passed`. */
  passed: z.boolean(),
  verdict: NodeVerdictSchema.optional(),
  answer: z.string().optional(),
  category: z.string(),
  namespaces: z.array(z.string()),
  max_steps: z.number(),
  /** Calls to listed tools that were forwarded or faulted (what counts against max_steps); unlisted excluded. */
  tool_calls: z.number(),
  unlisted_calls: z.number(),
  /** Calls whose result the agent saw as an error (injected or not). */
  errors_seen: z.number(),
  budget_exceeded: z.boolean(),
  calls: z.array(CallRecordSchema),
  /** A confined command agent's connection attempts through its egress proxy (absent: it made none, or has none). */
  egress: z.array(EgressRecordSchema).optional(),
  started_at: z.string(),
  duration_ms: z.number(),
  /** 1 for the first attempt; infrastructure failures are retried. */
  attempt: z.number().int().positive(),
  /**
   * SHA-256 of the canonical JSON of the end states the predicate was judged on (by namespace): two episodes
   * with the same value left the same state (check's mutation testing tells equivalent mutants by it).
   */
  end_state: z.string().optional(),
  /** The goal the agent was shown, recorded when it was perturbed (or otherwise differs from the task's). */
  goal: z.string().optional(),
  /** How `goal` was made from the task's goal. */
  perturbed: GoalPerturbationSchema.optional(),
  /** Tool calls the agent attempted but formed badly (no name, arguments not a JSON object): never sent to the gateway. */
  malformed_calls: z.number().int().nonnegative().optional(),
  /** A model agent's tokens, cost, latency per turn and attempted calls (with their format). */
  model: ModelRecordSchema.optional(),
};

export const EpisodeRecordSchema = z.object({
  /** The work-unit key (`workUnitKey`): what resume, retries, scoring and the queue identify an episode by. */
  work_unit: z.string().regex(/^[0-9a-f]{64}$/),
  ...EpisodeCommon,
  /**
   * `passed`; `failed` (the agent's fault: predicate false or over budget); `agent_error` (the agent process
   * or its model endpoint broke; counted as not passed); `infra_error` (our side: retried, never scored).
   */
  status: EpisodeStatusSchema,
  /** Set exactly when status is agent_error or infra_error, of the matching kind (`episodeRecordProblem`). */
  error: EpisodeErrorSchema.optional(),
  /** Set only when status is failed: the agent was stopped before it finished (`token-budget`). */
  failure: EpisodeFailureSchema.optional(),
});

/**
 * What the schema alone cannot say (it stays a plain object, so other records can extend or pick from it):
 * an error exactly when the status is an error, of the matching kind. Undefined when consistent.
 */
export function episodeRecordProblem(record: Pick<EpisodeRecord, 'status' | 'error' | 'failure'>): string | undefined {
  const expected = record.status === 'agent_error' ? 'agent' : record.status === 'infra_error' ? 'infra' : undefined;
  if (record.error?.kind !== expected) return `error: status ${record.status} ${expected ? `needs an error of kind ${expected}` : 'has no error'}`;
  if (record.failure && record.status !== 'failed') return `failure: status ${record.status} has no failure (only a failed episode does)`;
  return undefined;
}

/** An episode line as versions before the typed record wrote it: no work unit, errors as text. */
const LegacyEpisodeSchema = z.object({
  ...EpisodeCommon,
  status: z.enum(['passed', 'failed', 'infra_error']),
  infra_error: z.string().optional(),
  agent_error: z.string().optional(),
});

const ParaphraseSchema = z.object({ baseUrl: z.string(), model: z.string() });

const RunSetSchema = z.object({ name: z.string().min(1), month: z.string().optional() });

export const RunRecordSchema = z.object({
  version: z.literal(RUN_RECORD_VERSION),
  /** `run` (an agent over tasks) or `check` (the self-test of tasks). */
  kind: z.enum(['run', 'check']),
  run_id: z.string().min(1),
  created_at: z.string(),
  /** The mcpbench version that started the run. */
  mcpbench_version: z.string().optional(),
  /** Absolute paths of the task files (or sealed-set entries `x.sealed.json#tasks/a.json`). */
  task_files: z.array(z.string()),
  /** Their task ids, in the same order. */
  tasks: z.array(z.string()),
  /** The agent's registry name (`check` for a check run). */
  agent: z.string(),
  /**
   * The agent's options as its descriptor reads them (never a secret: keys come from the environment). For a
   * model agent (openai, anthropic) these are its resolved settings: endpoint, model, sampling, limits, the
   * system prompt, the tool-call format, the token budget and the price (agents/settings.ts).
   */
  agent_options: z.record(z.string(), z.unknown()).default({}),
  /**
   * The run's cost budget (`--max-cost`, in the price file's currency): no new episode starts once the
   * recorded episodes cost this much. A resume may set another (`updateRecord`).
   */
  max_cost: z.number().positive().optional(),
  /** The fault profile as given: a name, `<type>-only`, or a profile file. */
  fault_profile: z.string(),
  /** `--fault-rate`: the profile's failure rate overridden. */
  fault_rate: z.number().optional(),
  /** The perturbation levels, each run over every (task, variant, trial). */
  perturbations: z.array(z.string()).min(1),
  /** The OpenAI-compatible endpoint heavy-level goals were paraphrased through (the API key is never recorded). */
  paraphrase: ParaphraseSchema.optional(),
  trials: z.number().int().positive(),
  seed: z.number().int(),
  concurrency: z.number().int().nonnegative(),
  sandbox: z.string(),
  /**
   * What the run was warned about and went on with: its agent's options (a model without a price) and its
   * creation (a command agent that is not confined), when it started and, added, when it was resumed.
   */
  warnings: z.array(z.string()).optional(),
  /** The task set measured and its month (a set folder's set.json, or `--set` / `--month`): what the results database ranks by. */
  set: RunSetSchema.optional(),
  /** A check run with mutation testing (`check --mutants`): a resume plans the mutants' episodes too. */
  mutants: z.boolean().optional(),
});

/** run.json as versions before the typed record wrote it (`version` was the package version, if present). */
const LegacyRunSchema = z.object({
  version: z.string().optional(),
  run_id: z.string().min(1),
  created_at: z.string(),
  task_files: z.array(z.string()).default([]),
  tasks: z.array(z.string()),
  agent: z.string(),
  agent_options: z.record(z.string(), z.unknown()).optional(),
  /** A model agent's settings, as a pre-release of the model agents recorded them beside agent_options. */
  agent_settings: z.record(z.string(), z.unknown()).optional(),
  max_cost: z.number().positive().optional(),
  fault_profile: z.string(),
  perturbation: z.string().default('none'),
  perturbations: z.array(z.string()).optional(),
  paraphrase: ParaphraseSchema.optional(),
  trials: z.number().int().positive().default(1),
  seed: z.number().int(),
  concurrency: z.number().int().nonnegative().default(1),
  sandbox: z.string().default('process'),
  retry: z.boolean().optional(),
  set: RunSetSchema.optional(),
});

const CoverageSchema = z.object({
  paths: z.object({ covered: z.number(), total: z.number() }),
  leaves: z.object({ covered: z.number(), total: z.number() }),
  items: z.array(z.object({ path: JsonPathSchema, kind: z.enum(['leaf', 'branch']), label: z.string(), witnessed: z.boolean() })),
});

const PositionSchema = z.object({ line: z.number().int().nonnegative(), character: z.number().int().nonnegative() });

/** A finding of check with its stable code, as the linter's: what, how bad, and where in the task file. */
export const CheckFindingSchema = z.object({
  code: z.enum(['surviving-mutant', 'guessable-answer', 'underivable-argument']),
  severity: z.enum(['error', 'warning']),
  message: z.string(),
  /** Where in the task file it points (a JSON path), when it points somewhere. */
  path: JsonPathSchema.optional(),
  /** `surviving-mutant`: the mutant's id (its diff is in the task's mutation report). */
  mutant: z.string().optional(),
  /** The same place as 0-based line/character positions, when the task's text was at hand. */
  start: PositionSchema.optional(),
  end: PositionSchema.optional(),
});
export type CheckFinding = z.infer<typeof CheckFindingSchema>;

export const MUTANT_OUTCOMES = ['killed', 'equivalent', 'declared-equivalent', 'survived', 'not-run'] as const;

/** One mutant of a reference solution and what became of it (`check --mutants`). */
export const MutantVerdictSchema = z.object({
  id: z.string(),
  description: z.string(),
  /** 0-based index of the reference solution it was derived from. */
  solution: z.number().int().nonnegative(),
  outcome: z.enum(MUTANT_OUTCOMES),
  /** Where in the task file the mutation is (the replaced argument, the dropped or cut step). */
  path: JsonPathSchema,
  /** For survivors: the mutant as a diff against its reference solution (` `, `-`, `+` lines, steps 1-based). */
  diff: z.array(z.string()).optional(),
  /** For declared equivalents: the author's reason. */
  reason: z.string().optional(),
});

/** A task's mutation testing: every mutant's outcome and its score. */
export const MutationReportSchema = z.object({
  total: z.number().int().nonnegative(),
  killed: z.number().int().nonnegative(),
  equivalent: z.number().int().nonnegative(),
  declared: z.number().int().nonnegative(),
  survived: z.number().int().nonnegative(),
  notRun: z.number().int().nonnegative(),
  /** killed / (killed + survived); null when no mutant can be killed (all equivalent, or none derived). */
  score: z.number().nullable(),
  mutants: z.array(MutantVerdictSchema),
});

/** What `check` decided about one task. */
export const CheckRecordSchema = z.object({
  task_id: z.string(),
  file: z.string(),
  /** The hash of the task version that was checked. */
  task_hash: z.string(),
  ok: z.boolean(),
  problems: z.array(z.string()),
  /** Which `any` branches and leaves the passing reference solutions witnessed. */
  coverage: CoverageSchema,
  /** Fault type → whether the robust reference agent passed under it (absent: not run). */
  faults: z.partialRecord(FaultTypeSchema, z.boolean()),
  /** Findings with a code and a place; an error among them fails the task (its message is in `problems` too). */
  findings: z.array(CheckFindingSchema).default([]),
  /** With `--mutants`: every mutant's outcome and the task's mutation score. */
  mutation: MutationReportSchema.optional(),
});

const ChecksFileSchema = z.object({ version: z.literal(RUN_RECORD_VERSION), run_id: z.string(), checks: z.array(CheckRecordSchema) });

export type RunRecord = z.infer<typeof RunRecordSchema>;
export type EpisodeRecord = z.infer<typeof EpisodeRecordSchema>;
export type CheckRecord = z.infer<typeof CheckRecordSchema>;
export type EpisodeError = z.infer<typeof EpisodeErrorSchema>;
export type EpisodeStatus = z.infer<typeof EpisodeStatusSchema>;
export type CallRecord = z.infer<typeof CallRecordSchema>;
export type EgressRecord = z.infer<typeof EgressRecordSchema>;
export type InjectedFault = z.infer<typeof InjectedFaultSchema>;
export type CallStatus = z.infer<typeof CallStatusSchema>;
export type GoalPerturbation = z.infer<typeof GoalPerturbationSchema>;
export type EpisodeFailure = z.infer<typeof EpisodeFailureSchema>;
export type ModelRecord = z.infer<typeof ModelRecordSchema>;
export type AttemptedCallRecord = z.infer<typeof AttemptedCallRecordSchema>;
/** run.json before `version` is set by `createRun`. */
export type NewRunRecord = Omit<z.input<typeof RunRecordSchema>, 'version'>;

// ---- Work units -----------------------------------------------------------------------------------------

/** What decides an episode's outcome, and nothing else (no paths, ports or concurrency). */
export interface WorkUnit {
  task_hash: string;
  variant: string;
  trial: number;
  fault_profile: string;
  perturbation: string;
  seed: number;
}

/** The work-unit key: SHA-256 (hex) of the JSON array of the unit's fields, in a fixed order. */
export function workUnitKey(unit: WorkUnit): string {
  const fields = ['mcpbench-work-unit/1', unit.task_hash, unit.variant, unit.trial, unit.fault_profile, unit.perturbation, unit.seed];
  return createHash('sha256').update(JSON.stringify(fields)).digest('hex');
}

/** Whether an episode's outcome stands (it is not retried): everything but an infrastructure error. */
export const isScored = (record: Pick<EpisodeRecord, 'status'>): boolean => record.status !== 'infra_error';

/**
 * The record that stands for each work unit: its last scored record, or its last record when every attempt
 * was an infrastructure error. In first-seen order. A duplicate (the same unit recorded twice) counts once.
 */
export function latestByWorkUnit<T extends Pick<EpisodeRecord, 'work_unit' | 'status'>>(records: readonly T[]): T[] {
  const byUnit = new Map<string, T>();
  for (const record of records) {
    const previous = byUnit.get(record.work_unit);
    if (!previous || isScored(record) || !isScored(previous)) byUnit.set(record.work_unit, record);
  }
  return [...byUnit.values()];
}

/** The work units that have a scored record: what a resumed run does not run again. */
export function finishedWorkUnits(records: readonly Pick<EpisodeRecord, 'work_unit' | 'status'>[]): Set<string> {
  return new Set(records.filter(isScored).map((r) => r.work_unit));
}

export type OutcomeCounts = Record<EpisodeStatus, number>;

/** Outcomes over the standing record of each work unit. */
export function outcomeCounts(records: readonly EpisodeRecord[]): OutcomeCounts {
  const counts: OutcomeCounts = { passed: 0, failed: 0, agent_error: 0, infra_error: 0 };
  for (const r of latestByWorkUnit(records)) counts[r.status]++;
  return counts;
}

/** Why an episode did not pass, in one line (empty for a passed episode). */
export function outcomeReason(record: EpisodeRecord): string {
  if (record.error) return `${record.error.code}: ${record.error.message.split('\n')[0]}`;
  if (record.status === 'passed') return '';
  if (record.failure) return `${record.failure.code}: ${record.failure.message.split('\n')[0]}`;
  if (record.budget_exceeded) return `budget exceeded: ${record.tool_calls} calls, max_steps ${record.max_steps}`;
  if (!record.verdict) return 'no verdict: the predicate was not evaluated';
  return `success predicate ${record.verdict.value === undefined ? 'undecided' : String(record.verdict.value)}`;
}

// ---- Reading lines --------------------------------------------------------------------------------------

/** A journal line that is not an episode record. */
export interface DamagedLine {
  /** 1-based line number in the journal. */
  line: number;
  /** Why it was not read. */
  reason: string;
  /** The last line, without its newline: a write that was cut off (or is still being made). */
  torn: boolean;
  /** The line's exact bytes (without its newline). */
  bytes: Buffer;
}

const issuesText = (error: z.ZodError) =>
  error.issues
    .slice(0, 3)
    .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
    .join('; ');

/** Parses one journal line: a current record, or a legacy one upgraded; else why not. */
export function parseEpisodeLine(text: string): { record: EpisodeRecord } | { reason: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { reason: `not JSON: ${(error as Error).message}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { reason: 'not an object' };
  if ('work_unit' in value) {
    const parsed = EpisodeRecordSchema.safeParse(value);
    if (!parsed.success) return { reason: `not an episode record: ${issuesText(parsed.error)}` };
    const problem = episodeRecordProblem(parsed.data);
    return problem ? { reason: `not an episode record: ${problem}` } : { record: parsed.data };
  }
  const legacy = LegacyEpisodeSchema.safeParse(value);
  if (!legacy.success) return { reason: `not an episode record of any version: ${issuesText(legacy.error)}` };
  return { record: upgradeEpisode(legacy.data) };
}

function upgradeEpisode(legacy: z.infer<typeof LegacyEpisodeSchema>): EpisodeRecord {
  const { infra_error, agent_error, status, ...rest } = legacy;
  const base = { work_unit: workUnitKey(legacy), ...rest };
  if (status === 'infra_error') return { ...base, status, passed: false, error: { kind: 'infra', code: 'legacy', message: infra_error ?? 'infrastructure error' } };
  if (agent_error !== undefined) return { ...base, status: 'agent_error', passed: false, error: { kind: 'agent', code: 'legacy', message: agent_error } };
  return { ...base, status };
}

interface JournalContent {
  episodes: EpisodeRecord[];
  damaged: DamagedLine[];
  /** Bytes of the good lines, each with its newline, in file order (what a repaired journal holds). */
  good: Buffer[];
}

function readJournal(file: string): JournalContent {
  const content: JournalContent = { episodes: [], damaged: [], good: [] };
  if (!existsSync(file)) return content;
  const buffer = readFileSync(file);
  let start = 0;
  let line = 0;
  while (start < buffer.length) {
    line++;
    const newline = buffer.indexOf(0x0a, start);
    const end = newline < 0 ? buffer.length : newline;
    const bytes = buffer.subarray(start, end);
    start = end + 1;
    const text = bytes.toString('utf8');
    if (text.trim() === '') continue;
    if (newline < 0) {
      content.damaged.push({ line, reason: 'a torn last line (the write was cut off, or is still being made)', torn: true, bytes: Buffer.from(bytes) });
      break;
    }
    const parsed = parseEpisodeLine(text);
    if ('record' in parsed) {
      content.episodes.push(parsed.record);
      content.good.push(buffer.subarray(end - bytes.length, end + 1));
    } else content.damaged.push({ line, reason: parsed.reason, torn: false, bytes: Buffer.from(bytes) });
  }
  return content;
}

/** Lines kept in the quarantine file (one per line, exactly as they were). */
function readQuarantine(file: string): Buffer[] {
  if (!existsSync(file)) return [];
  const buffer = readFileSync(file);
  const lines: Buffer[] = [];
  let start = 0;
  while (start < buffer.length) {
    const newline = buffer.indexOf(0x0a, start);
    const end = newline < 0 ? buffer.length : newline;
    if (end > start) lines.push(buffer.subarray(start, end));
    start = end + 1;
  }
  return lines;
}

function readRunRecord(directory: string): { record: RunRecord; legacy: boolean } {
  const file = join(directory, RUN_FILE);
  if (!existsSync(file)) throw new RunStoreError(`${directory} is not a run folder (no ${RUN_FILE})`, file, 'not-a-run');
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new RunStoreError(`${file}: not readable JSON: ${(error as Error).message}`, file, 'unreadable');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new RunStoreError(`${file}: not a run record (not a JSON object)`, file, 'invalid');
  const version = (value as { version?: unknown }).version;
  if (typeof version === 'number') {
    if (version > RUN_RECORD_VERSION) {
      throw new RunStoreError(`${file}: written by a newer mcpbench (run record version ${version}; this one reads up to ${RUN_RECORD_VERSION})`, file, 'newer-version');
    }
    const parsed = RunRecordSchema.safeParse(value);
    if (!parsed.success) throw new RunStoreError(`${file}: not a run record: ${issuesText(parsed.error)}`, file, 'invalid');
    return { record: parsed.data, legacy: false };
  }
  const legacy = LegacyRunSchema.safeParse(value);
  if (!legacy.success) throw new RunStoreError(`${file}: not a run record of any version: ${issuesText(legacy.error)}`, file, 'invalid');
  return { record: upgradeRun(legacy.data), legacy: true };
}

function upgradeRun(legacy: z.infer<typeof LegacyRunSchema>): RunRecord {
  const old = legacy.agent_options ?? {};
  // The old CLI recorded every agent flag for every agent; each descriptor now reads its own option names.
  const agentOptions: Record<string, unknown> = {};
  if (legacy.agent === 'reference' && legacy.retry !== undefined) agentOptions.retry = legacy.retry;
  if (legacy.agent === 'command' && typeof old.agentCommand === 'string') agentOptions.command = old.agentCommand;
  if (legacy.agent === 'endpoint' && typeof old.endpoint === 'string') agentOptions.url = old.endpoint;
  if (legacy.agent === 'openai' || legacy.agent === 'anthropic') {
    if (typeof old.model === 'string') agentOptions.model = old.model;
    if (typeof old.baseUrl === 'string') agentOptions.base_url = old.baseUrl;
    // Settings recorded in full are the options as they are now (the descriptor checks them on resume).
    Object.assign(agentOptions, legacy.agent_settings ?? {});
    delete agentOptions.agent;
  }
  return {
    version: RUN_RECORD_VERSION,
    kind: legacy.agent === 'check' ? 'check' : 'run',
    run_id: legacy.run_id,
    created_at: legacy.created_at,
    ...(legacy.version !== undefined ? { mcpbench_version: legacy.version } : {}),
    task_files: legacy.task_files,
    tasks: legacy.tasks,
    agent: legacy.agent,
    agent_options: agentOptions,
    fault_profile: legacy.fault_profile,
    ...(typeof old.faultRate === 'number' ? { fault_rate: old.faultRate } : {}),
    ...(legacy.max_cost !== undefined ? { max_cost: legacy.max_cost } : {}),
    perturbations: legacy.perturbations ?? legacy.perturbation.split(',').map((l) => l.trim()).filter(Boolean),
    ...(legacy.paraphrase ? { paraphrase: legacy.paraphrase } : {}),
    trials: legacy.trials,
    seed: legacy.seed,
    concurrency: legacy.concurrency,
    sandbox: legacy.sandbox,
    ...(legacy.set ? { set: legacy.set } : {}),
  };
}

// ---- Runs -----------------------------------------------------------------------------------------------

/** A run folder as read: the same for every reader. */
export interface StoredRun {
  readonly directory: string;
  /** run.json (upgraded in memory when it was written by an older version). */
  readonly config: RunRecord;
  /** Every episode record, in file order (retried infra errors included; `latestByWorkUnit` picks one per unit). */
  readonly episodes: readonly EpisodeRecord[];
  /** Journal lines that are not episode records (left in place by `openRun`, moved by `resumeRun`). */
  readonly damaged: readonly DamagedLine[];
  /** Lines already moved to the quarantine file. */
  readonly quarantined: number;
  /** One sentence per damaged or quarantined line (`file:line: why`), for reports and the editor. */
  readonly warnings: readonly string[];
}

/** A run open for appending (created, or resumed). */
export interface WritableRun extends StoredRun {
  /** Appends one finished episode and makes it durable (fsync) before returning; refuses an invalid record. */
  append(record: EpisodeRecord): void;
  /** Writes checks.json (atomically). */
  writeChecks(checks: readonly CheckRecord[]): void;
  /** Changes what a resume may change in run.json (the cost budget, the warnings) and rewrites it atomically. */
  updateRecord(update: RunRecordUpdate): void;
}

/** The fields of run.json a resumed run may change: a new cost budget, the warnings with the resume's own added. */
export type RunRecordUpdate = Partial<Pick<RunRecord, 'max_cost' | 'warnings'>>;

function warningsOf(directory: string, damaged: readonly DamagedLine[], quarantined: number): string[] {
  const journal = join(directory, EPISODES_FILE);
  const warnings = damaged.map((d) => `${journal}:${d.line}: ${d.torn ? 'skipped' : 'skipped a damaged line'}: ${d.reason}`);
  if (quarantined) warnings.push(`${join(directory, QUARANTINE_FILE)}: ${quarantined} damaged line(s) were moved here; their work units were run again`);
  return warnings;
}

class RunFolder implements WritableRun {
  readonly warnings: string[];
  constructor(
    readonly directory: string,
    public config: RunRecord,
    readonly episodes: EpisodeRecord[],
    readonly damaged: DamagedLine[],
    readonly quarantined: number,
  ) {
    this.warnings = warningsOf(directory, damaged, quarantined);
  }

  append(record: EpisodeRecord): void {
    // Nothing goes into the journal that its readers would refuse.
    const parsed = EpisodeRecordSchema.safeParse(record);
    const problem = parsed.success ? episodeRecordProblem(parsed.data) : issuesText(parsed.error);
    if (problem) throw new RunStoreError(`${join(this.directory, EPISODES_FILE)}: refused to append an invalid episode record: ${problem}`, join(this.directory, EPISODES_FILE), 'invalid');
    const fd = openSync(join(this.directory, EPISODES_FILE), 'a');
    try {
      writeSync(fd, `${JSON.stringify(record)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    this.episodes.push(record);
  }

  writeChecks(checks: readonly CheckRecord[]): void {
    writeJsonAtomicSync(join(this.directory, CHECKS_FILE), { version: RUN_RECORD_VERSION, run_id: this.config.run_id, checks });
  }

  updateRecord(update: RunRecordUpdate): void {
    const record = RunRecordSchema.parse({ ...this.config, ...update });
    writeJsonAtomicSync(join(this.directory, RUN_FILE), record);
    this.config = record;
  }
}

/** Starts a run folder (run.json written atomically, an empty journal); refuses a folder that holds a run. */
export function createRun(directory: string, config: NewRunRecord): WritableRun {
  const file = join(directory, RUN_FILE);
  if (existsSync(file)) throw new RunStoreError(`${directory} already holds a run: resume it (mcpbench run --resume ${directory})`, file, 'exists');
  const record = RunRecordSchema.parse({ version: RUN_RECORD_VERSION, ...config });
  mkdirSync(directory, { recursive: true });
  writeFileAtomicSync(join(directory, EPISODES_FILE), '');
  // run.json last: a folder with a run.json always has its journal.
  writeJsonAtomicSync(file, record);
  return new RunFolder(directory, record, [], [], 0);
}

/** Reads a run folder; never writes to it. Throws RunStoreError when run.json is missing or invalid. */
export function openRun(directory: string): StoredRun {
  const { record } = readRunRecord(directory);
  const journal = readJournal(join(directory, EPISODES_FILE));
  return new RunFolder(directory, record, journal.episodes, journal.damaged, readQuarantine(join(directory, QUARANTINE_FILE)).length);
}

/**
 * Opens a run to append to it. Damaged lines (a torn last line included) are first moved, byte for byte,
 * to the quarantine file (fsynced), then the journal is rewritten atomically without them: every good
 * episode, before and after the damage, is kept as it was. A run.json of an older version is rewritten in
 * the current one. `moved` lists what was quarantined now.
 */
export function resumeRun(directory: string): WritableRun & { readonly moved: readonly DamagedLine[] } {
  const { record, legacy } = readRunRecord(directory);
  const journalFile = join(directory, EPISODES_FILE);
  const quarantineFile = join(directory, QUARANTINE_FILE);
  const journal = readJournal(journalFile);
  const already = readQuarantine(quarantineFile);
  if (journal.damaged.length) {
    // A kill between the two steps leaves the lines in both files: the next resume does not copy them again.
    const known = new Set(already.map((b) => b.toString('latin1')));
    const fresh = journal.damaged.filter((d) => !known.has(d.bytes.toString('latin1')));
    if (fresh.length) {
      const fd = openSync(quarantineFile, 'a');
      try {
        for (const d of fresh) writeSync(fd, Buffer.concat([d.bytes, Buffer.from('\n')]));
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    }
    writeFileAtomicSync(journalFile, Buffer.concat(journal.good));
  }
  if (legacy) writeJsonAtomicSync(join(directory, RUN_FILE), record);
  const quarantined = readQuarantine(quarantineFile).length;
  const run = new RunFolder(directory, record, journal.episodes, [], quarantined);
  return Object.assign(run, { moved: journal.damaged });
}

/** checks.json of a check run, or undefined when there is none (the check was interrupted, or is running). */
export function readChecks(directory: string): CheckRecord[] | undefined {
  const file = join(directory, CHECKS_FILE);
  if (!existsSync(file)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new RunStoreError(`${file}: not readable JSON: ${(error as Error).message}`, file, 'unreadable');
  }
  const parsed = ChecksFileSchema.safeParse(value);
  if (!parsed.success) throw new RunStoreError(`${file}: not a checks record: ${issuesText(parsed.error)}`, file, 'invalid');
  return parsed.data.checks;
}

/** One entry of `listRuns`. */
export interface RunListing {
  directory: string;
  /** The run id (the folder name when run.json cannot be read). */
  id: string;
  config?: RunRecord;
  /** Why the folder could not be read. */
  error?: string;
  /** Outcomes over the standing record of each work unit. */
  outcomes: OutcomeCounts;
  /** Work units recorded. */
  episodes: number;
  damaged: number;
  /** report.html, when the run has one. */
  report?: string;
  /**
   * A check run's verdicts (checks.json): the tasks judged and those that fail. Absent while the check runs
   * and when it was interrupted (a resumed check writes it).
   */
  checks?: CheckListing;
}

/** What a check run decided, in a line: `ok` when every task it judged is ok. */
export interface CheckListing {
  tasks: number;
  /** Ids of the tasks whose check fails. */
  failing: string[];
}

/** The runs under `runsDirectory` (each sub-folder with a run.json), newest first. */
export function listRuns(runsDirectory: string): RunListing[] {
  if (!existsSync(runsDirectory)) return [];
  const listings: (RunListing & { created: string })[] = [];
  for (const name of readdirSync(runsDirectory)) {
    const directory = join(runsDirectory, name);
    try {
      if (!statSync(directory).isDirectory() || !existsSync(join(directory, RUN_FILE))) continue;
    } catch {
      continue;
    }
    const report = join(directory, REPORT_FILES.html);
    const extra = existsSync(report) ? { report } : {};
    try {
      const run = openRun(directory);
      const outcomes = outcomeCounts([...run.episodes]);
      const checks = run.config.kind === 'check' ? readChecks(directory) : undefined;
      listings.push({
        directory,
        id: run.config.run_id,
        config: run.config,
        outcomes,
        episodes: outcomes.passed + outcomes.failed + outcomes.agent_error + outcomes.infra_error,
        damaged: run.damaged.length,
        created: run.config.created_at,
        ...(checks ? { checks: { tasks: checks.length, failing: checks.filter((c) => !c.ok).map((c) => c.task_id) } } : {}),
        ...extra,
      });
    } catch (error) {
      listings.push({ directory, id: name, error: (error as Error).message, outcomes: { passed: 0, failed: 0, agent_error: 0, infra_error: 0 }, episodes: 0, damaged: 0, created: '', ...extra });
    }
  }
  return listings.sort((a, b) => b.created.localeCompare(a.created) || b.id.localeCompare(a.id)).map(({ created: _created, ...listing }) => listing);
}
