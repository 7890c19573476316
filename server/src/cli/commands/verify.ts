/** `mcpbench verify <set> --attestations FILE`: check a set's tasks against (task_id, sha256) attestations. */
import type { Command } from 'commander';
import { EXIT_FINDINGS, EXIT_OK, verifySet } from '../../engine/index.ts';
import type { CommandContext } from '../context.ts';

export function register(program: Command, { io, at, setExitCode }: CommandContext): void {
  program
    .command('verify')
    .description('Check every task of a set (folder or .sealed.json) against (task_id, sha256) attestations.')
    .argument('<set>', 'a task folder, a set folder or a sealed set (key from MCPBENCH_SET_KEY)')
    .requiredOption('--attestations <file>', 'a Historical-YYYY-MM.json, a set.json or an array of { task_id, sha256 }')
    .action((set: string, options: { attestations: string }) => {
      const report = verifySet(at(set), at(options.attestations));
      for (const f of report.findings) io.stdout(`${f.task_id}: ${f.kind}: ${f.message}\n`);
      io.stdout(report.ok ? `ok: ${report.checked} task(s) match their attestations\n` : `${report.findings.length} problem(s) in ${report.checked} task(s)\n`);
      setExitCode(report.ok ? EXIT_OK : EXIT_FINDINGS);
    });
}
