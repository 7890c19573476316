/**
 * `mcpbench run`, `check` and `report`: argv onto the runner. Progress goes to stderr (a bar on a terminal,
 * a line per episode otherwise); `--reporter jsonl` writes one RunEvent per line on stdout for the editor.
 */
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { SingleBar } from 'cli-progress';
import type { Registry } from '../mcp/registry.ts';
import { computeScores, type Scores } from '../scoring/metrics.ts';
import { writeReport } from '../scoring/report.ts';
import { isPerturbationLevel, paraphrasedGoal, PERTURBATION_LEVELS, shownGoal, type ParaphraseEndpoint, type PerturbationLevel, type ShownGoal } from '../generator/perturb.ts';
import { keyFromEnvironment, readTaskSources, SealError } from '../generator/seal.ts';
import type { Task } from '../tasks/model.ts';
import type { Agent } from '../runner/agents/agent.ts';
import { createCommandAgent } from '../runner/agents/command.ts';
import { createEndpointAgent } from '../runner/agents/endpoint.ts';
import { createOpenAIAgent, openAIOptionsFromEnv } from '../runner/agents/openai.ts';
import { createReferenceAgent, noopAgent } from '../runner/agents/reference.ts';
import { planCheck, runCheck, type TaskCheck } from '../runner/check.ts';
import { setMutationScore } from '../runner/mutants.ts';
import { loadFaultProfile } from '../runner/faults.ts';
import { Journal, type RunConfig } from '../runner/journal.ts';
import { executeRun, loadTaskSources, pendingSpecs, planRun, type LoadedTask } from '../runner/run.ts';
import { defaultBackend, PROCESS_BACKEND_WARNING, type SandboxBackend } from '../runner/sandbox.ts';
import type { EpisodeSpec } from '../runner/episode.ts';
import type { EpisodeResult, RunEvent } from '../runner/types.ts';

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
}

/** The paraphrase endpoint of a run as run.json records it (never the API key). */
interface ParaphraseConfig {
  baseUrl: string;
  model: string;
}

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
 * MCPBENCH_OPENAI_BASE_URL, MCPBENCH_OPENAI_MODEL). The key: MCPBENCH_PARAPHRASE_API_KEY, else OPENAI_API_KEY.
 */
function paraphraseConfig(flags: RunFlags, levels: readonly PerturbationLevel[], env: NodeJS.ProcessEnv): ParaphraseConfig | undefined {
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

function paraphraseEndpoint(config: ParaphraseConfig, env: NodeJS.ProcessEnv): ParaphraseEndpoint {
  const apiKey = nonEmpty(env.MCPBENCH_PARAPHRASE_API_KEY) ?? nonEmpty(env.OPENAI_API_KEY);
  return { ...config, ...(apiKey ? { apiKey } : {}) };
}

export function newRunId(prefix = 'run'): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '-');
  return `${prefix}-${stamp}-${randomBytes(3).toString('hex')}`;
}

function createAgent(flags: Pick<RunFlags, 'agent' | 'agentCommand' | 'endpoint' | 'model' | 'baseUrl' | 'retry'>): Agent {
  switch (flags.agent) {
    case 'reference':
      return createReferenceAgent({ retry: flags.retry });
    case 'noop':
      return noopAgent;
    case 'command':
      if (!flags.agentCommand) throw new UsageError('--agent command needs --agent-command "<program and arguments>"');
      return createCommandAgent({ command: flags.agentCommand });
    case 'endpoint':
      if (!flags.endpoint) throw new UsageError('--agent endpoint needs --endpoint <url>');
      return createEndpointAgent({ url: flags.endpoint });
    case 'openai': {
      const overrides: { model?: string; baseUrl?: string } = {};
      if (flags.model) overrides.model = flags.model;
      if (flags.baseUrl) overrides.baseUrl = flags.baseUrl;
      try {
        return createOpenAIAgent(openAIOptionsFromEnv(process.env, overrides));
      } catch (error) {
        throw new UsageError((error as Error).message);
      }
    }
    default:
      throw new UsageError(`unknown agent ${flags.agent}: use reference, noop, command, endpoint or openai`);
  }
}

export class UsageError extends Error {}

/** Progress on stderr, events on stdout; returns the onEvent callback and a `finish` to close the bar. */
function reporterFor(io: CliIo, kind: RunFlags['reporter'], total: number) {
  if (kind === 'jsonl') return { onEvent: (event: RunEvent) => io.stdout(JSON.stringify(event) + '\n'), finish: () => undefined };
  if (kind === 'none') return { onEvent: () => undefined, finish: () => undefined };
  if (io.isTTY) {
    const bar = new SingleBar({ format: 'episodes [{bar}] {value}/{total} | passed {passed} | failed {failed} | infra {infra} | {eta_formatted} left', hideCursor: true, stream: process.stderr });
    let passed = 0;
    let failed = 0;
    let infra = 0;
    bar.start(total, 0, { passed, failed, infra });
    return {
      onEvent: (event: RunEvent) => {
        if (event.type !== 'episode-finished') return;
        const r = event.result;
        if (r.status === 'passed') passed++;
        else if (r.status === 'failed') failed++;
        else infra++;
        if (r.status === 'infra_error') bar.update({ passed, failed, infra });
        else bar.increment({ passed, failed, infra });
      },
      finish: () => bar.stop(),
    };
  }
  let n = 0;
  return {
    onEvent: (event: RunEvent) => {
      if (event.type !== 'episode-finished') return;
      const r = event.result;
      if (r.status !== 'infra_error') n++;
      const detail = r.status === 'infra_error' ? ` (attempt ${r.attempt}: ${r.infra_error?.split('\n')[0]})` : '';
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

const pct = (v: number | null | undefined) => (v === null || v === undefined ? '   -  ' : `${(v * 100).toFixed(1).padStart(5)}%`);
const ci = (i: { low: number; high: number } | null | undefined) => (i ? ` [${(i.low * 100).toFixed(1)}, ${(i.high * 100).toFixed(1)}]` : '');

export function formatScores(scores: Scores): string {
  const lines = [
    '',
    `Scores (${scores.tasks} tasks, ${scores.episodes.scored} episodes scored, ${scores.episodes.infra_errors} infra errors${scores.episodes.infra_unresolved ? `, ${scores.episodes.infra_unresolved} unresolved` : ''})`,
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
  return lines.join('\n') + '\n';
}

/**
 * The tasks of files, folders and sealed sets (`*.sealed.json`, and `x.sealed.json#tasks/a.json` entries as a
 * journal records them): a sealed set is decrypted in memory with MCPBENCH_SET_KEY and never written out.
 * A missing or wrong key is a usage error.
 */
function loadSet(paths: string[], registry: Registry): LoadedTask[] {
  let sources: { file: string; text: string }[];
  try {
    sources = readTaskSources(paths, () => keyFromEnvironment());
  } catch (error) {
    if (error instanceof SealError) throw new UsageError(error.message);
    throw error;
  }
  return loadTaskSources(sources, registry);
}

/**
 * Replaces the goals of the episodes still to run at a paraphrasing level with their paraphrase, asking the
 * endpoint once per (task, level, trial) (the variants of one trial share it). Episodes already in the journal
 * keep the goal they were run with.
 */
async function paraphraseGoals(specs: EpisodeSpec[], endpoint: ParaphraseEndpoint, seed: number, io: CliIo, reporter: RunFlags['reporter']): Promise<void> {
  const cache = new Map<string, Promise<ShownGoal>>();
  let asked = 0;
  const refused: string[] = [];
  for (const spec of specs) {
    const level = spec.key.perturbation as PerturbationLevel;
    const id = JSON.stringify([spec.task.id, level, spec.key.trial]);
    let shown = cache.get(id);
    if (!shown) {
      shown = paraphrasedGoal(spec.task as Task, level, seed, spec.key.trial, endpoint);
      cache.set(id, shown);
      const result = await shown;
      if (result.perturbed?.paraphrase) {
        asked++;
        if (!result.perturbed.paraphrase.paraphrased) refused.push(`${spec.task.id} trial ${spec.key.trial}: ${result.perturbed.paraphrase.error}`);
      }
    }
    const { goal, perturbed } = await shown;
    spec.goal = goal;
    if (perturbed) spec.perturbed = perturbed;
  }
  if (asked && reporter !== 'jsonl') {
    io.stderr(`paraphrase (${endpoint.model}): ${asked - refused.length} of ${asked} heavy goal(s) paraphrased${refused.length ? '; the deterministic goal was kept for:' : ''}\n`);
    for (const line of refused) io.stderr(`  ${line}\n`);
  }
}

export async function runCommand(paths: string[], flags: RunFlags, registry: Registry, io: CliIo, version: string): Promise<number> {
  const backend = flags.sandbox ?? defaultBackend();
  if (backend === 'process') io.stderr(`warning: ${PROCESS_BACKEND_WARNING}\n`);
  let journal: Journal;
  let tasks: LoadedTask[];
  let config: RunConfig;
  let levels: PerturbationLevel[];
  let paraphrase: ParaphraseConfig | undefined;
  if (flags.resume) {
    try {
      journal = Journal.resume(resolve(io.cwd, flags.resume));
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    config = journal.config;
    tasks = loadSet(config.task_files, registry);
    Object.assign(flags, { agent: config.agent, faults: config.fault_profile, trials: config.trials, seed: config.seed, perturb: config.perturbation, retry: config.retry }, config.agent_options ?? {});
    levels = parsePerturbation(config.perturbation);
    paraphrase = config.paraphrase as ParaphraseConfig | undefined;
  } else {
    levels = parsePerturbation(flags.perturb);
    paraphrase = paraphraseConfig(flags, levels, process.env);
    tasks = loadSet(paths.length ? paths : ['tasks'], registry);
    const runId = newRunId();
    config = {
      run_id: runId,
      created_at: new Date().toISOString(),
      task_files: tasks.map((t) => t.file),
      tasks: tasks.map((t) => t.task.id),
      agent: flags.agent,
      agent_options: { agentCommand: flags.agentCommand, endpoint: flags.endpoint, model: flags.model, baseUrl: flags.baseUrl, faultRate: flags.faultRate },
      fault_profile: flags.faults,
      perturbation: levels.join(','),
      perturbations: levels,
      ...(paraphrase ? { paraphrase } : {}),
      trials: flags.trials,
      seed: flags.seed,
      concurrency: flags.concurrency,
      sandbox: backend,
      retry: Boolean(flags.retry),
      version,
    } as RunConfig;
    journal = Journal.create(join(resolve(io.cwd, flags.out), runId), config);
  }
  const profile = loadFaultProfile(flags.faults, io.cwd, flags.faultRate === undefined ? {} : { rate: flags.faultRate });
  const agent = createAgent(flags);
  // The goal of each (task, level, trial) is fixed by the seed: the same run seed shows the same goals, and
  // the fault decisions (seed, task, trial, call) are the same at every level, so levels differ in the goal only.
  const specs = planRun(tasks, {
    agent,
    variants: () => [flags.agent === 'reference' ? 'reference:0' : agent.name],
    trials: flags.trials,
    profile,
    perturbation: levels,
    goal: (task, trial, level) => shownGoal(task, level as PerturbationLevel, flags.seed, trial),
  });
  if (paraphrase) await paraphraseGoals(pendingSpecs(specs, journal), paraphraseEndpoint(paraphrase, process.env), flags.seed, io, flags.reporter);
  const already = journal.results().filter((r) => r.status !== 'infra_error').length;
  const reporter = reporterFor(io, flags.reporter, specs.length);
  reporter.onEvent({ type: 'run-started', run_id: config.run_id, tasks: config.tasks, episodes: specs.length, agent: agent.name, fault_profile: profile.name, seed: flags.seed });
  if (already && flags.reporter !== 'jsonl') io.stderr(`resuming ${config.run_id}: ${already} of ${specs.length} episodes already recorded\n`);
  const interrupt = interruptSignal(io);
  let outcome: { interrupted: boolean };
  try {
    outcome = await executeRun(specs, {
      journal,
      concurrency: flags.concurrency,
      runId: config.run_id,
      registry,
      seed: flags.seed,
      backend,
      signal: interrupt.signal,
      onEvent: reporter.onEvent,
    });
  } finally {
    reporter.finish();
    interrupt.dispose();
  }
  const scores = computeScores(journal.results(), { seed: flags.seed });
  if (flags.report && !outcome.interrupted) {
    const { files, warnings } = writeReport(journal.directory);
    for (const warning of warnings) io.stderr(`warning: ${warning}\n`);
    if (flags.reporter !== 'jsonl') io.stderr(`report: ${files.html}\n`);
  }
  reporter.onEvent({ type: 'run-finished', run_id: config.run_id, directory: journal.directory, scores });
  if (flags.reporter !== 'jsonl') io.stdout(formatScores(scores) + `results: ${journal.directory}\n`);
  return outcome.interrupted ? 130 : 0;
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
  const backend = flags.sandbox ?? defaultBackend();
  if (backend === 'process') io.stderr(`warning: ${PROCESS_BACKEND_WARNING}\n`);
  const tasks = loadSet(paths.length ? paths : ['tasks'], registry);
  const runId = newRunId('check');
  const specs = planCheck(tasks, flags.seed, registry, flags.mutants ? { mutants: true } : {});
  const reporter = reporterFor(io, flags.reporter, specs.length);
  const interrupt = interruptSignal(io);
  let result: Awaited<ReturnType<typeof runCheck>>;
  try {
    result = await runCheck(tasks, {
      directory: join(resolve(io.cwd, flags.out), runId),
      runId,
      registry,
      seed: flags.seed,
      concurrency: flags.concurrency,
      backend,
      version,
      signal: interrupt.signal,
      onEvent: reporter.onEvent,
      specs,
      ...(flags.mutants ? { mutants: true } : {}),
    });
  } finally {
    reporter.finish();
    interrupt.dispose();
  }
  const { checks, journal } = result;
  reporter.onEvent({ type: 'run-finished', run_id: runId, directory: journal.directory, scores: { checks } });
  if (flags.reporter !== 'jsonl') io.stdout(flags.format === 'json' ? JSON.stringify({ run: journal.directory, checks }, null, 2) + '\n' : formatCheck(checks, io.cwd));
  if (result.interrupted) return 130;
  const warnings = checks.reduce((n, c) => n + c.findings.filter((f) => f.severity === 'warning').length, 0);
  const tooManyWarnings = flags.maxWarnings !== undefined && warnings > flags.maxWarnings;
  if (tooManyWarnings && flags.reporter !== 'jsonl') io.stderr(`${warnings} warning${warnings === 1 ? '' : 's'}, more than --max-warnings ${flags.maxWarnings}\n`);
  return checks.every((c) => c.ok) && !tooManyWarnings ? 0 : 1;
}

export function reportCommand(directory: string, io: CliIo): number {
  const { files, warnings, report } = writeReport(resolve(io.cwd, directory));
  for (const warning of warnings) io.stderr(`warning: ${warning}\n`);
  io.stdout(formatScores(report.scores));
  io.stdout(`report.json: ${files.json}\njunit.xml:   ${files.junit}\nreport.html: ${files.html}\n`);
  return 0;
}

export type { EpisodeResult };
