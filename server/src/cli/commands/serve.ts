/** `mcpbench serve <namespace> --dir SANDBOX [--state FILE]`: one namespace as an MCP server over stdio (../serve.ts). */
import type { Command } from 'commander';
import type { CommandContext } from '../context.ts';
import { serveNamespace } from '../serve.ts';

export function register(program: Command, { version, setExitCode }: CommandContext): void {
  program
    .command('serve')
    .description('Serve one namespace as an MCP server over stdio, its state in a sandbox folder.')
    .argument('<namespace>', 'the namespace, e.g. travel')
    .requiredOption('--dir <sandbox>', 'the sandbox folder holding the state (created if missing)')
    .option('--state <file>', "seed the sandbox from this initial state (the namespace's state schema) first")
    .action(async (namespace: string, options: { dir: string; state?: string }) => setExitCode(await serveNamespace(namespace, options, version)));
}
