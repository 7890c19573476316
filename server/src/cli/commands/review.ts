/** `mcpbench review list|decide|diff|accept <batch>`: review a batch written by mcpbench generate. */
import { Command } from 'commander';
import { acceptBatch, candidateDiff, EXIT_FINDINGS, EXIT_OK, listCandidates, loadRegistry, setDecision } from '../../engine/index.ts';
import type { CommandContext } from '../context.ts';
import { formatOption } from '../options.ts';

export function register(program: Command, { io, at, setExitCode }: CommandContext): void {
  const review = program.command('review').description('Review a batch written by mcpbench generate: list, decide, diff, accept.');

  review
    .command('list')
    .description('List the candidates of a batch with their decision, integrity, lint and check results.')
    .argument('<batch>', 'the batch folder')
    .addOption(formatOption())
    .action((batch: string, options: { format: 'text' | 'json' }) => {
      const candidates = listCandidates(at(batch));
      if (options.format === 'json') io.stdout(JSON.stringify(candidates, null, 2) + '\n');
      else {
        for (const c of candidates) {
          const check = c.check === undefined ? 'unchecked' : c.check.ok ? 'check ok' : 'check FAILED';
          const integrity = c.integrity === 'ok' ? '' : ` FILE ${c.integrity.toUpperCase()}`;
          const reason = c.review ? ` — ${c.review.reason}${c.review.reviewer ? ` (${c.review.reviewer})` : ''}` : '';
          io.stdout(`${c.task_id}  ${c.state}  lint ${c.lint.errors}E/${c.lint.warnings}W  ${check}${integrity}${reason}\n`);
        }
        const undecided = candidates.filter((c) => c.state === 'undecided').length;
        io.stdout(`${candidates.length} candidate(s), ${undecided} undecided\n`);
      }
      setExitCode(EXIT_OK);
    });

  review
    .command('decide')
    .description('Accept or reject one candidate, with a reason (written into the batch manifest).')
    .argument('<batch>', 'the batch folder')
    .argument('<task-id>', 'the candidate')
    .addArgument(new Command().createArgument('<decision>', 'accept or reject').choices(['accept', 'reject']))
    .requiredOption('--reason <text>', 'why')
    .option('--reviewer <name>', 'who decided')
    .action((batch: string, taskId: string, decision: 'accept' | 'reject', options: { reason: string; reviewer?: string }) => {
      const candidate = setDecision(at(batch), taskId, decision, options.reason, options.reviewer);
      io.stdout(`${taskId}: ${candidate.review!.decision}\n`);
      setExitCode(EXIT_OK);
    });

  review
    .command('diff')
    .description("Show a candidate's structural differences from its nearest sibling variant.")
    .argument('<batch>', 'the batch folder')
    .argument('<task-id>', 'the candidate')
    .option('--also <folders...>', 'task folders whose variants of the same template count as siblings')
    .addOption(formatOption())
    .action((batch: string, taskId: string, options: { also?: string[]; format: 'text' | 'json' }) => {
      const diff = candidateDiff(at(batch), taskId, options.also ? { also: options.also.map(at) } : {});
      if (options.format === 'json') io.stdout(JSON.stringify(diff, null, 2) + '\n');
      else {
        io.stdout(diff.sibling ? `${taskId} against ${diff.sibling.task_id}:\n` : `${taskId} has no sibling; the whole task:\n`);
        for (const c of diff.changes) {
          const before = c.kind === 'added' ? '' : `- ${JSON.stringify(c.before)}\n`;
          const after = c.kind === 'removed' ? '' : `+ ${JSON.stringify(c.after)}\n`;
          io.stdout(`${c.path} (${c.kind})\n${before}${after}`);
        }
      }
      setExitCode(EXIT_OK);
    });

  review
    .command('accept')
    .description('Move the accepted candidates of a batch into a task set; refuses undecided, failing or changed ones.')
    .argument('<batch>', 'the batch folder')
    .option('--into <folder>', 'the task set folder', 'tasks')
    .addOption(formatOption())
    .action(async (batch: string, options: { into: string; format: 'text' | 'json' }) => {
      const registry = await loadRegistry();
      const report = acceptBatch(at(batch), { into: at(options.into), registry });
      if (options.format === 'json') io.stdout(JSON.stringify(report, null, 2) + '\n');
      else {
        for (const a of report.accepted) io.stdout(`accepted ${a.task_id} -> ${a.file}\n`);
        for (const s of report.skipped) io.stdout(`skipped ${s.task_id}: ${s.reason}\n`);
        for (const r of report.refused) io.stderr(`refused ${r.task_id}: ${r.reason}\n`);
        io.stdout(`${report.accepted.length} accepted, ${report.skipped.length} skipped, ${report.refused.length} refused\n`);
      }
      setExitCode(report.refused.length > 0 ? EXIT_FINDINGS : EXIT_OK);
    });
}
