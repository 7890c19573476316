/**
 * The `mcpbench` command: argv onto the engine. Exit codes: 0 clean, 1 findings, 2 usage or I/O error.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { doctor } from './doctor.ts';
import { AGENT_OPTION_FLAGS, checkCommand, reportCommand, runCommand, UsageError, type CheckFlags, type CliIo, type RunFlags } from './run-commands.ts';
import { AgentOptionsError, agentNames } from '../runner/agents/registry.ts';
import { SessionError } from '../runner/session.ts';
import { RunStoreError } from '../runner/store.ts';
import { SealError } from '../generator/seal.ts';
import { TaskLoadError } from '../runner/run.ts';
import { FaultProfileError } from '../runner/faults.ts';
import { SANDBOX_BACKENDS, SandboxUnavailableError, type SandboxBackend } from '../runner/sandbox.ts';
import { TOOL_CALL_FORMAT_OPTIONS } from '../runner/agents/tool-call-formats.ts';
import { serveNamespace, ServeError } from './serve.ts';
import { loadRegistry } from '../mcp/registry.ts';
import { collectLintableFiles, collectTaskFiles, PathError, readText } from '../tasks/files.ts';
import { composition, compositionMarkdown, compositionText, taskTraits } from '../tasks/composition.ts';
import { TaskSchema } from '../tasks/model.ts';
import { lintTemplate } from '../generator/lint-template.ts';
import { canonicalHash } from '../tasks/hash.ts';
import { CATEGORIES, DIFFICULTIES, SkeletonError, taskSkeleton, type SkeletonOptions } from '../tasks/skeleton.ts';
import { JsonDocument } from '../tasks/document.ts';
import { lintTaskSet } from '../tasks/lint.ts';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { formatJson, formatSarif, formatText, repositoryRoot, totals, type FileReport } from './report-formats.ts';
import { registerGenerateCommand } from './generate-command.ts';
import { monthOption, registerGeneratorCommands } from './generator-commands.ts';
import { registerResultsCommands } from './results-commands.ts';
import { registerWorkerCommand } from './worker-command.ts';
import { QueueError } from '../queue/redis.ts';
import packageJson from '../../../package.json';

export const EXIT_OK = 0;
export const EXIT_FINDINGS = 1;
export const EXIT_USAGE = 2;

class ExitError extends Error {
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
  }
}

/** A repeatable option: each use adds one value. */
function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function numberOption(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError('expected a number');
  return n;
}

function jsonObjectOption(value: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new InvalidArgumentError('expected a JSON object, e.g. \'{"top_k": 20}\'');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new InvalidArgumentError('expected a JSON object');
  return parsed as Record<string, unknown>;
}

function integerOption(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('expected a whole number >= 0');
  return n;
}

interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  cwd: string;
}

export function buildProgram(io: Io, setExitCode: (code: number) => void): Command {
  const program = new Command('mcpbench')
    .description('Lint, run, score, generate, rotate and verify MCP agent benchmarks.')
    .version(packageJson.version)
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .exitOverride();

  program
    .command('lint')
    .description('Lint task files, template grammars (*.template.json) and folders of them (default: ./tasks).')
    .argument('[paths...]', 'task or template files, or folders', ['tasks'])
    .addOption(new Option('-f, --format <format>', 'output format').choices(['text', 'json', 'sarif']).default('text'))
    .option('--max-warnings <n>', 'fail (exit 1) when there are more warnings than this', integerOption)
    .option('--sarif-root <dir>', 'with --format sarif: the folder artifact URIs are relative to (default: the repository root)')
    .action(async (paths: string[], options: { format: 'text' | 'json' | 'sarif'; maxWarnings?: number; sarifRoot?: string }) => {
      const files = collectLintableFiles(paths);
      if (files.tasks.length + files.templates.length === 0) throw new ExitError(`no task or template files found in ${paths.join(', ')}`, EXIT_USAGE);
      const registry = await loadRegistry();
      const results = lintTaskSet(files.tasks.map((path) => ({ uri: path, text: readText(path) })), registry);
      const reports: FileReport[] = [
        ...results.map((r) => ({ path: r.document.uri, diagnostics: r.diagnostics, text: r.document.text })),
        ...files.templates.map((path) => {
          const text = readText(path);
          return { path, diagnostics: lintTemplate(path, text, registry).diagnostics, text };
        }),
      ];
      const sarifRoot = resolve(io.cwd, options.sarifRoot ?? repositoryRoot(io.cwd));
      const output =
        options.format === 'json' ? formatJson(reports, io.cwd)
        : options.format === 'sarif' ? formatSarif(reports, { root: sarifRoot, version: packageJson.version })
        : formatText(reports, io.cwd);
      io.stdout(output);
      const t = totals(reports);
      const tooManyWarnings = options.maxWarnings !== undefined && t.warnings > options.maxWarnings;
      if (tooManyWarnings && options.format === 'text') {
        io.stderr(`too many warnings: ${t.warnings} (--max-warnings ${options.maxWarnings})\n`);
      }
      setExitCode(t.errors > 0 || tooManyWarnings ? EXIT_FINDINGS : EXIT_OK);
    });

  program
    .command('hash')
    .description('Print the SHA-256 of the RFC 8785 canonical JSON of each task.')
    .argument('<tasks...>', 'task files')
    .action((paths: string[]) => {
      for (const path of paths) {
        const document = new JsonDocument(path, readText(path));
        const problem = document.syntaxProblems[0];
        if (problem) {
          const at = document.positionAt(problem.offset);
          throw new ExitError(`${path}:${at.line + 1}:${at.character + 1} cannot hash: ${problem.message}`, EXIT_USAGE);
        }
        let hash: string;
        try {
          hash = canonicalHash(document.value());
        } catch (error) {
          throw new ExitError(`${path}: ${(error as Error).message}`, EXIT_USAGE);
        }
        io.stdout(`${hash}  ${path}\n`);
      }
      setExitCode(EXIT_OK);
    });

  program
    .command('stats')
    .description("Print a task set's composition: namespace x category x difficulty, cross-server, information and distractor tasks.")
    .argument('[paths...]', 'task files or folders', ['tasks'])
    .addOption(new Option('-f, --format <format>', 'output format (markdown is tasks/README.md)').choices(['text', 'markdown', 'json']).default('text'))
    .option('--title <title>', 'the Markdown heading', 'The public dev set')
    .action(async (paths: string[], options: { format: 'text' | 'markdown' | 'json'; title: string }) => {
      const registry = await loadRegistry();
      const traits = collectTaskFiles(paths).map((path) => {
        const parsed = TaskSchema.safeParse(JSON.parse(readText(path)));
        if (!parsed.success) throw new ExitError(`${path}: not a valid task (run mcpbench lint ${path})`, EXIT_FINDINGS);
        return taskTraits(parsed.data, registry);
      });
      const c = composition(traits);
      io.stdout(options.format === 'json' ? JSON.stringify(c, null, 2) + '\n' : options.format === 'markdown' ? compositionMarkdown(c, options.title) : compositionText(c));
      setExitCode(EXIT_OK);
    });

  program
    .command('serve')
    .description('Serve one namespace as an MCP server over stdio, its state in a sandbox folder.')
    .argument('<namespace>', 'the namespace, e.g. travel')
    .requiredOption('--dir <sandbox>', 'the sandbox folder holding the state (created if missing)')
    .option('--state <file>', "seed the sandbox from this initial state (the namespace's state schema) first")
    .action(async (namespace: string, options: { dir: string; state?: string }) => {
      try {
        setExitCode(await serveNamespace(namespace, options, packageJson.version));
      } catch (error) {
        if (error instanceof ServeError) throw new ExitError(error.message, EXIT_USAGE);
        throw error;
      }
    });

  program
    .command('state')
    .description("Build a namespace's initial state from a file in its backend's own format (postgres: a SQL script such as a dump), printed as the JSON `initial_state.<ns>` takes.")
    .argument('<namespace>', 'the namespace, e.g. postgres')
    .requiredOption('--from <file>', 'the file to build the state from')
    .action(async (namespace: string, options: { from: string }) => {
      const info = (await loadRegistry()).get(namespace);
      const build = info?.plugin?.runtime?.stateFrom;
      if (!info || !build) throw new ExitError(`${namespace} cannot build a state from a file${info ? '' : ' (unknown namespace)'}`, EXIT_USAGE);
      let text: string;
      try {
        text = readText(options.from);
      } catch (error) {
        throw new ExitError(`${options.from}: ${(error as Error).message}`, EXIT_USAGE);
      }
      const scratch = mkdtempSync(join(tmpdir(), `mcpbench-state-${namespace}-`));
      try {
        io.stdout(JSON.stringify(await build(text, scratch), null, 2) + '\n');
      } catch (error) {
        throw new ExitError(`${options.from}: ${(error as Error).message}`, EXIT_FINDINGS);
      } finally {
        rmSync(scratch, { recursive: true, force: true });
      }
    });

  const io2 = (): CliIo => ({ ...io, isTTY: Boolean(process.stderr.isTTY) });
  const backendOption = () => new Option('--sandbox <backend>', 'sandbox backend (default: bwrap where it works, else a plain process)').choices([...SANDBOX_BACKENDS]);
  const reporterOption = () => new Option('--reporter <kind>', 'progress on stderr, or one JSON event per line on stdout').choices(['progress', 'jsonl', 'none']).default('progress');

  program
    .command('run')
    .description('Run tasks with an agent through the gateway, under faults and goal perturbations, and score them (default: ./tasks).')
    .argument('[tasks...]', 'task files, folders or sealed sets (*.sealed.json, opened in memory with MCPBENCH_SET_KEY)')
    .addOption(new Option('--agent <agent>', "the agent (default: the --agent-config profile's, else reference)").choices(agentNames()))
    .option('--agent-command <command>', 'for --agent command: the program to run (gets MCPBENCH_GATEWAY_URL, MCPBENCH_GOAL ...)')
    .addOption(new Option('--agent-sandbox <backend>', 'for --agent command: the sandbox it runs in (default: the run\'s --sandbox), or none (a warning is recorded)').choices(['bwrap', 'docker', 'podman', 'none']))
    .option('--agent-env <name>', 'for --agent command: pass this variable of yours to the agent (repeatable; nothing else of your environment reaches it)', collect, [])
    .option('--agent-dir <dir>', 'for --agent command: its folder, read-only inside the sandbox (default: the current directory; the run\'s task files in it are hidden)')
    .option('--agent-allow-host <host:port>', 'for --agent command: a host its egress proxy may reach, e.g. api.openai.com:443 (repeatable; default: none)', collect, [])
    .addOption(new Option('--agent-gateway <transport>', 'for --agent command: reach the gateway over streamable HTTP or over its own stdin/stdout').choices(['http', 'stdio']).default('http'))
    .option('--endpoint <url>', 'for --agent endpoint: the URL tasks are POSTed to')
    .option('--agent-config <file>', 'model agents (openai, anthropic): a settings profile (schemas/agent-config.schema.json); the flags below override it')
    .option('--model <model>', 'model agents: the model (or MCPBENCH_OPENAI_MODEL / MCPBENCH_ANTHROPIC_MODEL)')
    .option('--base-url <url>', 'model agents: the base URL, /chat/completions or /messages appended (or MCPBENCH_OPENAI_BASE_URL / MCPBENCH_ANTHROPIC_BASE_URL)')
    .option('--temperature <t>', 'model agents: sampling temperature', numberOption)
    .option('--top-p <p>', 'model agents: nucleus sampling mass', numberOption)
    .option('--model-seed <n>', 'model agents: the sampling seed sent (default: the run seed; trial t sends seed + t)', integerOption)
    .option('--max-tokens <n>', 'model agents: longest response per request', integerOption)
    .option('--max-turns <n>', 'model agents: most model requests per episode (default 50)', integerOption)
    .option('--request-timeout <s>', 'model agents: seconds one model request may take (default 120)', numberOption)
    .option('--system-prompt <file>', 'model agents: a text file that replaces the default system prompt')
    .option('--extra-body <json>', 'model agents: extra request fields, a JSON object (e.g. \'{"top_k": 20}\')', jsonObjectOption)
    .addOption(new Option('--tool-call-format <format>', 'model agents: where tool calls are read from (auto: native calls, else text in any known format)').choices([...TOOL_CALL_FORMAT_OPTIONS]))
    .option('--prices <file>', 'model agents: a price file (schemas/prices.schema.json), for cost and --max-cost')
    .option('--max-tokens-per-episode <n>', 'model agents: stop an episode once it has used this many tokens (it fails: token-budget)', integerOption)
    .option('--max-cost <amount>', "start no new episode once the run's cost reaches this (needs --prices); exit 3, resume with a higher one", numberOption)
    .option('--faults <profile>', 'none | light | medium | heavy | <type>-only | a profile file', 'none')
    .option('--fault-rate <rate>', 'override the failure rate of the profile', Number)
    .option('--trials <k>', 'trials per task (pass^k)', integerOption, 1)
    .option('--seed <n>', 'run seed: the same seed gives the same faults', integerOption, 1)
    .option('--concurrency <n>', 'episodes at a time', integerOption, 1)
    .option('--retry', 'reference agent: back off and retry recoverable faults')
    .option('--perturb <levels>', 'goal perturbation level none | light | medium | heavy, or a comma-separated list (none,light,medium): each level is run and scored', 'none')
    .option('--paraphrase', 'also paraphrase heavy-level goals through an OpenAI-compatible endpoint (off by default)')
    .option('--paraphrase-base-url <url>', 'for --paraphrase: the base URL (or MCPBENCH_PARAPHRASE_BASE_URL; default: the openai agent\'s)')
    .option('--paraphrase-model <model>', 'for --paraphrase: the model (or MCPBENCH_PARAPHRASE_MODEL; default: the openai agent\'s)')
    .addOption(backendOption())
    .addOption(reporterOption())
    .option('--out <folder>', 'where run folders go', 'runs')
    .option('--resume <run-folder>', 'finish an interrupted run')
    .option('--no-report', 'skip writing report.json, junit.xml and report.html')
    .option('--set <name>', 'the task set this run measures, recorded in run.json for the results database (default: the set.json of a set folder)')
    .option('--month <YYYY-MM>', "the set's month, recorded with --set (default: the set.json's month)", monthOption)
    .option('--queue <url>', 'run the episodes on queue workers (mcpbench worker) through this Redis: redis://HOST:PORT; this process coordinates and writes the run folder')
    .option('--max-in-flight <n>', "with --queue: at most this many episodes of the agent's endpoint in flight across all workers", integerOption)
    .action(async (paths: string[], options: RunFlags) => {
      const registry = await loadRegistry();
      setExitCode(await runCommand(paths, options, registry, io2(), packageJson.version));
    });

  program
    .command('check')
    .description('Self-test tasks: noop fails, references pass, counterexamples fail, recoverable under faults; prints coverage.')
    .argument('[tasks...]', 'task files, folders or sealed sets (*.sealed.json, opened in memory with MCPBENCH_SET_KEY)')
    .option('--seed <n>', 'seed of the fault probes', integerOption, 1)
    .option('--concurrency <n>', 'episodes at a time', integerOption, 2)
    .addOption(backendOption())
    .addOption(reporterOption())
    .addOption(new Option('-f, --format <format>', 'output format').choices(['text', 'json']).default('text'))
    .option('--out <folder>', 'where the check run folder goes', 'runs')
    .option('--mutants', 'mutation testing: replay mutants of every reference solution (dropped, swapped, cut steps, replaced arguments); a mutant that still passes fails the task unless listed in equivalent_mutants')
    .option('--max-warnings <n>', 'exit 1 when check finds more warnings than this', integerOption)
    .action(async (paths: string[], options: CheckFlags) => {
      const registry = await loadRegistry();
      setExitCode(await checkCommand(paths, options, registry, io2(), packageJson.version));
    });

  program
    .command('report')
    .description('Write report.json, junit.xml and a self-contained report.html for a run folder.')
    .argument('<run-folder>', 'runs/<run-id>')
    .action(async (directory: string) => setExitCode(reportCommand(directory, await loadRegistry(), io2())));

  program
    .command('doctor')
    .description('Check which sandbox backends work and start every namespace server once.')
    .addOption(new Option('--sandbox <backend>', 'sandbox backend to check the servers with').choices([...SANDBOX_BACKENDS]))
    .action(async (options: { sandbox?: SandboxBackend }) => {
      const registry = await loadRegistry();
      const healthy = await doctor(registry, (line) => io.stdout(`${line}\n`), options.sandbox);
      setExitCode(healthy ? EXIT_OK : EXIT_FINDINGS);
    });

  program
    .command('new')
    .description('Write a new task skeleton that lints with a TODO for everything left to write (default file: tasks/<namespace>/<id>.json).')
    .argument('<id>', 'the task id, e.g. fs-archive-invoices-001')
    .requiredOption('--server <namespaces>', 'the namespace, or several separated by commas (the first is the main one)')
    .addOption(new Option('--category <category>', 'what the task tests').choices([...CATEGORIES]).default('single-tool'))
    .addOption(new Option('--difficulty <difficulty>', 'how hard it is').choices([...DIFFICULTIES]).default('easy'))
    .option('--out <file>', 'where to write it')
    .action(async (id: string, options: { server: string; category: SkeletonOptions['category']; difficulty: SkeletonOptions['difficulty']; out?: string }) => {
      const namespaces = options.server.split(',').map((n) => n.trim()).filter(Boolean);
      const registry = await loadRegistry();
      let text: string;
      try {
        text = taskSkeleton({ id, namespaces, category: options.category, difficulty: options.difficulty }, registry);
      } catch (error) {
        if (error instanceof SkeletonError) throw new ExitError(error.message, EXIT_USAGE);
        throw error;
      }
      const file = resolve(io.cwd, options.out ?? join('tasks', namespaces[0]!, `${id}.json`));
      try {
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(file, text, { flag: 'wx' });
      } catch (error) {
        const exists = (error as NodeJS.ErrnoException).code === 'EEXIST';
        throw new ExitError(`${file}: ${exists ? 'exists already; choose another id or --out' : (error as Error).message}`, EXIT_USAGE);
      }
      io.stdout(`${relative(io.cwd, file) || file}\n`);
      setExitCode(EXIT_OK);
    });

  registerGenerateCommand(program, io, setExitCode);
  registerWorkerCommand(program, io, packageJson.version, setExitCode);
  registerGeneratorCommands(program, io, setExitCode);
  registerResultsCommands(program, io, setExitCode);

  return program;
}


/** Runs the CLI; resolves to the exit code instead of exiting, so tests can call it in-process. */
export async function runCli(argv: string[], io: Io): Promise<number> {
  let exitCode = EXIT_OK;
  const program = buildProgram(io, (code) => (exitCode = code));
  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version are successes; everything else commander rejects is a usage error.
      return error.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
    }
    if (error instanceof ExitError) {
      io.stderr(`mcpbench: ${error.message}\n`);
      return error.code;
    }
    if (error instanceof TaskLoadError) {
      io.stderr(`mcpbench: ${error.message}; nothing was run:\n`);
      for (const d of error.diagnostics) io.stderr(`${d.uri}:${d.start.line + 1}:${d.start.character + 1} ${d.severity} ${d.code} ${d.message}\n`);
      return EXIT_FINDINGS;
    }
    if (error instanceof AgentOptionsError) {
      const flag = error.option ? AGENT_OPTION_FLAGS[error.option] : undefined;
      io.stderr(`mcpbench: ${error.message}${flag ? ` (set it with ${flag})` : ''}\n`);
      return EXIT_USAGE;
    }
    if (error instanceof UsageError || error instanceof FaultProfileError || error instanceof PathError || error instanceof SessionError || error instanceof RunStoreError || error instanceof SealError || error instanceof SandboxUnavailableError || error instanceof QueueError) {
      io.stderr(`mcpbench: ${error.message}\n`);
      return EXIT_USAGE;
    }
    io.stderr(`mcpbench: internal error: ${(error as Error).stack ?? error}\n`);
    return EXIT_USAGE;
  }
}
