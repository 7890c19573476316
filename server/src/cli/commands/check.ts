/** `mcpbench check [tasks...]`: self-test tasks (noop fails, references pass, counterexamples fail, recoverable). */
import type { Command } from 'commander';
import { EXIT_FINDINGS, EXIT_INTERRUPTED, EXIT_OK, loadRegistry, type Registry } from '../../engine/index.ts';
import { chooseBackend, PROCESS_BACKEND_WARNING, type SandboxBackend } from '../../runner/sandbox.ts';
import type { CliIo, CommandContext } from '../context.ts';
import { formatCheck } from '../format.ts';
import { formatOption, integerOption, reporterOption, sandboxOption } from '../options.ts';
import { runWithReporter, type ReporterKind } from '../progress.ts';

export function register(program: Command, { io, version, setExitCode }: CommandContext): void {
  program
    .command('check')
    .description('Self-test tasks: noop fails, references pass, counterexamples fail, recoverable under faults; prints coverage.')
    .argument('[tasks...]', 'task files, folders or sealed sets (*.sealed.json, opened in memory with MCPBENCH_SET_KEY)')
    .option('--seed <n>', 'seed of the fault probes', integerOption, 1)
    .option('--concurrency <n>', 'episodes at a time', integerOption, 2)
    .addOption(sandboxOption())
    .addOption(reporterOption())
    .addOption(formatOption())
    .option('--out <folder>', 'where the check run folder goes', 'runs')
    .option('--mutants', 'mutation testing: replay mutants of every reference solution (dropped, swapped, cut steps, replaced arguments); a mutant that still passes fails the task unless listed in equivalent_mutants')
    .option('--shortcuts', 'shortcut agents: shotgun and partial answers, the goal read back, an extra write on another record, the wrong target, a fragment of the text; one that passes fails the task unless listed in accepted_shortcuts')
    .option('--max-warnings <n>', 'exit 1 when check finds more warnings than this', integerOption)
    .action(async (paths: string[], options: CheckFlags) => {
      setExitCode(await checkCommand(paths, options, await loadRegistry(), io, version));
    });
}

export interface CheckFlags {
  seed: number;
  /** Mutation testing of the predicates. */
  mutants?: boolean;
  shortcuts?: boolean;
  /** Fail (exit 1) when check finds more warnings than this. */
  maxWarnings?: number;
  concurrency: number;
  sandbox?: SandboxBackend;
  reporter: ReporterKind;
  out: string;
  format: 'text' | 'json';
}

export async function checkCommand(paths: string[], flags: CheckFlags, registry: Registry, io: CliIo, version: string): Promise<number> {
  const backend = chooseBackend(flags.sandbox);
  if (backend === 'process') io.stderr(`warning: ${PROCESS_BACKEND_WARNING}\n`);
  const finished = await runWithReporter(
    { mode: 'check', registry, cwd: io.cwd, backend, concurrency: flags.concurrency, version, env: process.env, tasks: paths.length ? paths : ['tasks'], out: flags.out, seed: flags.seed, ...(flags.mutants ? { mutants: true } : {}), ...(flags.shortcuts ? { shortcuts: true } : {}) },
    io,
    flags.reporter,
  );
  if (finished.kind !== 'check') throw new Error('a check session finished as a run');
  const { checks } = finished;
  if (flags.reporter !== 'jsonl') io.stdout(flags.format === 'json' ? JSON.stringify({ run: finished.directory, checks }, null, 2) + '\n' : formatCheck(checks, io.cwd));
  if (finished.interrupted) return EXIT_INTERRUPTED;
  const warnings = checks.reduce((n, c) => n + c.findings.filter((f) => f.severity === 'warning').length, 0);
  const tooManyWarnings = flags.maxWarnings !== undefined && warnings > flags.maxWarnings;
  if (tooManyWarnings && flags.reporter !== 'jsonl') io.stderr(`${warnings} warning${warnings === 1 ? '' : 's'}, more than --max-warnings ${flags.maxWarnings}\n`);
  return checks.every((c) => c.ok) && !tooManyWarnings ? EXIT_OK : EXIT_FINDINGS;
}
