/** `mcpbench results import|list`: the results database: import runs and rotations, list what it holds. */
import type { Command } from 'commander';
import { configurationText, EXIT_FINDINGS, EXIT_OK, importPaths, listRuns, loadRegistry, withResultsDb } from '../../engine/index.ts';
import type { CommandContext } from '../context.ts';
import { outcomeLine } from '../format.ts';
import { dbOption, formatOption, monthOption } from '../options.ts';

export function register(program: Command, { io, at, setExitCode }: CommandContext): void {
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
    .addOption(formatOption())
    .action(async (paths: string[], options: { db?: string; tasks?: string[]; set?: string; month?: string; agentLabel?: string; format: 'text' | 'json' }) => {
      const registry = await loadRegistry();
      let refused = 0;
      await withResultsDb(options.db, io.cwd, async ({ db, location }) => {
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
        refused = outcomes.filter((o) => o.kind === 'run' && o.status === 'refused').length;
      });
      setExitCode(refused > 0 ? EXIT_FINDINGS : EXIT_OK);
    });

  results
    .command('list')
    .description('List the runs in the results database, with their success rate and failure modes.')
    .addOption(dbOption())
    .addOption(formatOption())
    .action(async (options: { db?: string; format: 'text' | 'json' }) => {
      await withResultsDb(options.db, io.cwd, async ({ db }) => {
        const rows = await listRuns(db);
        if (options.format === 'json') io.stdout(JSON.stringify(rows, null, 2) + '\n');
        else {
          for (const r of rows) {
            const failures = Object.entries(r.failure_modes).map(([mode, n]) => `${mode} ${n}`).join(', ');
            const standing = r.completeness === 'complete' ? 'complete' : r.completeness === 'unresolved' ? `UNRESOLVED (${r.unresolved_units} units infra errors)` : `INCOMPLETE (${r.units - r.unresolved_units} of ${r.planned_units ?? '?'} units)`;
            io.stdout(`${r.run_id}  ${r.agent_label}  ${r.set_name ?? '-'} ${r.month}  ${configurationText(r.configuration)}  ${standing}  ${r.episode_records} records  success ${r.success_rate === null ? 'n/a' : `${(100 * r.success_rate).toFixed(1)}%`}${failures ? `  failures: ${failures}` : ''}\n`);
          }
        }
      });
      setExitCode(EXIT_OK);
    });
}
