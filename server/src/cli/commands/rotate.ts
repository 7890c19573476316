/** `mcpbench rotate --set DIR --month YYYY-MM ...`: retire a share of a set, draw replacements, write attestations. */
import type { Command } from 'commander';
import { EXIT_OK, loadRegistry, rotate } from '../../engine/index.ts';
import type { CommandContext } from '../context.ts';
import { monthOption, seedOption, shareOption } from '../options.ts';

export function register(program: Command, { io, at, setExitCode }: CommandContext): void {
  program
    .command('rotate')
    .description("Retire a share of a set (oldest first, balanced), draw reviewed replacements, write Historical-YYYY-MM attestations.")
    .requiredOption('--set <folder>', 'the set folder (with set.json)')
    .requiredOption('--month <YYYY-MM>', 'the rotation month', monthOption)
    .option('--share <fraction>', 'share of the set to retire', shareOption, 0.25)
    .requiredOption('--seed <n>', 'seed for ties and draws: the same seed gives the same rotation', seedOption)
    .requiredOption('--from <folders...>', 'review batches and pool folders of reviewed tasks to draw replacements from')
    .option('--history <folder>', 'where the Historical manifest and retired tasks go (default: <set parent>/historical/<name>)')
    .option('--allow-shrink', 'rotate even with fewer replacements than retirements')
    .action(async (options: { set: string; month: string; share: number; seed: number; from: string[]; history?: string; allowShrink?: boolean }) => {
      const registry = await loadRegistry();
      const result = rotate({
        set: at(options.set),
        month: options.month,
        share: options.share,
        seed: options.seed,
        replacements: options.from.map(at),
        registry,
        ...(options.history ? { historyDir: at(options.history) } : {}),
        ...(options.allowShrink ? { allowShrink: true } : {}),
      });
      const h = result.historical;
      io.stdout(`${h.tag}: retired ${h.retired.length}, added ${h.replacements.length}; the set has ${result.manifest.tasks.length} task(s)\n`);
      io.stdout(`attestations: ${result.historicalFile}\nretired tasks: ${result.retiredDir}\n`);
      setExitCode(EXIT_OK);
    });
}
