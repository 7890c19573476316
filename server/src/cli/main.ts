/**
 * The `mcpbench` command: argv onto the engine. Exit codes: 0 clean, 1 findings, 2 usage or I/O error.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { doctor } from './doctor.ts';
import { checkCommand, reportCommand, runCommand, UsageError, type CheckFlags, type CliIo, type RunFlags } from './run-commands.ts';
import { TaskLoadError } from '../runner/run.ts';
import { FaultProfileError } from '../runner/faults.ts';
import { SANDBOX_BACKENDS, type SandboxBackend } from '../runner/sandbox.ts';
import { serveNamespace, ServeError } from './serve.ts';
import { loadRegistry } from '../mcp/registry.ts';
import { collectLintableFiles, collectTaskFiles, PathError, readText } from '../tasks/files.ts';
import { composition, compositionMarkdown, compositionText, taskTraits } from '../tasks/composition.ts';
import { TaskSchema } from '../tasks/model.ts';
import { lintTemplate } from '../generator/lint-template.ts';
import { canonicalHash } from '../tasks/hash.ts';
import { JsonDocument } from '../tasks/document.ts';
import { lintTaskSet } from '../tasks/lint.ts';
import { formatJson, formatSarif, formatText, totals, type FileReport } from './report-formats.ts';
import { registerGenerateCommand } from './generate-command.ts';
import { registerGeneratorCommands } from './generator-commands.ts';
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
    .action(async (paths: string[], options: { format: 'text' | 'json' | 'sarif'; maxWarnings?: number }) => {
      const files = collectLintableFiles(paths);
      if (files.tasks.length + files.templates.length === 0) throw new ExitError(`no task or template files found in ${paths.join(', ')}`, EXIT_USAGE);
      const registry = await loadRegistry();
      const results = lintTaskSet(files.tasks.map((path) => ({ uri: path, text: readText(path) })), registry);
      const reports: FileReport[] = [
        ...results.map((r) => ({ path: r.document.uri, diagnostics: r.diagnostics })),
        ...files.templates.map((path) => ({ path, diagnostics: lintTemplate(path, readText(path), registry).diagnostics })),
      ];
      const output =
        options.format === 'json' ? formatJson(reports, io.cwd)
        : options.format === 'sarif' ? formatSarif(reports, io.cwd, packageJson.version)
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
    .action((paths: string[], options: { format: 'text' | 'markdown' | 'json'; title: string }) => {
      const traits = collectTaskFiles(paths).map((path) => {
        const parsed = TaskSchema.safeParse(JSON.parse(readText(path)));
        if (!parsed.success) throw new ExitError(`${path}: not a valid task (run mcpbench lint ${path})`, EXIT_FINDINGS);
        return taskTraits(parsed.data);
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
    .addOption(new Option('--agent <agent>', 'the agent').choices(['reference', 'noop', 'command', 'endpoint', 'openai']).default('reference'))
    .option('--agent-command <command>', 'for --agent command: the program to run (gets MCPBENCH_GATEWAY_URL, MCPBENCH_GOAL ...)')
    .option('--endpoint <url>', 'for --agent endpoint: the URL tasks are POSTed to')
    .option('--model <model>', 'for --agent openai: the model (or MCPBENCH_OPENAI_MODEL)')
    .option('--base-url <url>', 'for --agent openai: an OpenAI-compatible base URL (or MCPBENCH_OPENAI_BASE_URL)')
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
    .action((directory: string) => setExitCode(reportCommand(directory, io2())));

  program
    .command('doctor')
    .description('Check which sandbox backends work and start every namespace server once.')
    .addOption(new Option('--sandbox <backend>', 'sandbox backend to check the servers with').choices([...SANDBOX_BACKENDS]))
    .action(async (options: { sandbox?: SandboxBackend }) => {
      const registry = await loadRegistry();
      const healthy = await doctor(registry, (line) => io.stdout(`${line}\n`), options.sandbox);
      setExitCode(healthy ? EXIT_OK : EXIT_FINDINGS);
    });

  registerGenerateCommand(program, io, setExitCode);
  registerGeneratorCommands(program, io, setExitCode);

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
    if (error instanceof UsageError || error instanceof FaultProfileError || error instanceof PathError) {
      io.stderr(`mcpbench: ${error.message}\n`);
      return EXIT_USAGE;
    }
    io.stderr(`mcpbench: internal error: ${(error as Error).stack ?? error}\n`);
    return EXIT_USAGE;
  }
}
