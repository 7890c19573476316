/**
 * `mcpbench run [tasks...]`: argv onto a run session (engine/session.ts) and its events onto a reporter
 * (../progress.ts). Exit 0 done, 3 stopped by --max-cost, 130 interrupted, 2 usage errors.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { checkRedis, EXIT_BUDGET, EXIT_INTERRUPTED, EXIT_OK, EXIT_UNMEASURED, loadRegistry, queueExecutor, redisTarget, type Registry, type RunFinished, type SessionOptions } from '../../engine/index.ts';
import type { RunRecord } from '../../record/schema.ts';
import { agentNames } from '../../runner/agents/registry.ts';
import { isPerturbationLevel, PERTURBATION_LEVELS, type PerturbationLevel } from '../../runner/perturb.ts';
import type { Executor } from '../../runner/run.ts';
import { chooseBackend, PROCESS_BACKEND_WARNING, type SandboxBackend } from '../../runner/sandbox.ts';
import { readSetManifest, SET_MANIFEST_FILE } from '../../tasks/set-manifest.ts';
import { agentOf, agentOptions, addAgentSettingOptions, settingOption } from '../agent-settings.ts';
import { agentSetting } from '../../record/agent-settings.ts';
import type { CliIo, CommandContext } from '../context.ts';
import { UsageError } from '../errors.ts';
import { formatCheck, formatScores } from '../format.ts';
import { integerOption, monthOption, numberOption, reporterOption, sandboxOption } from '../options.ts';
import { runWithReporter } from '../progress.ts';

export function register(program: Command, { io, version, setExitCode }: CommandContext): void {
  const run = program
    .command('run')
    .description('Run tasks with an agent through the gateway, under faults and goal perturbations, and score them (default: ./tasks).')
    .argument('[tasks...]', 'task files, folders or sealed sets (*.sealed.json, opened in memory with MCPBENCH_SET_KEY)')
    .addOption(new Option('--agent <agent>', "the agent (default: the --agent-config profile's, else reference)").choices(agentNames()));
  addAgentSettingOptions(run, ['retry']);
  run
    .option('--max-cost <amount>', "start no new episode once the run's cost reaches this (needs --prices); exit 3, resume with a higher one", numberOption)
    .option('--faults <profile>', 'none | light | medium | heavy | <type>-only | a profile file', 'none')
    .option('--fault-rate <rate>', 'override the failure rate of the profile', Number)
    .option('--trials <k>', 'trials per task (pass^k)', integerOption, 1)
    .option('--seed <n>', 'run seed: the same seed gives the same faults', integerOption, 1)
    .option('--concurrency <n>', 'episodes at a time', integerOption, 1)
    .addOption(settingOption(agentSetting('retry')))
    .option('--perturb <levels>', 'goal perturbation level none | light | medium | heavy, or a comma-separated list (none,light,medium): each level is run and scored', 'none')
    .option('--paraphrase', 'also paraphrase heavy-level goals through an OpenAI-compatible endpoint (off by default)')
    .option('--paraphrase-base-url <url>', 'for --paraphrase: the base URL (or MCPBENCH_PARAPHRASE_BASE_URL; default: the openai agent\'s)')
    .option('--paraphrase-model <model>', 'for --paraphrase: the model (or MCPBENCH_PARAPHRASE_MODEL; default: the openai agent\'s)')
    .addOption(sandboxOption())
    .addOption(reporterOption())
    .option('--out <folder>', 'where run folders go', 'runs')
    .option('--resume <run-folder>', 'finish an interrupted run')
    .option('--no-report', 'skip writing report.json, junit.xml and report.html')
    .option('--set <name>', 'the task set this run measures, recorded in run.json for the results database (default: the set.json of a set folder)')
    .option('--month <YYYY-MM>', "the set's month, recorded with --set (default: the set.json's month)", monthOption)
    .option('--queue <url>', 'run the episodes on queue workers (mcpbench worker) through this Redis: redis://HOST:PORT; this process coordinates and writes the run folder')
    .option('--max-in-flight <n>', "with --queue: at most this many episodes of the agent's endpoint in flight across all workers", integerOption)
    .action(async (paths: string[], options: RunFlags) => {
      setExitCode(await runCommand(paths, options, await loadRegistry(), io, version));
    });
}

/**
 * The flags of `mcpbench run` its own code reads; the agent settings (record/agent-settings.ts) are read by
 * key from the same object (cli/agent-settings.ts), so a new setting needs no field here.
 */
export interface RunFlags {
  /** Default: the --agent-config profile's agent, else reference. */
  agent?: string;
  /** Model agents: a profile file; the settings flags override it. */
  agentConfig?: string;
  /** Model agents' endpoint and model, which --paraphrase defaults to. */
  model?: string;
  baseUrl?: string;
  /** No new episode once the run's cost reaches this (in the price file's currency); on resume, a new budget. */
  maxCost?: number;
  faults: string;
  faultRate?: number;
  trials: number;
  seed: number;
  concurrency: number;
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
  const manifest = readSetManifest(folder);
  const month = flags.month ?? manifest.month;
  return { name: manifest.name, ...(month ? { month } : {}) };
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
    return finished.interrupted ? EXIT_INTERRUPTED : finished.checks.every((c) => c.ok) ? 0 : 1;
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
  if (finished.interrupted) return EXIT_INTERRUPTED;
  if (stopped) return EXIT_BUDGET;
  const problem = unmeasured(finished);
  if (problem) {
    io.stderr(`mcpbench: ${problem}\n`);
    return EXIT_UNMEASURED;
  }
  return EXIT_OK;
}

/**
 * Why a finished run did not measure its agent, or undefined: work units left unresolved or missing, or
 * every episode ended in the same error (a missing key, a 401).
 */
export function unmeasured(finished: Extract<RunFinished, { kind: 'run' }>): string | undefined {
  const { setup_failure: failure, standing } = finished;
  if (failure) return `every episode (${failure.episodes}) ended in the same ${failure.kind} error, ${failure.code}: ${failure.message}; the agent was not measured: fix the setup and run again`;
  if (standing?.completeness === 'unresolved') return `${standing.unresolved} work unit(s) still end in infrastructure errors after their retries: resume with mcpbench run --resume ${finished.directory}`;
  if (standing?.completeness === 'incomplete') return `${standing.planned! - standing.units} of ${standing.planned} planned work unit(s) were not recorded: resume with mcpbench run --resume ${finished.directory}`;
  return undefined;
}
