/** `mcpbench state <namespace> --from FILE`: a namespace's initial state built from a file in its backend's format. */
import type { Command } from 'commander';
import { loadRegistry, stateFromFile } from '../../engine/index.ts';
import type { CommandContext } from '../context.ts';

export function register(program: Command, { io }: CommandContext): void {
  program
    .command('state')
    .description("Build a namespace's initial state from a file in its backend's own format (postgres: a SQL script such as a dump), printed as the JSON `initial_state.<ns>` takes.")
    .argument('<namespace>', 'the namespace, e.g. postgres')
    .requiredOption('--from <file>', 'the file to build the state from')
    .action(async (namespace: string, options: { from: string }) => {
      io.stdout(JSON.stringify(await stateFromFile(namespace, options.from, await loadRegistry()), null, 2) + '\n');
    });
}
