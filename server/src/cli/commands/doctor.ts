/** `mcpbench doctor`: which sandbox backends work here, and every namespace's server started once. */
import type { Command } from 'commander';
import { doctor, EXIT_FINDINGS, EXIT_OK, loadRegistry } from '../../engine/index.ts';
import type { SandboxBackend } from '../../runner/sandbox.ts';
import type { CommandContext } from '../context.ts';
import { sandboxOption } from '../options.ts';

export function register(program: Command, { io, setExitCode }: CommandContext): void {
  program
    .command('doctor')
    .description('Check which sandbox backends work and start every namespace server once.')
    .addOption(sandboxOption('sandbox backend to check the servers with'))
    .action(async (options: { sandbox?: SandboxBackend }) => {
      const healthy = await doctor(await loadRegistry(), (line) => io.stdout(`${line}\n`), options.sandbox);
      setExitCode(healthy ? EXIT_OK : EXIT_FINDINGS);
    });
}
