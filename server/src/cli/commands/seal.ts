/** `mcpbench seal <set-dir> --out FILE` and `unseal <file> --out DIR`: a set encrypted into one file (MCPBENCH_SET_KEY). */
import type { Command } from 'commander';
import { EXIT_OK, keyFromEnvironment, seal, unseal } from '../../engine/index.ts';
import type { CommandContext } from '../context.ts';

export function register(program: Command, { io, at, setExitCode }: CommandContext): void {
  program
    .command('seal')
    .description('Encrypt a set folder into one file (AES-256-GCM, key from MCPBENCH_SET_KEY).')
    .argument('<set-dir>', 'the set folder')
    .requiredOption('--out <file>', 'the sealed file, e.g. sets/private.sealed.json')
    .action((setDir: string, options: { out: string }) => {
      seal(at(setDir), keyFromEnvironment(), { out: at(options.out) });
      io.stdout(`sealed ${setDir} -> ${options.out}\n`);
      setExitCode(EXIT_OK);
    });

  program
    .command('unseal')
    .description('Decrypt a sealed set into a new folder (key from MCPBENCH_SET_KEY).')
    .argument('<file>', 'the sealed file')
    .requiredOption('--out <folder>', 'a new or empty folder')
    .action((file: string, options: { out: string }) => {
      const files = unseal(at(file), keyFromEnvironment(), { out: at(options.out) });
      io.stdout(`unsealed ${files.length} file(s) into ${options.out}\n`);
      setExitCode(EXIT_OK);
    });
}
