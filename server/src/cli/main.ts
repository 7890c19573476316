/**
 * The `mcpbench` command: argv onto the engine, one file per command (commands/). Exit statuses come from
 * the errors (cli/errors.ts): 0 clean, 1 findings, 2 usage or I/O error, 3 cost budget, 130 interrupted.
 */
import { Command } from 'commander';
import packageJson from '../../../package.json';
import { EXIT_OK } from '../errors.ts';
import { COMMANDS } from './commands/index.ts';
import { commandContext, type Io } from './context.ts';
import { reportError } from './errors.ts';

export { EXIT_FINDINGS, EXIT_OK, EXIT_USAGE } from '../errors.ts';

export function buildProgram(io: Io, setExitCode: (code: number) => void): Command {
  const program = new Command('mcpbench')
    .description('Lint, run, score, generate, rotate and verify MCP agent benchmarks.')
    .version(packageJson.version)
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .exitOverride();
  const context = commandContext(io, packageJson.version, setExitCode);
  for (const command of COMMANDS) command.register(program, context);
  return program;
}

/** Runs the CLI; resolves to the exit code instead of exiting, so tests can call it in-process. */
export async function runCli(argv: string[], io: Io): Promise<number> {
  let exitCode = EXIT_OK;
  let format: string | undefined;
  const program = buildProgram(io, (code) => (exitCode = code));
  // The --format of the command that runs (errors are printed as JSON too with --format json).
  program.hook('preAction', (_program, command) => {
    const chosen: unknown = command.opts().format;
    format = typeof chosen === 'string' ? chosen : undefined;
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (error) {
    return reportError(error, io, format);
  }
}
