/**
 * `mcpbench results import|list`, `compare`, `anomalies` and `leaderboard`: argv onto server/src/results.
 * Exit codes as everywhere: 0 clean, 1 findings (anomalies flagged), 2 usage or I/O error.
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { loadRegistry } from '../mcp/registry.ts';
import { RotationError } from '../generator/rotate.ts';
import { anomaliesText, detectAnomalies, loadHistory } from '../results/anomalies.ts';
import { compare, CompareError, comparisonJson, comparisonText } from '../results/compare.ts';
import { renderComparisonHtml } from '../results/compare-html.ts';
import { openResultsDb, ResultsDbError, DEFAULT_DB_PATH, DB_ENV, type OpenedDb } from '../results/db.ts';
import { importPaths, ImportError, type ImportOutcome } from '../results/import.ts';
import { writeLeaderboard } from '../results/leaderboard.ts';
import { isRunFolder, openSourceRun, RunSourceError } from '../results/run-source.ts';
import { loadPlotAssets } from '../scoring/report-html.ts';
import { PathError } from '../tasks/files.ts';
import { monthOption, seedOption, type GeneratorCommandsIo } from './generator-commands.ts';
import { UsageError } from './run-commands.ts';

const EXIT_OK = 0;
const EXIT_FINDINGS = 1;

export type ResultsCommandsIo = GeneratorCommandsIo;

function positiveInteger(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a whole number >= 1');
  return n;
}

function probability(value: string): number {
  const n = Number(value);
  if (!(n > 0 && n < 1)) throw new InvalidArgumentError('expected a number between 0 and 1, e.g. 0.05');
  return n;
}

const dbOption = () => new Option('--db <target>', `the results database: a PGlite folder, postgres://user@host/db, or memory:// (default: ${DB_ENV} or ${DEFAULT_DB_PATH})`);
const correctionOption = () => new Option('--correction <method>', 'multiple-comparison correction').choices(['holm', 'bh']);

/** Opens the database, runs `work`, closes it; the results engine's errors are usage or I/O errors (exit 2). */
async function withDb<T>(target: string | undefined, cwd: string, work: (opened: OpenedDb) => Promise<T>): Promise<T> {
  let opened: OpenedDb | undefined;
  try {
    opened = await openResultsDb(target, cwd);
    return await work(opened);
  } catch (error) {
    const usage = [ResultsDbError, ImportError, CompareError, RunSourceError, RotationError, PathError];
    if (usage.some((kind) => error instanceof kind)) throw new UsageError((error as Error).message);
    throw error;
  } finally {
    await opened?.close();
  }
}

function outcomeLine(o: ImportOutcome): string {
  return o.kind === 'run'
    ? `${o.status.padEnd(9)} run ${o.run_id}: ${o.episodes} episodes, ${o.calls} calls (${o.path})`
    : `${o.status.padEnd(9)} rotation ${o.set} ${o.month}: ${o.tasks} retired tasks (${o.path})`;
}

export function registerResultsCommands(program: Command, io: ResultsCommandsIo, setExitCode: (code: number) => void): void {
  const at = (path: string) => resolve(io.cwd, path);
  const results = program.command('results').description('The results database: import runs and rotations, list what it holds.');

  results
    .command('import')
    .description('Import run folders (and Historical-YYYY-MM.json rotation manifests, or folders holding them) into the results database; an unchanged run imports as a no-op.')
    .argument('<paths...>', 'run folders, Historical-YYYY-MM.json files, or folders of them (e.g. runs/)')
    .addOption(dbOption())
    .option('--tasks <paths...>', 'more task files or folders to find each run\'s tasks in (by canonical hash), for failure modes and difficulty')
    .option('--set <name>', 'the task set the runs measured, when run.json does not record it')
    .option('--month <YYYY-MM>', 'the set\'s month, when run.json does not record it', monthOption)
    .option('--agent-label <label>', 'rank these runs under this agent label (default: the agent and its model)')
    .addOption(new Option('-f, --format <format>', 'output format').choices(['text', 'json']).default('text'))
    .action(async (paths: string[], options: { db?: string; tasks?: string[]; set?: string; month?: string; agentLabel?: string; format: 'text' | 'json' }) => {
      const registry = await loadRegistry();
      await withDb(options.db, io.cwd, async ({ db, location }) => {
        const started = Date.now();
        const outcomes = await importPaths(db, paths.map(at), {
          registry,
          ...(options.tasks ? { tasks: options.tasks.map(at) } : {}),
          ...(options.set ? { set: options.set } : {}),
          ...(options.month ? { month: options.month } : {}),
          ...(options.agentLabel ? { agentLabel: options.agentLabel } : {}),
        });
        if (options.format === 'json') io.stdout(JSON.stringify({ database: location, outcomes, seconds: (Date.now() - started) / 1000 }, null, 2) + '\n');
        else {
          for (const o of outcomes) io.stdout(outcomeLine(o) + '\n');
          for (const o of outcomes) if (o.kind === 'run') for (const w of o.warnings) io.stderr(`warning: ${w}\n`);
          io.stdout(`${location}: ${outcomes.length} imported or checked in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
        }
      });
      setExitCode(EXIT_OK);
    });

  results
    .command('list')
    .description('List the runs in the results database, with their success rate and failure modes.')
    .addOption(dbOption())
    .addOption(new Option('-f, --format <format>', 'output format').choices(['text', 'json']).default('text'))
    .action(async (options: { db?: string; format: 'text' | 'json' }) => {
      await withDb(options.db, io.cwd, async ({ db }) => {
        const runs = await db
          .selectFrom('runs as r')
          .leftJoin('run_scores as s', (j) => j.onRef('s.run_id', '=', 'r.run_id').on('s.metric', '=', 'success_rate'))
          .select(['r.run_id', 'r.agent_label', 'r.set_name', 'r.month', 'r.fault_profile', 'r.trials', 'r.episode_records', 's.value as success_rate'])
          .orderBy('r.month')
          .orderBy('r.run_id')
          .execute();
        // Failure modes counted per run.
        const modes = await db
          .selectFrom('episodes')
          .select(['run_id', 'failure_mode', (eb) => eb.fn.countAll<number>().as('episodes')])
          .where('failure_mode', 'is not', null)
          .groupBy(['run_id', 'failure_mode'])
          .orderBy('run_id')
          .orderBy('failure_mode')
          .execute();
        const modesOf = (run: string) => Object.fromEntries(modes.filter((m) => m.run_id === run).sort((a, b) => Number(b.episodes) - Number(a.episodes)).map((m) => [m.failure_mode, Number(m.episodes)]));
        const rows = runs.map((r) => ({ ...r, failure_modes: modesOf(r.run_id) }));
        if (options.format === 'json') io.stdout(JSON.stringify(rows, null, 2) + '\n');
        else {
          for (const r of rows) {
            const failures = Object.entries(r.failure_modes).map(([mode, n]) => `${mode} ${n}`).join(', ');
            io.stdout(`${r.run_id}  ${r.agent_label}  ${r.set_name ?? '-'} ${r.month}  faults ${r.fault_profile}  trials ${r.trials}  ${r.episode_records} records  success ${r.success_rate === null ? 'n/a' : `${(100 * r.success_rate).toFixed(1)}%`}${failures ? `  failures: ${failures}` : ''}\n`);
          }
        }
      });
      setExitCode(EXIT_OK);
    });

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
    .addOption(new Option('-f, --format <format>', 'output format').choices(['text', 'json']).default('text'))
    .action(async (sides: string[], options: { db?: string; k: number; set?: string; month?: string; resamples: number; seed: number; correction?: 'holm' | 'bh'; html?: string; format: 'text' | 'json' }) => {
      await withDb(options.db, io.cwd, async ({ db }) => {
        const folders = sides.filter((s) => isRunFolder(at(s)));
        if (folders.length) await importPaths(db, folders.map(at), { registry: await loadRegistry() });
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
    .addOption(new Option('-f, --format <format>', 'output format').choices(['text', 'json']).default('text'))
    .action(async (options: { db?: string; set?: string; alpha: number; correction?: 'holm' | 'bh'; resamples: number; seed: number; all?: boolean; format: 'text' | 'json' }) => {
      let flagged = 0;
      await withDb(options.db, io.cwd, async ({ db }) => {
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

  program
    .command('leaderboard')
    .description('Write a static, self-contained leaderboard (index.html and leaderboard.json): per set and month, success with intervals, pass^k, cost where known, links to each run\'s report.')
    .requiredOption('--out <folder>', 'where index.html and leaderboard.json go')
    .addOption(dbOption())
    .option('--set <name>', 'only this set')
    .option('--title <title>', 'the page title', 'MCPBench leaderboard')
    .action(async (options: { out: string; db?: string; set?: string; title: string }) => {
      await withDb(options.db, io.cwd, async ({ db }) => {
        const written = await writeLeaderboard(db, at(options.out), { title: options.title, ...(options.set ? { set: options.set } : {}) });
        io.stdout(`leaderboard: ${written.html} (${written.board.sections.length} set-months)\n`);
      });
      setExitCode(EXIT_OK);
    });
}
