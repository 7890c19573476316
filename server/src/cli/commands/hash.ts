/** `mcpbench hash <tasks...>`: the SHA-256 of each task's RFC 8785 canonical JSON. */
import type { Command } from 'commander';
import { canonicalHash, EXIT_OK } from '../../engine/index.ts';
import { JsonDocument } from '../../tasks/document.ts';
import { readText } from '../../tasks/files.ts';
import type { CommandContext } from '../context.ts';
import { CommandError } from '../errors.ts';

export function register(program: Command, { io, setExitCode }: CommandContext): void {
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
          const range = { start: at, end: document.positionAt(problem.offset + problem.length) };
          throw new CommandError('invalid-json', `${path}:${at.line + 1}:${at.character + 1} cannot hash: ${problem.message}`, { file: path, range });
        }
        let hash: string;
        try {
          hash = canonicalHash(document.value());
        } catch (error) {
          throw new CommandError('cannot-hash', `${path}: ${(error as Error).message}`, { file: path, cause: error });
        }
        io.stdout(`${hash}  ${path}\n`);
      }
      setExitCode(EXIT_OK);
    });
}
