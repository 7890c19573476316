/** `mcpbench compare <sides...>`: compare runs or agents in the results database. */
import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { compare, EXIT_OK, isRunFolder, importPaths, loadRegistry, openSourceRun, withResultsDb } from '../../engine/index.ts';
import { comparisonJson, comparisonText } from '../../results/compare.ts';
import { renderComparisonHtml } from '../../results/compare-html.ts';
import { loadPlotAssets } from '../../scoring/report-html.ts';
import type { CommandContext } from '../context.ts';
import { outcomeLine } from '../format.ts';
import { correctionOption, dbOption, formatOption, monthOption, positiveInteger, seedOption } from '../options.ts';

export function register(program: Command, { io, at, setExitCode }: CommandContext): void {
  program
    .command('compare')
    .description('Compare runs or agents: model x task matrix (pass^k), per-namespace and per-category deltas, paired bootstrap and McNemar tests with effect sizes; text, JSON, and an HTML page with plots.')
    .argument('<sides...>', 'run ids, agent labels, or run folders (imported first)')
    .addOption(dbOption())
    .option('--k <k>', 'pass^k of the matrix cells', positiveInteger, 1)
    .option('--set <name>', 'narrow agent labels to this set')
    .option('--month <YYYY-MM>', 'narrow agent labels to this month', monthOption)
    .option('--resamples <n>', 'bootstrap resamples', positiveInteger, 2000)
    .option('--seed <n>', 'bootstrap seed', seedOption, 1)
    .addOption(correctionOption())
    .option('--html <file>', 'also write the comparison as a self-contained HTML page')
    .addOption(formatOption())
    .action(async (sides: string[], options: { db?: string; k: number; set?: string; month?: string; resamples: number; seed: number; correction?: 'holm' | 'bh'; html?: string; format: 'text' | 'json' }) => {
      await withResultsDb(options.db, io.cwd, async ({ db }) => {
        const folders = sides.filter((s) => isRunFolder(at(s)));
        if (folders.length) {
          for (const o of await importPaths(db, folders.map(at), { registry: await loadRegistry() })) if (o.kind === 'run' && o.refused) io.stderr(`warning: ${outcomeLine(o)}; comparing what the database holds\n`);
        }
        const selectors = sides.map((s) => (isRunFolder(at(s)) ? openSourceRun(at(s)).config.run_id : s));
        const comparison = await compare(db, selectors, {
          k: options.k,
          resamples: options.resamples,
          seed: options.seed,
          ...(options.set ? { set: options.set } : {}),
          ...(options.month ? { month: options.month } : {}),
          ...(options.correction ? { correction: options.correction } : {}),
        });
        io.stdout(options.format === 'json' ? comparisonJson(comparison) : comparisonText(comparison));
        if (options.html) {
          writeFileSync(at(options.html), renderComparisonHtml(comparison, loadPlotAssets()));
          io.stderr(`comparison page: ${at(options.html)}\n`);
        }
      });
      setExitCode(EXIT_OK);
    });
}
