/**
 * `mcpbench run`, `check` and `report`: argv onto a run session (runner/session.ts) and its events onto a
 * reporter. Progress goes to stderr (a bar on a terminal, a line per episode otherwise); `--reporter jsonl`
 * writes one RunEvent per line on stdout for the editor.
 */
import { resolve } from 'node:path';
import { SingleBar } from 'cli-progress';
import type { Registry } from '../mcp/registry.ts';
import type { Scores } from '../scoring/metrics.ts';
import { writeReport } from '../scoring/report.ts';
import { isPerturbationLevel, PERTURBATION_LEVELS, type PerturbationLevel } from '../generator/perturb.ts';
import type { TaskCheck } from '../runner/check.ts';
import { defaultBackend, PROCESS_BACKEND_WARNING, type SandboxBackend } from '../runner/sandbox.ts';
import { startRun, type SessionOptions } from '../runner/session.ts';
import { outcomeReason } from '../runner/store.ts';
import type { Executor } from '../runner/run.ts';
import { queueExecutor } from '../queue/coordinator.ts';
import { checkRedis, redisTarget } from '../queue/redis.ts';
import type { RunEvent, RunFinished } from '../runner/types.ts';

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  cwd: string;
  isTTY: boolean;
}

export interface RunFlags {
  agent: string;
  agentCommand?: string;
  endpoint?: string;
  model?: string;
  baseUrl?: string;
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
}

export class UsageError extends Error {}

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

/** The flag that sets each agent option (agents/registry.ts names the options). */
export const AGENT_OPTION_FLAGS: Record<string, string> = { retry: '--retry', command: '--agent-command', url: '--endpoint', model: '--model', baseUrl: '--base-url' };

/** The options of `--agent <name>` from its flags: each agent reads only its own. */
function agentOptions(flags: RunFlags): Record<string, unknown> {
  switch (flags.agent) {
    case 'reference':
      return { retry: Boolean(flags.retry) };
    case 'command':
      return { command: flags.agentCommand };
    case 'endpoint':
      return { url: flags.endpoint };
    case 'openai':
      return { model: flags.model, baseUrl: flags.baseUrl };
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
      const detail = r.error ? ` (${r.status === 'infra_error' ? `attempt ${r.attempt}: ` : ''}${outcomeReason(r)})` : '';
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
  await checkRedis(redisTarget(flags.queue));
  return { executor: queueExecutor({ url: flags.queue, version, ...(flags.maxInFlight !== undefined ? { maxInFlight: flags.maxInFlight } : {}) }) };
}

export async function runCommand(paths: string[], flags: RunFlags, registry: Registry, io: CliIo, version: string): Promise<number> {
  const backend = flags.sandbox ?? defaultBackend();
  if (backend === 'process') io.stderr(`warning: ${PROCESS_BACKEND_WARNING}\n`);
  const common = { registry, cwd: io.cwd, backend, concurrency: flags.concurrency, version, env: process.env, ...(await queueOf(flags, version)) };
  let options: SessionOptions;
  if (flags.resume) options = { ...common, mode: 'resume', directory: flags.resume, report: flags.report };
  else {
    const levels = parsePerturbation(flags.perturb);
    const paraphrase = paraphraseConfig(flags, levels, process.env);
    options = {
      ...common,
      mode: 'run',
      tasks: paths.length ? paths : ['tasks'],
      out: flags.out,
      agent: flags.agent,
      agentOptions: agentOptions(flags),
      faults: flags.faults,
      ...(flags.faultRate !== undefined ? { faultRate: flags.faultRate } : {}),
      perturbations: levels,
      ...(paraphrase ? { paraphrase } : {}),
      trials: flags.trials,
      seed: flags.seed,
      report: flags.report,
    };
  }
  const finished = await runWithReporter(options, io, flags.reporter);
  if (finished.kind === 'check') {
    // A resumed check.
    if (flags.reporter !== 'jsonl') io.stdout(formatCheck(finished.checks, io.cwd));
    return finished.interrupted ? 130 : finished.checks.every((c) => c.ok) ? 0 : 1;
  }
  if (flags.reporter !== 'jsonl') {
    if (finished.report) io.stderr(`report: ${finished.report.html}\n`);
    io.stdout(formatScores(finished.scores) + `results: ${finished.directory}\n`);
  }
  return finished.interrupted ? 130 : 0;
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
  concurrency: number;
  sandbox?: SandboxBackend;
  reporter: 'progress' | 'jsonl' | 'none';
  out: string;
  format: 'text' | 'json';
}

function formatCheck(checks: TaskCheck[], cwd: string): string {
  const lines: string[] = [];
  for (const c of checks) {
    const paths = `${c.coverage.paths.covered}/${c.coverage.paths.total} solution path${c.coverage.paths.total === 1 ? '' : 's'} covered`;
    const leaves = `${c.coverage.leaves.covered}/${c.coverage.leaves.total} leaves witnessed`;
    const faults = Object.entries(c.faults).map(([type, ok]) => `${type}${ok ? '' : ' FAIL'}`).length;
    lines.push(`${c.ok ? 'ok  ' : 'FAIL'} ${c.task_id}  ${paths}, ${leaves}, recovers under ${Object.values(c.faults).filter(Boolean).length}/${faults} fault types  (${c.file.startsWith(cwd) ? c.file.slice(cwd.length + 1) : c.file})`);
    for (const problem of c.problems) lines.push(`       - ${problem}`);
    const unwitnessed = c.coverage.items.filter((i) => !i.witnessed);
    for (const item of unwitnessed) lines.push(`       never witnessed: ${item.kind} ${item.label} at ${item.path.join('.')}`);
  }
  const failed = checks.filter((c) => !c.ok).length;
  lines.push(`${checks.length} task${checks.length === 1 ? '' : 's'} checked: ${checks.length - failed} ok, ${failed} failing`);
  return lines.join('\n') + '\n';
}

export async function checkCommand(paths: string[], flags: CheckFlags, registry: Registry, io: CliIo, version: string): Promise<number> {
  const backend = flags.sandbox ?? defaultBackend();
  if (backend === 'process') io.stderr(`warning: ${PROCESS_BACKEND_WARNING}\n`);
  const finished = await runWithReporter(
    { mode: 'check', registry, cwd: io.cwd, backend, concurrency: flags.concurrency, version, env: process.env, tasks: paths.length ? paths : ['tasks'], out: flags.out, seed: flags.seed },
    io,
    flags.reporter,
  );
  if (finished.kind !== 'check') throw new Error('a check session finished as a run');
  const { checks } = finished;
  if (flags.reporter !== 'jsonl') io.stdout(flags.format === 'json' ? JSON.stringify({ run: finished.directory, checks }, null, 2) + '\n' : formatCheck(checks, io.cwd));
  if (finished.interrupted) return 130;
  return checks.every((c) => c.ok) ? 0 : 1;
}

export function reportCommand(directory: string, io: CliIo): number {
  const { files, warnings, report } = writeReport(resolve(io.cwd, directory));
  for (const warning of warnings) io.stderr(`warning: ${warning}\n`);
  io.stdout(formatScores(report.scores));
  io.stdout(`report.json: ${files.json}\njunit.xml:   ${files.junit}\nreport.html: ${files.html}\n`);
  return 0;
}
