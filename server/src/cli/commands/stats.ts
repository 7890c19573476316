/** `mcpbench stats [paths...]`: a task set's composition as text, Markdown (tasks/README.md) or JSON. */
import type { Command } from 'commander';
import { EXIT_OK, loadRegistry, setComposition } from '../../engine/index.ts';
import { compositionMarkdown, compositionText } from '../../tasks/composition.ts';
import type { CommandContext } from '../context.ts';
import { formatOption } from '../options.ts';

export function register(program: Command, { io, setExitCode }: CommandContext): void {
  program
    .command('stats')
    .description("Print a task set's composition: namespace x category x difficulty, cross-server, information and distractor tasks.")
    .argument('[paths...]', 'task files or folders', ['tasks'])
    .addOption(formatOption(['text', 'markdown', 'json'], 'output format (markdown is tasks/README.md)'))
    .option('--title <title>', 'the Markdown heading', 'The public dev set')
    .action(async (paths: string[], options: { format: 'text' | 'markdown' | 'json'; title: string }) => {
      const c = setComposition(paths, await loadRegistry());
      io.stdout(options.format === 'json' ? JSON.stringify(c, null, 2) + '\n' : options.format === 'markdown' ? compositionMarkdown(c, options.title) : compositionText(c));
      setExitCode(EXIT_OK);
    });
}
