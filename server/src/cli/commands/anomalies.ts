/** `mcpbench anomalies`: rotation anomalies over the results database; exit 1 when any is flagged. */
import type { Command } from 'commander';
import { detectAnomalies, EXIT_FINDINGS, EXIT_OK, loadHistory, withResultsDb } from '../../engine/index.ts';
import { anomaliesText } from '../../results/anomalies.ts';
import type { CommandContext } from '../context.ts';
import { correctionOption, dbOption, formatOption, positiveInteger, probability, seedOption } from '../options.ts';

export function register(program: Command, { io, setExitCode }: CommandContext): void {
  program
    .command('anomalies')
    .description('Rotation anomalies over the results database: score jumps between months, success on public (historical) tasks against fresh ones, task outliers, verdict flips; exit 1 when any is flagged.')
    .addOption(dbOption())
    .option('--set <name>', 'only this set')
    .option('--alpha <a>', 'family-wise (holm) or false-discovery (bh) level', probability, 0.05)
    .addOption(correctionOption())
    .option('--resamples <n>', 'bootstrap resamples and permutations per test', positiveInteger, 5000)
    .option('--seed <n>', 'seed of the resampling', seedOption, 1)
    .option('--all', 'also list the tests that were not flagged')
    .addOption(formatOption())
    .action(async (options: { db?: string; set?: string; alpha: number; correction?: 'holm' | 'bh'; resamples: number; seed: number; all?: boolean; format: 'text' | 'json' }) => {
      let flagged = 0;
      await withResultsDb(options.db, io.cwd, async ({ db }) => {
        const cells = await loadHistory(db, options.set ? { set: options.set } : {});
        const report = detectAnomalies(cells, { alpha: options.alpha, resamples: options.resamples, seed: options.seed, ...(options.set ? { set: options.set } : {}), ...(options.correction ? { correction: options.correction } : {}) });
        flagged = report.flags.length;
        if (options.format === 'json') io.stdout(JSON.stringify(options.all ? report : { ...report, tests: undefined }, null, 2) + '\n');
        else {
          io.stdout(anomaliesText(report));
          if (options.all) for (const t of report.tests.filter((x) => !x.flagged)) io.stdout(`     ${t.kind}: ${t.detail} (p ${t.p.toPrecision(2)}, adjusted ${t.p_adjusted.toPrecision(2)})\n`);
        }
      });
      setExitCode(flagged > 0 ? EXIT_FINDINGS : EXIT_OK);
    });
}
