/** `mcpbench export RUN --format atif|otlp`: a run's episodes as ATIF trajectories or OpenTelemetry traces. */
import { relative } from 'node:path';
import { Command, Option } from 'commander';
import { EXIT_OK } from '../../errors.ts';
import { EXPORT_FORMATS, exportRun, type ExportFormat } from '../../traces/export.ts';
import type { CommandContext } from '../context.ts';
import { collect } from '../options.ts';

export function register(program: Command, { io, at, setExitCode }: CommandContext): void {
  program
    .command('export')
    .description("Export a run's episodes as ATIF trajectories (a folder, one file per episode) or OpenTelemetry traces (one OTLP/JSON file, one trace per episode).")
    .argument('<run-folder>', 'runs/<run-id>')
    .addOption(new Option('--format <format>', 'atif or otlp').choices([...EXPORT_FORMATS]).makeOptionMandatory())
    .option('--out <path>', 'where to write (atif: a folder, default runs/<id>/atif; otlp: a file, default runs/<id>/otlp.json)')
    .option('--episode <work-unit>', 'only this episode (its work unit, or a unique prefix; repeatable)', collect, [])
    .option('--include-private', "a sealed run's goals, arguments, results and answers too (left out by default)")
    .action((directory: string, options: { format: ExportFormat; out?: string; episode: string[]; includePrivate?: boolean }) => {
      const result = exportRun(at(directory), {
        format: options.format,
        ...(options.out ? { out: at(options.out) } : {}),
        episodes: options.episode,
        ...(options.includePrivate ? { includePrivate: true } : {}),
      });
      if (result.redacted) io.stderr('a sealed run: private task content was left out (--include-private to include it)\n');
      io.stdout(`${result.episodes} episode${result.episodes === 1 ? '' : 's'} exported as ${options.format}: ${relative(io.cwd, result.path) || result.path}\n`);
      setExitCode(EXIT_OK);
    });
}
