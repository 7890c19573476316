/**
 * `mcpbench run`, `check` and `report`: argv onto a run session (runner/session.ts) and its events onto a
 * reporter. Progress goes to stderr (a bar on a terminal, a line per episode otherwise); `--reporter jsonl`
 * writes one RunEvent per line on stdout for the editor.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { readSetManifest, RotationError, SET_MANIFEST_FILE } from '../generator/rotate.ts';
import { failureDiagnoser } from '../results/run-source.ts';
import { SingleBar } from 'cli-progress';
import type { Registry } from '../mcp/registry.ts';
import type { Scores } from '../scoring/metrics.ts';
import { writeReport } from '../scoring/report.ts';
import { isPerturbationLevel, PERTURBATION_LEVELS, type PerturbationLevel } from '../generator/perturb.ts';
import type { TaskCheck } from '../runner/check.ts';
import { chooseBackend, PROCESS_BACKEND_WARNING, type SandboxBackend } from '../runner/sandbox.ts';
import { isModelAgent } from '../runner/agents/registry.ts';
import { MODEL_AGENTS, profileAgent, SettingsError, type AgentConfig } from '../runner/agents/settings.ts';
import type { ToolCallFormatOption } from '../runner/agents/tool-call-formats.ts';
import { startRun, type SessionOptions } from '../runner/session.ts';
import { openRun, outcomeReason, type RunRecord } from '../runner/store.ts';
import type { Executor } from '../runner/run.ts';
import { queueExecutor } from '../queue/coordinator.ts';
import { checkRedis, redisTarget } from '../queue/redis.ts';
import type { RunEvent, RunFinished } from '../runner/types.ts';
import { setMutationScore } from '../runner/mutants.ts';

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  cwd: string;
  isTTY: boolean;
}

export interface RunFlags {
  /** Default: the --agent-config profile's agent, else reference. */
  agent?: string;
  agentCommand?: string;
  /** For --agent command: the sandbox backend it runs in (default: the run's), or `none`. */
  agentSandbox?: SandboxBackend | 'none';
  /** Names of runner variables the command agent gets (its own model key ...). */
  agentEnv?: string[];
  /** The command agent's folder (default: the current directory), read-only inside its sandbox. */
  agentDir?: string;
  /** `host:port` entries the command agent's egress proxy forwards to. */
  agentAllowHost?: string[];
  /** How the command agent reaches the gateway. */
  agentGateway?: 'http' | 'stdio';
  endpoint?: string;
  model?: string;
  baseUrl?: string;
  /** Model agents (openai, anthropic): a profile file and the settings flags, which override it. */
  agentConfig?: string;
  temperature?: number;
  topP?: number;
  modelSeed?: number;
  maxTokens?: number;
  maxTurns?: number;
  requestTimeout?: number;
  systemPrompt?: string;
  extraBody?: Record<string, unknown>;
  toolCallFormat?: ToolCallFormatOption;
  /** A price file: a model agent's cost, or the usage an endpoint agent reports. */
  prices?: string;
  maxTokensPerEpisode?: number;
  /** No new episode once the run's cost reaches this (in the price file's currency); on resume, a new budget. */
  maxCost?: number;
  faults: string;
  faultRate?: number;
  trials: number;
  seed: number;
  concurrency: number;
  retry?: boolean;
  sandbox?: SandboxBackend;
  reporter: 'progress' | 'jsonl' | 'none';
  out: string;
  resume?: string;
  /** A level or a comma-separated list of levels: `none`, `light`, `medium`, `heavy`. */
  perturb: string;
  /** Paraphrase heavy-level goals through an OpenAI-compatible endpoint (off by default). */
  paraphrase?: boolean;
  paraphraseBaseUrl?: string;
  paraphraseModel?: string;
  report: boolean;
  /** Run the episodes on queue workers through this Redis (`redis://HOST:PORT`). */
  queue?: string;
  /** With `queue`: the cap of the agent endpoint's episodes in flight across all workers. */
  maxInFlight?: number;
  /** The set measured and its month, recorded in run.json (default: the set.json of a set folder given). */
  set?: string;
  month?: string;
}

/** The set a run measures: --set / --month, else the set.json of the one set folder it was given. */
function runSet(paths: readonly string[], flags: Pick<RunFlags, 'set' | 'month'>, cwd: string): RunRecord['set'] {
  if (flags.set) return { name: flags.set, ...(flags.month ? { month: flags.month } : {}) };
  const folder = paths.length === 1 ? resolve(cwd, paths[0]!) : undefined;
  if (!folder || !existsSync(join(folder, SET_MANIFEST_FILE))) return flags.month ? { name: 'unnamed', month: flags.month } : undefined;
  let manifest: ReturnType<typeof readSetManifest>;
  try {
    manifest = readSetManifest(folder);
  } catch (error) {
    if (error instanceof RotationError) throw new UsageError(error.message);
    throw error;
  }
  const month = flags.month ?? manifest.month;
  return { name: manifest.name, ...(month ? { month } : {}) };
}

export class UsageError extends Error {}

/** `mcpbench run` stopped by its cost budget before every episode ran (resume it with a higher one). */
export const EXIT_BUDGET = 3;

/** `--perturb none,light,medium`: the levels, in the order given, each once. */
export function parsePerturbation(value: string): PerturbationLevel[] {
  const levels = value.split(',').map((level) => level.trim()).filter(Boolean);
  const wrong = levels.filter((level) => !isPerturbationLevel(level));
  if (levels.length === 0 || wrong.length > 0) {
    throw new UsageError(`--perturb ${value}: use ${PERTURBATION_LEVELS.join(', ')}, or a comma-separated list of them such as none,light,medium`);
  }
  return [...new Set(levels as PerturbationLevel[])];
}

const nonEmpty = (value: string | undefined) => (value && value.trim() ? value.trim() : undefined);

/**
 * Where paraphrases come from: --paraphrase-base-url / --paraphrase-model, else MCPBENCH_PARAPHRASE_BASE_URL /
 * MCPBENCH_PARAPHRASE_MODEL, else the openai agent's endpoint and model (--base-url, --model,
 * MCPBENCH_OPENAI_BASE_URL, MCPBENCH_OPENAI_MODEL). The key (read by the session): MCPBENCH_PARAPHRASE_API_KEY,
 * else OPENAI_API_KEY.
 */
function paraphraseConfig(flags: RunFlags, levels: readonly PerturbationLevel[], env: NodeJS.ProcessEnv): { baseUrl: string; model: string } | undefined {
  if (!flags.paraphrase) {
    if (flags.paraphraseBaseUrl || flags.paraphraseModel) throw new UsageError('--paraphrase-base-url and --paraphrase-model take effect with --paraphrase');
    return undefined;
  }
  if (!levels.includes('heavy')) throw new UsageError(`--paraphrase rewrites heavy-level goals: add heavy to --perturb (now ${levels.join(',')})`);
  const baseUrl = nonEmpty(flags.paraphraseBaseUrl) ?? nonEmpty(env.MCPBENCH_PARAPHRASE_BASE_URL) ?? nonEmpty(flags.baseUrl) ?? nonEmpty(env.MCPBENCH_OPENAI_BASE_URL);
  const model = nonEmpty(flags.paraphraseModel) ?? nonEmpty(env.MCPBENCH_PARAPHRASE_MODEL) ?? nonEmpty(flags.model) ?? nonEmpty(env.MCPBENCH_OPENAI_MODEL);
  if (!baseUrl) throw new UsageError('--paraphrase needs an OpenAI-compatible base URL: --paraphrase-base-url or MCPBENCH_PARAPHRASE_BASE_URL');
  if (!model) throw new UsageError('--paraphrase needs a model: --paraphrase-model or MCPBENCH_PARAPHRASE_MODEL');
  return { baseUrl, model };
}

/** A model agent's settings as its flags give them, under the profile file's keys. */
function settingsFlags(flags: RunFlags): Partial<AgentConfig> {
  return {
    base_url: flags.baseUrl,
    model: flags.model,
    temperature: flags.temperature,
    top_p: flags.topP,
    seed: flags.modelSeed,
    max_tokens: flags.maxTokens,
    max_turns: flags.maxTurns,
    request_timeout_s: flags.requestTimeout,
    system_prompt_file: flags.systemPrompt,
    extra_body: flags.extraBody,
    tool_call_format: flags.toolCallFormat,
    prices: flags.prices,
    max_tokens_per_episode: flags.maxTokensPerEpisode,
  };
}

/** The flag that sets each agent option (agents/registry.ts names the options; a model agent's are the profile's keys). */
export const AGENT_OPTION_FLAGS: Record<string, string> = {
  retry: '--retry',
  command: '--agent-command',
  sandbox: '--agent-sandbox',
  passEnv: '--agent-env',
  dir: '--agent-dir',
  allowHosts: '--agent-allow-host',
  gateway: '--agent-gateway',
  url: '--endpoint',
  prices: '--prices',
  agent_config: '--agent-config',
  model: '--model',
  base_url: '--base-url',
  seed: '--model-seed',
  request_timeout_s: '--request-timeout',
  system_prompt_file: '--system-prompt',
  ...Object.fromEntries(['temperature', 'top_p', 'max_tokens', 'max_turns', 'extra_body', 'tool_call_format', 'max_tokens_per_episode'].map((key) => [key, `--${key.replace(/_/g, '-')}`])),
};

/** The agent `--agent` names, else the one the `--agent-config` profile names, else reference. */
function agentOf(flags: RunFlags, cwd: string): string {
  try {
    return flags.agent ?? (flags.agentConfig ? profileAgent(resolve(cwd, flags.agentConfig), undefined) : undefined) ?? 'reference';
  } catch (error) {
    if (error instanceof SettingsError) throw new UsageError(error.message);
    throw error;
  }
}

/** The options of the agent from its flags: each agent reads only its own; a model agent's flags given to another are a usage error. */
function agentOptions(agent: string, flags: RunFlags): Record<string, unknown> {
  if (isModelAgent(agent)) return { agent_config: flags.agentConfig, ...settingsFlags(flags) };
  if (flags.agentConfig) throw new UsageError(`--agent-config is a profile for a model agent (--agent ${MODEL_AGENTS.join(' or ')}), not ${agent}`);
  // --base-url and --model also name the paraphrase endpoint, --prices prices an endpoint's usage; the other settings only mean something to a model agent.
  const { base_url: _url, model: _model, prices: _prices, ...rest } = settingsFlags(flags);
  const given = Object.entries(rest).filter(([, v]) => v !== undefined).map(([key]) => AGENT_OPTION_FLAGS[key] ?? key);
  if (given.length) throw new UsageError(`${given.join(', ')} set${given.length === 1 ? 's' : ''} a model agent's behaviour: use --agent ${MODEL_AGENTS.join(' or ')}`);
  switch (agent) {
    case 'reference':
      return { retry: Boolean(flags.retry) };
    case 'command':
      return {
        command: flags.agentCommand,
        sandbox: flags.agentSandbox,
        passEnv: flags.agentEnv?.length ? flags.agentEnv : undefined,
        // Relative to where mcpbench runs (the agent's prepare step makes it absolute for run.json).
        dir: flags.agentDir,
        allowHosts: flags.agentAllowHost?.length ? flags.agentAllowHost : undefined,
        gateway: flags.agentGateway,
      };
    case 'endpoint':
      return { url: flags.endpoint, prices: flags.prices };
    default:
      return {};
  }
}

/** A progress reporter for a run or check, made when the session says how many episodes there are. */
interface Reporter {
  onEvent(event: RunEvent): void;
  finish(): void;
}

function progressReporter(io: CliIo, kind: RunFlags['reporter'], started: Extract<RunEvent, { type: 'run-started' }>): Reporter {
  const total = started.episodes;
  if (kind === 'none') return { onEvent: () => undefined, finish: () => undefined };
  const counts = { passed: 0, failed: 0, agent: 0, infra: 0 };
  const count = (status: string) => {
    if (status === 'passed') counts.passed++;
    else if (status === 'failed') counts.failed++;
    else if (status === 'agent_error') counts.agent++;
    else counts.infra++;
  };
  if (io.isTTY) {
    const bar = new SingleBar({ format: 'episodes [{bar}] {value}/{total} | passed {passed} | failed {failed} | agent errors {agent} | infra {infra} | {eta_formatted} left', hideCursor: true, stream: process.stderr });
    bar.start(total, started.recorded, counts);
    return {
      onEvent: (event) => {
        if (event.type !== 'episode-finished') return;
        count(event.result.status);
        if (event.result.status === 'infra_error') bar.update(counts);
        else bar.increment(counts);
      },
      finish: () => bar.stop(),
    };
  }
  let n = started.recorded;
  return {
    onEvent: (event) => {
      if (event.type !== 'episode-finished') return;
      const r = event.result;
      if (r.status !== 'infra_error') n++;
      const detail = r.error || r.failure ? ` (${r.status === 'infra_error' ? `attempt ${r.attempt}: ` : ''}${outcomeReason(r)})` : '';
      const perturbation = r.perturbation === 'none' ? '' : ` perturb=${r.perturbation}`;
      io.stderr(`[${n}/${total}] ${r.status.padEnd(11)} ${r.task_id} ${r.variant} faults=${r.fault_profile}${perturbation} trial=${r.trial}${detail}\n`);
    },
    finish: () => undefined,
  };
}

/** Ctrl-C and SIGTERM abort the run: in-flight episodes stop, their servers are closed, nothing half-written. */
function interruptSignal(io: CliIo): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const onSignal = (name: string) => () => {
    if (controller.signal.aborted) return;
    io.stderr(`\n${name}: stopping; finished episodes are saved, resume with --resume\n`);
    controller.abort(new Error(name));
  };
  const sigint = onSignal('SIGINT');
  const sigterm = onSignal('SIGTERM');
  process.on('SIGINT', sigint);
  process.on('SIGTERM', sigterm);
  return { signal: controller.signal, dispose: () => (process.off('SIGINT', sigint), process.off('SIGTERM', sigterm)) };
}

/**
 * Runs a session with a reporter: jsonl events on stdout, or progress and notices on stderr. Returns how
 * the session finished.
 */
async function runWithReporter(options: SessionOptions, io: CliIo, kind: RunFlags['reporter']): Promise<RunFinished> {
  const interrupt = interruptSignal(io);
  let reporter: Reporter | undefined;
  let finished: RunFinished | undefined;
  try {
    for await (const event of startRun({ ...options, signal: interrupt.signal })) {
      if (kind === 'jsonl') io.stdout(`${JSON.stringify(event)}\n`);
      if (event.type === 'run-started') {
        reporter = progressReporter(io, kind, event);
        if (event.recorded && kind !== 'jsonl') io.stderr(`resuming ${event.run_id}: ${event.recorded} of ${event.episodes} episodes already recorded\n`);
      } else if (event.type === 'notice') {
        if (kind !== 'jsonl') io.stderr(`${event.level === 'warning' ? 'warning: ' : ''}${event.message}\n`);
      } else if (event.type === 'run-finished') finished = event;
      else reporter?.onEvent(event);
    }
  } finally {
    reporter?.finish();
    interrupt.dispose();
  }
  if (!finished) throw new Error('the run ended without run-finished');
  return finished;
}

/** `--queue`: Redis checked before anything is written, and the coordinator as the session's executor. */
async function queueOf(flags: RunFlags, version: string): Promise<{ executor?: Executor }> {
  if (!flags.queue) {
    if (flags.maxInFlight !== undefined) throw new UsageError('--max-in-flight caps episodes across queue workers: use it with --queue');
    return {};
  }
  if (flags.maxInFlight === 0) throw new UsageError('--max-in-flight 0 would run nothing: give at least 1');
  if (flags.maxCost !== undefined) throw new UsageError('--max-cost is counted by the process that runs the episodes: it is not enforced across queue workers yet, so it cannot be used with --queue');
  await checkRedis(redisTarget(flags.queue));
  return { executor: queueExecutor({ url: flags.queue, version, ...(flags.maxInFlight !== undefined ? { maxInFlight: flags.maxInFlight } : {}) }) };
}

export async function runCommand(paths: string[], flags: RunFlags, registry: Registry, io: CliIo, version: string): Promise<number> {
  const backend = chooseBackend(flags.sandbox);
  if (backend === 'process') io.stderr(`warning: ${PROCESS_BACKEND_WARNING}\n`);
  const common = { registry, cwd: io.cwd, backend, concurrency: flags.concurrency, version, env: process.env, ...(await queueOf(flags, version)) };
  let options: SessionOptions;
  if (flags.resume) options = { ...common, mode: 'resume', directory: flags.resume, report: flags.report, ...(flags.maxCost !== undefined ? { maxCost: flags.maxCost } : {}) };
  else {
    const levels = parsePerturbation(flags.perturb);
    const paraphrase = paraphraseConfig(flags, levels, process.env);
    const agent = agentOf(flags, io.cwd);
    const set = runSet(paths, flags, io.cwd);
    options = {
      ...common,
      mode: 'run',
      tasks: paths.length ? paths : ['tasks'],
      out: flags.out,
      agent,
      agentOptions: agentOptions(agent, flags),
      ...(flags.maxCost !== undefined ? { maxCost: flags.maxCost } : {}),
      faults: flags.faults,
      ...(flags.faultRate !== undefined ? { faultRate: flags.faultRate } : {}),
      perturbations: levels,
      ...(paraphrase ? { paraphrase } : {}),
      trials: flags.trials,
      seed: flags.seed,
      report: flags.report,
      ...(set ? { set } : {}),
    };
  }
  const finished = await runWithReporter(options, io, flags.reporter);
  if (finished.kind === 'check') {
    // A resumed check.
    if (flags.reporter !== 'jsonl') io.stdout(formatCheck(finished.checks, io.cwd));
    return finished.interrupted ? 130 : finished.checks.every((c) => c.ok) ? 0 : 1;
  }
  const { stopped } = finished;
  if (flags.reporter !== 'jsonl') {
    if (stopped) {
      io.stderr(
        `cost budget reached: ${`${stopped.currency ?? ''} ${stopped.spent.toFixed(4)}`.trim()} spent of --max-cost ${stopped.max}; ${stopped.not_started} episode(s) not started.\n` +
          `Resume with a higher budget: mcpbench run --resume ${finished.directory} --max-cost <more>\n`,
      );
    }
    if (finished.report) io.stderr(`report: ${finished.report.html}\n`);
    io.stdout(formatScores(finished.scores) + `results: ${finished.directory}\n`);
  }
  return finished.interrupted ? 130 : stopped ? EXIT_BUDGET : 0;
}

const pct = (v: number | null | undefined) => (v === null || v === undefined ? '   -  ' : `${(v * 100).toFixed(1).padStart(5)}%`);
const ci = (i: { low: number; high: number } | null | undefined) => (i ? ` [${(i.low * 100).toFixed(1)}, ${(i.high * 100).toFixed(1)}]` : '');

export function formatScores(scores: Scores): string {
  const lines = [
    '',
    `Scores (${scores.tasks} tasks, ${scores.episodes.scored} episodes scored; infrastructure errors are not scored)`,
    `  success rate            ${pct(scores.success_rate.value)}${ci(scores.success_rate.ci)}  (${scores.success_rate.numerator}/${scores.success_rate.denominator})`,
    `  tool-call efficiency    ${scores.tool_call_efficiency.value === null ? '   -  ' : scores.tool_call_efficiency.value.toFixed(3).padStart(6)}   (tool calls / max_steps over passed; lower is better)`,
    `  hallucinated-tool rate  ${pct(scores.hallucinated_tool_rate.value)}  (${scores.hallucinated_tool_rate.numerator}/${scores.hallucinated_tool_rate.denominator} calls)`,
    `  recovery-from-error     ${pct(scores.recovery_rate.value)}  (${scores.recovery_rate.numerator}/${scores.recovery_rate.denominator} recovery episodes that saw an error)`,
  ];
  if (scores.model || scores.malformed_call_rate.numerator > 0) {
    lines.splice(5, 0, `  malformed-call rate     ${pct(scores.malformed_call_rate.value)}  (${scores.malformed_call_rate.numerator}/${scores.malformed_call_rate.denominator} attempted calls rejected before the gateway)`);
  }
  if (scores.model) lines.push(...formatModelScores(scores.model));
  for (const p of scores.pass_k) lines.push(`  pass^${p.k}${' '.repeat(Math.max(1, 18 - String(p.k).length))}${pct(p.value)}${ci(p.ci)}`);
  // The reliability surface, when the run spans more than one cell (several perturbation levels or profiles).
  const cells = [...new Map(scores.surface.map((c) => [JSON.stringify([c.perturbation, c.fault_profile]), c])).values()];
  if (cells.length > 1) {
    const ks = [...new Set(scores.surface.map((c) => c.k))].sort((a, b) => a - b);
    const order = (level: string) => {
      const i = (PERTURBATION_LEVELS as readonly string[]).indexOf(level);
      return i < 0 ? PERTURBATION_LEVELS.length : i;
    };
    cells.sort((a, b) => a.fault_profile.localeCompare(b.fault_profile) || order(a.perturbation) - order(b.perturbation) || a.perturbation.localeCompare(b.perturbation));
    const width = Math.max(14, ...cells.map((c) => c.perturbation.length + 2));
    const faultWidth = Math.max(8, ...cells.map((c) => c.fault_profile.length + 2));
    lines.push('  reliability surface (pass^k by perturbation level and fault profile):');
    lines.push(`    ${'perturbation'.padEnd(width)}${'faults'.padEnd(faultWidth)}${ks.map((k) => `pass^${k}`.padStart(9)).join('')}`);
    for (const cell of cells) {
      const values = ks.map((k) => {
        const found = scores.surface.find((c) => c.k === k && c.perturbation === cell.perturbation && c.fault_profile === cell.fault_profile);
        return (found ? pct(found.pass_k) : '   -  ').padStart(9);
      });
      lines.push(`    ${cell.perturbation.padEnd(width)}${cell.fault_profile.padEnd(faultWidth)}${values.join('')}  (${cell.tasks} tasks)`);
    }
  }
  if (scores.by_namespace.length) {
    lines.push('  by server:');
    for (const b of scores.by_namespace) lines.push(`    ${b.key.padEnd(20)} ${pct(b.success_rate)}  (${b.passed}/${b.attempted})`);
  }
  if (scores.by_category.length) {
    lines.push('  by category:');
    for (const b of scores.by_category) lines.push(`    ${b.key.padEnd(20)} ${pct(b.success_rate)}  (${b.passed}/${b.attempted})`);
  }
  const faults = scores.fault_outcomes.filter((f) => f.decided > 0);
  if (faults.length) {
    lines.push('  faults (decided by the profile / delivered to the agent):');
    for (const f of faults) lines.push(`    ${f.type.padEnd(20)} ${String(f.decided).padStart(5)} / ${String(f.delivered).padEnd(5)}${f.delivered < f.decided ? `  (${f.decided - f.delivered} could not be delivered)` : ''}`);
  }
  lines.push(...formatOutcomes(scores));
  return lines.join('\n') + '\n';
}

const int = (n: number) => Math.round(n).toLocaleString('en-US');

/** Tokens, cost, latency and call formats of the model agents of a run. */
export function formatModelScores(m: NonNullable<Scores['model']>): string[] {
  const money = (v: number) => `${m.currency ?? ''} ${v.toFixed(4)}`.trim();
  const lines = [
    `  tokens                  ${int(m.total_tokens)}  (prompt ${int(m.prompt_tokens)}, ${int(m.cached_tokens)} of them cached; completion ${int(m.completion_tokens)}) in ${int(m.requests)} requests, ${int(m.retries)} retried`,
  ];
  if (m.responses_without_usage > 0) lines.push(`                          ${int(m.responses_without_usage)} response(s) reported no usage: their tokens are not counted`);
  if (m.tokens_per_passed !== null) lines.push(`  tokens per passed task  ${int(m.tokens_per_passed)}`);
  lines.push(
    m.cost === null
      ? '  cost                    not counted (no price for the model: --prices FILE)'
      : `  cost                    ${money(m.cost)}  (${m.cost_per_passed === null ? 'no passed task' : `${money(m.cost_per_passed)} per passed task`}${m.unpriced_episodes ? `; ${m.unpriced_episodes} episode(s) without a price not counted` : ''})`,
  );
  if (m.latency_per_turn_ms) {
    const l = m.latency_per_turn_ms;
    lines.push(`  model latency per turn  mean ${int(l.mean)} ms, p50 ${int(l.p50)} ms, p95 ${int(l.p95)} ms over ${int(l.turns)} turns`);
  }
  const formats = Object.entries(m.calls_by_format);
  if (formats.length) lines.push(`  tool calls by format    ${formats.map(([format, n]) => `${format} ${int(n)}`).join(', ')}`);
  return lines;
}

/** The three outcomes apart, and the most frequent error messages. */
export function formatOutcomes(scores: Scores): string[] {
  const e = scores.episodes;
  const retried = e.infra_errors - e.infra_unresolved;
  const lines = [
    `Outcomes: ${e.passed} passed, ${e.failed} failed, ${e.agent_errors} agent error${e.agent_errors === 1 ? '' : 's'}, ${e.infra_unresolved} infrastructure error${e.infra_unresolved === 1 ? '' : 's'}${retried > 0 ? ` (${retried} infrastructure failure${retried === 1 ? '' : 's'} retried)` : ''}`,
  ];
  if (scores.errors.length) {
    lines.push('  most frequent errors:');
    for (const x of scores.errors.slice(0, 5)) lines.push(`    ${String(x.count).padStart(4)}x ${x.kind === 'agent' ? 'agent' : 'infra'} ${x.code}: ${x.message}`);
  }
  return lines;
}

export interface CheckFlags {
  seed: number;
  /** Mutation testing of the predicates. */
  mutants?: boolean;
  /** Fail (exit 1) when check finds more warnings than this. */
  maxWarnings?: number;
  concurrency: number;
  sandbox?: SandboxBackend;
  reporter: 'progress' | 'jsonl' | 'none';
  out: string;
  format: 'text' | 'json';
}

const percent = (score: number | null) => (score === null ? 'n/a' : `${(score * 100).toFixed(1)}%`);

function formatCheck(checks: TaskCheck[], cwd: string): string {
  const lines: string[] = [];
  const relative = (file: string) => (file.startsWith(cwd) ? file.slice(cwd.length + 1) : file);
  for (const c of checks) {
    const paths = `${c.coverage.paths.covered}/${c.coverage.paths.total} solution path${c.coverage.paths.total === 1 ? '' : 's'} covered`;
    const leaves = `${c.coverage.leaves.covered}/${c.coverage.leaves.total} leaves witnessed`;
    const faults = Object.entries(c.faults).map(([type, ok]) => `${type}${ok ? '' : ' FAIL'}`).length;
    const m = c.mutation;
    const mutants = m ? `, mutants ${m.killed}/${m.killed + m.survived} killed (${percent(m.score)}; ${m.equivalent + m.declared} equivalent)` : '';
    lines.push(`${c.ok ? 'ok  ' : 'FAIL'} ${c.task_id}  ${paths}, ${leaves}, recovers under ${Object.values(c.faults).filter(Boolean).length}/${faults} fault types${mutants}  (${relative(c.file)})`);
    const explained = new Set(c.findings.map((f) => f.message));
    for (const problem of c.problems) if (!explained.has(problem)) lines.push(`       - ${problem}`);
    for (const f of c.findings) {
      const where = f.start ? `${relative(c.file)}:${f.start.line + 1}:${f.start.character + 1}` : relative(c.file);
      lines.push(`       ${where}  ${f.severity} ${f.code}: ${f.message}`);
      const survivor = f.mutant !== undefined ? m?.mutants.find((v) => v.id === f.mutant) : undefined;
      for (const line of survivor?.diff ?? []) lines.push(`           ${line}`);
    }
    const unwitnessed = c.coverage.items.filter((i) => !i.witnessed);
    for (const item of unwitnessed) lines.push(`       never witnessed: ${item.kind} ${item.label} at ${item.path.join('.')}`);
  }
  const failed = checks.filter((c) => !c.ok).length;
  const warnings = checks.reduce((n, c) => n + c.findings.filter((f) => f.severity === 'warning').length, 0);
  lines.push(`${checks.length} task${checks.length === 1 ? '' : 's'} checked: ${checks.length - failed} ok, ${failed} failing${warnings ? `, ${warnings} warning${warnings === 1 ? '' : 's'}` : ''}`);
  const reports = checks.flatMap((c) => (c.mutation ? [c.mutation] : []));
  if (reports.length) {
    const set = setMutationScore(reports);
    lines.push(`mutation score ${percent(set.score)}: ${set.killed}/${set.killed + set.survived} killed, ${set.survived} surviving, ${set.equivalent} equivalent (same end state), ${set.declared} declared equivalent, of ${set.total} mutants`);
  }
  return lines.join('\n') + '\n';
}

export async function checkCommand(paths: string[], flags: CheckFlags, registry: Registry, io: CliIo, version: string): Promise<number> {
  const backend = chooseBackend(flags.sandbox);
  if (backend === 'process') io.stderr(`warning: ${PROCESS_BACKEND_WARNING}\n`);
  const finished = await runWithReporter(
    { mode: 'check', registry, cwd: io.cwd, backend, concurrency: flags.concurrency, version, env: process.env, tasks: paths.length ? paths : ['tasks'], out: flags.out, seed: flags.seed, ...(flags.mutants ? { mutants: true } : {}) },
    io,
    flags.reporter,
  );
  if (finished.kind !== 'check') throw new Error('a check session finished as a run');
  const { checks } = finished;
  if (flags.reporter !== 'jsonl') io.stdout(flags.format === 'json' ? JSON.stringify({ run: finished.directory, checks }, null, 2) + '\n' : formatCheck(checks, io.cwd));
  if (finished.interrupted) return 130;
  const warnings = checks.reduce((n, c) => n + c.findings.filter((f) => f.severity === 'warning').length, 0);
  const tooManyWarnings = flags.maxWarnings !== undefined && warnings > flags.maxWarnings;
  if (tooManyWarnings && flags.reporter !== 'jsonl') io.stderr(`${warnings} warning${warnings === 1 ? '' : 's'}, more than --max-warnings ${flags.maxWarnings}\n`);
  return checks.every((c) => c.ok) && !tooManyWarnings ? 0 : 1;
}

export function reportCommand(directory: string, registry: Registry, io: CliIo): number {
  const folder = resolve(io.cwd, directory);
  const { files, warnings, report } = writeReport(folder, { diagnose: failureDiagnoser(openRun(folder).config, registry) });
  for (const warning of warnings) io.stderr(`warning: ${warning}\n`);
  io.stdout(formatScores(report.scores));
  io.stdout(`report.json: ${files.json}\njunit.xml:   ${files.junit}\nreport.html: ${files.html}\n`);
  return 0;
}
