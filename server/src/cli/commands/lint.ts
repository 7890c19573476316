/** `mcpbench lint [paths...]`: lint task files and template grammars; text, JSON or SARIF. Exit 1 on errors or too many warnings. */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { EXIT_FINDINGS, EXIT_OK, lintPaths, loadRegistry } from '../../engine/index.ts';
import type { CommandContext } from '../context.ts';
import { formatOption, integerOption } from '../options.ts';
import { formatJson, formatSarif, formatText, repositoryRoot, totals } from '../report-formats.ts';

export function register(program: Command, { io, version, setExitCode }: CommandContext): void {
  program
    .command('lint')
    .description('Lint task files, template grammars (*.template.json) and folders of them (default: ./tasks).')
    .argument('[paths...]', 'task or template files, or folders', ['tasks'])
    .addOption(formatOption(['text', 'json', 'sarif']))
    .option('--max-warnings <n>', 'fail (exit 1) when there are more warnings than this', integerOption)
    .option('--sarif-root <dir>', 'with --format sarif: the folder artifact URIs are relative to (default: the repository root)')
    .action(async (paths: string[], options: { format: 'text' | 'json' | 'sarif'; maxWarnings?: number; sarifRoot?: string }) => {
      const reports = lintPaths(paths, await loadRegistry());
      const sarifRoot = resolve(io.cwd, options.sarifRoot ?? repositoryRoot(io.cwd));
      const output =
        options.format === 'json' ? formatJson(reports, io.cwd)
        : options.format === 'sarif' ? formatSarif(reports, { root: sarifRoot, version })
        : formatText(reports, io.cwd);
      io.stdout(output);
      const t = totals(reports);
      const tooManyWarnings = options.maxWarnings !== undefined && t.warnings > options.maxWarnings;
      if (tooManyWarnings && options.format === 'text') {
        io.stderr(`too many warnings: ${t.warnings} (--max-warnings ${options.maxWarnings})\n`);
      }
      setExitCode(t.errors > 0 || tooManyWarnings ? EXIT_FINDINGS : EXIT_OK);
    });
}
