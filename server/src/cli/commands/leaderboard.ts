/** `mcpbench leaderboard --out DIR`: a static, self-contained leaderboard from the results database. */
import type { Command } from 'commander';
import { EXIT_OK, withResultsDb, writeLeaderboard } from '../../engine/index.ts';
import type { CommandContext } from '../context.ts';
import { dbOption } from '../options.ts';

export function register(program: Command, { io, at, setExitCode }: CommandContext): void {
  program
    .command('leaderboard')
    .description('Write a static, self-contained leaderboard (index.html and leaderboard.json): per set and month, success with intervals, pass^k, cost where known, links to each run\'s report.')
    .requiredOption('--out <folder>', 'where index.html and leaderboard.json go')
    .addOption(dbOption())
    .option('--set <name>', 'only this set')
    .option('--title <title>', 'the page title', 'MCPBench leaderboard')
    .option('--include-incomplete', 'also rank runs that are incomplete or have unresolved work units (marked so)')
    .action(async (options: { out: string; db?: string; set?: string; title: string; includeIncomplete?: boolean }) => {
      await withResultsDb(options.db, io.cwd, async ({ db }) => {
        const written = await writeLeaderboard(db, at(options.out), { title: options.title, ...(options.set ? { set: options.set } : {}), ...(options.includeIncomplete ? { includeIncomplete: true } : {}) });
        io.stdout(`leaderboard: ${written.html} (${written.board.sections.length} set-months)\n`);
      });
      setExitCode(EXIT_OK);
    });
}
