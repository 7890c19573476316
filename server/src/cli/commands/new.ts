/** `mcpbench new <id> --server NS`: a task skeleton that lints with a TODO for everything left to write. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { CATEGORIES, DIFFICULTIES, EXIT_OK, loadRegistry, taskSkeleton, type SkeletonOptions } from '../../engine/index.ts';
import type { CommandContext } from '../context.ts';
import { CommandError } from '../errors.ts';

export function register(program: Command, { io, setExitCode }: CommandContext): void {
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
      const text = taskSkeleton({ id, namespaces, category: options.category, difficulty: options.difficulty }, await loadRegistry());
      const file = resolve(io.cwd, options.out ?? join('tasks', namespaces[0]!, `${id}.json`));
      try {
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(file, text, { flag: 'wx' });
      } catch (error) {
        const exists = (error as NodeJS.ErrnoException).code === 'EEXIST';
        throw new CommandError(exists ? 'file-exists' : 'unwritable', `${file}: ${exists ? 'exists already; choose another id or --out' : (error as Error).message}`, { file, cause: error });
      }
      io.stdout(`${relative(io.cwd, file) || file}\n`);
      setExitCode(EXIT_OK);
    });
}
