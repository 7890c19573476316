/** `mcpbench report <run-folder>`: write report.json, junit.xml and report.html, and print the scores. */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { EXIT_OK, loadRegistry, reportFolder } from '../../engine/index.ts';
import type { CommandContext } from '../context.ts';
import { formatScores } from '../format.ts';

export function register(program: Command, { io, setExitCode }: CommandContext): void {
  program
    .command('report')
    .description('Write report.json, junit.xml and a self-contained report.html for a run folder.')
    .argument('<run-folder>', 'runs/<run-id>')
    .action(async (directory: string) => {
      const { files, warnings, report } = reportFolder(resolve(io.cwd, directory), await loadRegistry());
      for (const warning of warnings) io.stderr(`warning: ${warning}\n`);
      io.stdout(formatScores(report.scores));
      io.stdout(`report.json: ${files.json}\njunit.xml:   ${files.junit}\nreport.html: ${files.html}\n`);
      setExitCode(EXIT_OK);
    });
}
