/**
 * The run record's formats: zod schemas (and the types inferred from them) for run.json, each line of
 * episodes.jsonl and checks.json, with the codes an episode's outcome carries. One source for every reader
 * and writer (run-folder.ts reads and writes them); nothing here imports from above record/.
 */
import { z } from 'zod';
import type { JsonPath } from '../json-values.ts';
import { FAULT_TYPES } from './faults.ts';

export type Truth = boolean | undefined;

export interface NodeVerdict {
  path: JsonPath;
  kind: 'all' | 'any' | 'not' | 'leaf' | 'invalid';
  /** For leaves: `<ns>.<predicate>`. */
  name?: string;
  value: Truth;
  evidence?: unknown;
  /** Why a leaf could not be decided. */
  undecided?: string;
  children?: NodeVerdict[];
}

/** The format of run.json, episodes.jsonl and checks.json this code writes (and the newest it reads). */
export const RUN_RECORD_VERSION = 2;

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
 *   other failure of the model API; what versions before these codes recorded), `model-replay-miss` (replaying
 *   recorded model calls strictly, MCPBENCH_MODEL_REPLAY=strict: a request that was not recorded).
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
  'model-replay-miss',
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
export const LegacyEpisodeSchema = z.object({
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
  /**
   * The run's plan as it was last started or resumed: how many work units it has and the fingerprint of
   * their keys (`planFingerprint`), so a copy of the run is told from another plan under the same run id and
   * a reader knows which units are missing. Absent in runs written before plans were recorded.
   */
  plan: z.object({ units: z.number().int().nonnegative(), fingerprint: z.string().regex(/^[0-9a-f]{64}$/) }).optional(),
  /** A check run with mutation testing (`check --mutants`): a resume plans the mutants' episodes too. */
  mutants: z.boolean().optional(),
  /**
   * A run made by re-judging another's stored end states (`mcpbench rejudge`): its source, and the hash of each
   * task version judged against (by task id). Its verdicts are of those hashes, never pooled with the source's.
   */
  rejudged: z.object({ run_id: z.string(), directory: z.string(), task_hashes: z.record(z.string(), z.string()) }).optional(),
  /** A check run with shortcut agents and shotgun guesses (`check --shortcuts`): a resume plans them too. */
  shortcuts: z.boolean().optional(),
});

/** run.json as versions before the typed record wrote it (`version` was the package version, if present). */
export const LegacyRunSchema = z.object({
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
  code: z.enum(['surviving-mutant', 'guessable-answer', 'underivable-argument', 'shortcut-passes']),
  severity: z.enum(['error', 'warning']),
  message: z.string(),
  /** Where in the task file it points (a JSON path), when it points somewhere. */
  path: JsonPathSchema.optional(),
  /** `surviving-mutant`: the mutant's id (its diff is in the task's mutation report). */
  mutant: z.string().optional(),
  /** `shortcut-passes`: the shortcut's id. */
  shortcut: z.string().optional(),
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
  /** With `--shortcuts`: how many shortcut agents ran, and which passed (accepted with a reason or not). */
  shortcuts: z.object({ tried: z.number().int(), passed: z.array(z.string()), accepted: z.array(z.string()) }).optional(),
  /** Codes of validity findings the task accepts with a reason (`accepted_findings`): found, and not failing it. */
  accepted_findings: z.array(z.string()).optional(),
});

/** `states/<hash>.json`: the end states (by namespace) an episode was judged on, or the marker of a cut one. */
export const EndStateFileSchema = z.union([
  z.object({ version: z.literal(1), hash: z.string().regex(/^[0-9a-f]{64}$/), states: z.record(z.string(), z.unknown()) }),
  z.object({ version: z.literal(1), hash: z.string().regex(/^[0-9a-f]{64}$/), cut: z.object({ bytes: z.number().int(), limit: z.number().int() }) }),
]);

export type EndStateFile = z.infer<typeof EndStateFileSchema>;

export const ChecksFileSchema = z.object({ version: z.literal(RUN_RECORD_VERSION), run_id: z.string(), checks: z.array(CheckRecordSchema) });

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

