/**
 * `mcpbench review`, `rotate`, `verify`, `seal` and `unseal`: argv onto server/src/generator. Exit codes as
 * everywhere: 0 clean, 1 findings (refused candidates, attestation mismatches), 2 usage or I/O error.
 */
import { resolve } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { loadRegistry } from '../mcp/registry.ts';
import { PathError } from '../tasks/files.ts';
import { AttestationError, readAttestations, verifyFolder, verifyTasks, type VerifyReport } from '../generator/attest.ts';
import { acceptBatch, BatchError, candidateDiff, listCandidates, setDecision } from '../generator/review.ts';
import { rotate, RotationError } from '../generator/rotate.ts';
import { keyFromEnvironment, readSealedTasks, seal, SealError, unseal } from '../generator/seal.ts';
import { UsageError } from './run-commands.ts';

const EXIT_OK = 0;
const EXIT_FINDINGS = 1;

export interface GeneratorCommandsIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  cwd: string;
}

function shareOption(value: string): number {
  const n = Number(value);
  if (!(n >= 0 && n <= 1)) throw new InvalidArgumentError('expected a number from 0 to 1, e.g. 0.25');
  return n;
}

export function seedOption(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n)) throw new InvalidArgumentError('expected a whole number');
  return n;
}

export function monthOption(value: string): string {
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(value)) throw new InvalidArgumentError('expected YYYY-MM, e.g. 2026-12');
  return value;
}

/** The generator's own errors are usage or I/O problems of the command line: exit 2 with their message. */
async function guarded<T>(work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof BatchError || error instanceof RotationError || error instanceof SealError || error instanceof AttestationError || error instanceof PathError) {
      throw new UsageError(error.message);
    }
    throw error;
  }
}

export function registerGeneratorCommands(program: Command, io: GeneratorCommandsIo, setExitCode: (code: number) => void): void {
  const at = (path: string) => resolve(io.cwd, path);
  const review = program.command('review').description('Review a batch written by mcpbench generate: list, decide, diff, accept.');

  review
    .command('list')
    .description('List the candidates of a batch with their decision, integrity, lint and check results.')
    .argument('<batch>', 'the batch folder')
    .addOption(new Option('-f, --format <format>', 'output format').choices(['text', 'json']).default('text'))
    .action((batch: string, options: { format: 'text' | 'json' }) =>
      guarded(() => {
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
      }),
    );

  review
    .command('decide')
    .description('Accept or reject one candidate, with a reason (written into the batch manifest).')
    .argument('<batch>', 'the batch folder')
    .argument('<task-id>', 'the candidate')
    .addArgument(new Command().createArgument('<decision>', 'accept or reject').choices(['accept', 'reject']))
    .requiredOption('--reason <text>', 'why')
    .option('--reviewer <name>', 'who decided')
    .action((batch: string, taskId: string, decision: 'accept' | 'reject', options: { reason: string; reviewer?: string }) =>
      guarded(() => {
        const candidate = setDecision(at(batch), taskId, decision, options.reason, options.reviewer);
        io.stdout(`${taskId}: ${candidate.review!.decision}\n`);
        setExitCode(EXIT_OK);
      }),
    );

  review
    .command('diff')
    .description("Show a candidate's structural differences from its nearest sibling variant.")
    .argument('<batch>', 'the batch folder')
    .argument('<task-id>', 'the candidate')
    .option('--also <folders...>', 'task folders whose variants of the same template count as siblings')
    .addOption(new Option('-f, --format <format>', 'output format').choices(['text', 'json']).default('text'))
    .action((batch: string, taskId: string, options: { also?: string[]; format: 'text' | 'json' }) =>
      guarded(() => {
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
      }),
    );

  review
    .command('accept')
    .description('Move the accepted candidates of a batch into a task set; refuses undecided, failing or changed ones.')
    .argument('<batch>', 'the batch folder')
    .option('--into <folder>', 'the task set folder', 'tasks')
    .addOption(new Option('-f, --format <format>', 'output format').choices(['text', 'json']).default('text'))
    .action(async (batch: string, options: { into: string; format: 'text' | 'json' }) => {
      const registry = await loadRegistry();
      await guarded(() => {
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
    });

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
      await guarded(() => {
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
    });

  program
    .command('verify')
    .description('Check every task of a set (folder or .sealed.json) against (task_id, sha256) attestations.')
    .argument('<set>', 'a task folder, a set folder or a sealed set (key from MCPBENCH_SET_KEY)')
    .requiredOption('--attestations <file>', 'a Historical-YYYY-MM.json, a set.json or an array of { task_id, sha256 }')
    .action((set: string, options: { attestations: string }) =>
      guarded(() => {
        const report: VerifyReport = set.endsWith('.sealed.json')
          ? verifyTasks(readSealedTasks(at(set), keyFromEnvironment()), readAttestations(at(options.attestations)))
          : verifyFolder(at(set), at(options.attestations));
        for (const f of report.findings) io.stdout(`${f.task_id}: ${f.kind}: ${f.message}\n`);
        io.stdout(report.ok ? `ok: ${report.checked} task(s) match their attestations\n` : `${report.findings.length} problem(s) in ${report.checked} task(s)\n`);
        setExitCode(report.ok ? EXIT_OK : EXIT_FINDINGS);
      }),
    );

  program
    .command('seal')
    .description('Encrypt a set folder into one file (AES-256-GCM, key from MCPBENCH_SET_KEY).')
    .argument('<set-dir>', 'the set folder')
    .requiredOption('--out <file>', 'the sealed file, e.g. sets/private.sealed.json')
    .action((setDir: string, options: { out: string }) =>
      guarded(() => {
        seal(at(setDir), keyFromEnvironment(), { out: at(options.out) });
        io.stdout(`sealed ${setDir} -> ${options.out}\n`);
        setExitCode(EXIT_OK);
      }),
    );

  program
    .command('unseal')
    .description('Decrypt a sealed set into a new folder (key from MCPBENCH_SET_KEY).')
    .argument('<file>', 'the sealed file')
    .requiredOption('--out <folder>', 'a new or empty folder')
    .action((file: string, options: { out: string }) =>
      guarded(() => {
        const files = unseal(at(file), keyFromEnvironment(), { out: at(options.out) });
        io.stdout(`unsealed ${files.length} file(s) into ${options.out}\n`);
        setExitCode(EXIT_OK);
      }),
    );
}
