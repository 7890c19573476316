/**
 * `mcpbench generate <template> --count N --seed S [--out dir] [--check]`: argv onto the generator. Lints the
 * template (errors stop it), samples a review batch into `<out>/<template id>-<seed>/`, prints each candidate,
 * and with `--check` self-tests every candidate and records the verdicts in the batch manifest.
 * Exit codes: 0 every candidate clean (and checked ok), 1 findings (template errors, invalid samples, failed
 * checks), 2 usage or I/O errors.
 */
import { relative, resolve } from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { BATCH_FILE } from '../../generator/batch.ts';
import { MAX_VARIANTS } from '../../generator/model.ts';
import { checkBatch, EXIT_FINDINGS, EXIT_INTERRUPTED, EXIT_OK, loadRegistry, sampleBatch, type RunEvent } from '../../engine/index.ts';
import { chooseBackend, PROCESS_BACKEND_WARNING, type SandboxBackend } from '../../runner/sandbox.ts';
import type { CliIo, CommandContext } from '../context.ts';
import { formatOption, integerOption, sandboxOption } from '../options.ts';

interface GenerateFlags {
  count: number;
  seed: number;
  out: string;
  check?: boolean;
  concurrency: number;
  sandbox?: SandboxBackend;
  format: 'text' | 'json';
}

function variantCount(value: string): number {
  const n = integerOption(value);
  if (n > MAX_VARIANTS) throw new InvalidArgumentError(`at most ${MAX_VARIANTS}: a batch is for human review`);
  return n;
}

export function register(program: Command, { io, version, setExitCode }: CommandContext): void {
  program
    .command('generate')
    .description('Sample a template grammar into a review batch: distinct variants, each linted, optionally self-checked.')
    .argument('<template>', 'a template file, e.g. templates/travel/cheapest-flight.template.json')
    .option('--count <n>', `variants to generate (at most ${MAX_VARIANTS})`, variantCount, 20)
    .option('--seed <n>', 'batch seed: the same seed gives the same variants, byte for byte', integerOption, 1)
    .option('--out <folder>', 'where batch folders go', 'batches')
    .option('--check', 'run check on every candidate (noop fails, references pass, counterexamples fail, recoverable)')
    .option('--concurrency <n>', 'check episodes at a time', integerOption, 2)
    .addOption(sandboxOption('sandbox backend for --check'))
    .addOption(formatOption())
    .action(async (file: string, flags: GenerateFlags) => setExitCode(await generateCommand(file, flags, io, version)));
}

async function generateCommand(file: string, flags: GenerateFlags, io: CliIo, version: string): Promise<number> {
  const path = resolve(io.cwd, file);
  const shown = (p: string) => {
    const r = relative(io.cwd, p);
    return r === '' ? '.' : r.startsWith('..') ? p : r;
  };
  const registry = await loadRegistry();
  const sampled = sampleBatch(path, { registry, outDir: resolve(io.cwd, flags.out), count: flags.count, seed: flags.seed, templateFile: shown(path) });
  for (const d of sampled.diagnostics) io.stderr(`${shown(d.uri)}:${d.start.line + 1}:${d.start.character + 1} ${d.severity} ${d.code} ${d.message}\n`);
  if (!sampled.ok) {
    io.stderr(`${shown(path)}: the template has errors; nothing was generated\n`);
    return EXIT_FINDINGS;
  }
  const { directory, manifest, result } = sampled;

  let checksOk = true;
  let interrupted = false;
  if (flags.check && manifest.candidates.length) {
    const backend = chooseBackend(flags.sandbox);
    if (backend === 'process') io.stderr(`warning: ${PROCESS_BACKEND_WARNING}\n`);
    const controller = new AbortController();
    const stop = () => controller.abort(new Error('interrupted'));
    process.once('SIGINT', stop);
    let done = 0;
    let total = 0;
    const onEvent = (event: RunEvent) => {
      if (event.type === 'run-started') total = event.episodes;
      if (event.type === 'episode-finished' && event.result.status !== 'infra_error') {
        done++;
        if (process.stderr.isTTY && flags.format === 'text') io.stderr(`\rchecking: ${done}/${total} episodes`);
      }
    };
    try {
      const outcome = await checkBatch(directory, { registry, cwd: io.cwd, seed: flags.seed, concurrency: flags.concurrency, backend, version, signal: controller.signal, onEvent });
      if (process.stderr.isTTY && flags.format === 'text') io.stderr('\n');
      interrupted = outcome.interrupted;
      checksOk = outcome.checks.every((c) => c.ok);
      Object.assign(manifest, outcome.manifest);
    } finally {
      process.off('SIGINT', stop);
    }
  }

  if (flags.format === 'json') {
    io.stdout(JSON.stringify({ batch: shown(directory), manifest }, null, 2) + '\n');
  } else {
    const lines: string[] = [];
    for (const c of manifest.candidates) {
      const lint = c.lint.warnings ? `${c.lint.warnings} warning${c.lint.warnings === 1 ? '' : 's'}` : 'lint clean';
      const check = c.check ? (c.check.ok ? ', check ok' : ', check FAIL') : '';
      lines.push(`${c.check && !c.check.ok ? 'FAIL' : 'ok  '} ${c.task_id}  ${lint}${check}`);
      for (const problem of c.check?.problems ?? []) lines.push(`       - ${problem}`);
    }
    for (const invalid of manifest.invalid) {
      lines.push(`lint ${invalid.task_id} (seed ${invalid.seed}) not written:`);
      for (const problem of invalid.problems) lines.push(`       - ${problem}`);
    }
    const short = manifest.candidates.length < flags.count ? ` (asked for ${flags.count}: the template's parameter space ran out after ${result.attempts} samples)` : '';
    const checked = flags.check ? `, ${manifest.candidates.filter((c) => c.check?.ok).length} checked ok` : '';
    lines.push(
      `${manifest.candidates.length} candidate${manifest.candidates.length === 1 ? '' : 's'}${short}${checked}; dropped ${manifest.dropped.duplicates} duplicate${manifest.dropped.duplicates === 1 ? '' : 's'} and ${manifest.dropped.invalid} invalid`,
      `batch: ${shown(directory)}/${BATCH_FILE}`,
    );
    io.stdout(lines.join('\n') + '\n');
  }
  if (interrupted) return EXIT_INTERRUPTED;
  return manifest.invalid.length === 0 && checksOk ? EXIT_OK : EXIT_FINDINGS;
}
