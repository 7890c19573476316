/** `mcpbench rejudge RUN`: a run's stored end states and answers judged again under the tasks' current predicates. */
import type { Command } from 'commander';
import { EXIT_FINDINGS, EXIT_OK } from '../../errors.ts';
import { loadRegistry } from '../../mcp/registry.ts';
import { rejudgeRun, rejudgeText } from '../../traces/rejudge.ts';
import type { CommandContext } from '../context.ts';
import { collect } from '../options.ts';

export function register(program: Command, { io, at, version, setExitCode }: CommandContext): void {
  program
    .command('rejudge')
    .description("Judge a run's stored end states and answers again under the tasks' current predicates (no agent runs): writes a new run folder that names its source and the task hashes used, and lists the verdicts that flipped (exit 1 when one did).")
    .argument('<run-folder>', 'runs/<run-id>')
    .option('--tasks <path>', "task files or folders to judge against instead of the run's own task files, by task id (repeatable)", collect, [])
    .option('--out <folder>', 'where the new run folder goes (default: beside the source)')
    .action(async (directory: string, options: { tasks: string[]; out?: string }) => {
      const result = rejudgeRun(at(directory), {
        registry: await loadRegistry(),
        tasks: options.tasks.map(at),
        ...(options.out ? { out: at(options.out) } : {}),
        version,
      });
      io.stdout(rejudgeText(result));
      setExitCode(result.counts.flipped > 0 ? EXIT_FINDINGS : EXIT_OK);
    });
}
