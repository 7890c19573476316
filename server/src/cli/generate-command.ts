/**
 * `mcpbench generate <template> --count N --seed S [--out dir] [--check]`: argv onto the generator. Lints the
 * template (errors stop it), samples a review batch into `<out>/<template id>-<seed>/`, prints each candidate,
 * and with `--check` self-tests every candidate and records the verdicts in the batch manifest.
 * Exit codes: 0 every candidate clean (and checked ok), 1 findings (template errors, invalid samples, failed
 * checks), 2 usage or I/O errors.
 */
import { relative, resolve } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { batchDirectory, BatchError, checkBatch, writeBatch, BATCH_FILE } from '../generator/batch.ts';
import { generateVariants } from '../generator/generate.ts';
import { lintTemplate } from '../generator/lint-template.ts';
import { MAX_VARIANTS, TemplateSchema, type Template } from '../generator/model.ts';
import { TemplateError } from '../generator/sample.ts';
import { loadRegistry } from '../mcp/registry.ts';
import { chooseBackend, PROCESS_BACKEND_WARNING, SANDBOX_BACKENDS, type SandboxBackend } from '../runner/sandbox.ts';
import { TaskLoadError } from '../runner/run.ts';
import type { RunEvent } from '../runner/types.ts';
import { PathError, readText } from '../tasks/files.ts';
import packageJson from '../../../package.json';

export interface GenerateIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  cwd: string;
}

interface GenerateFlags {
  count: number;
  seed: number;
  out: string;
  check?: boolean;
  concurrency: number;
  sandbox?: SandboxBackend;
  format: 'text' | 'json';
}

function wholeNumber(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('expected a whole number >= 0');
  return n;
}

function variantCount(value: string): number {
  const n = wholeNumber(value);
  if (n > MAX_VARIANTS) throw new InvalidArgumentError(`at most ${MAX_VARIANTS}: a batch is for human review`);
  return n;
}

export function registerGenerateCommand(program: Command, io: GenerateIo, setExitCode: (code: number) => void): Command {
  return program
    .command('generate')
    .description('Sample a template grammar into a review batch: distinct variants, each linted, optionally self-checked.')
    .argument('<template>', 'a template file, e.g. templates/travel/cheapest-flight.template.json')
    .option('--count <n>', `variants to generate (at most ${MAX_VARIANTS})`, variantCount, 20)
    .option('--seed <n>', 'batch seed: the same seed gives the same variants, byte for byte', wholeNumber, 1)
    .option('--out <folder>', 'where batch folders go', 'batches')
    .option('--check', 'run check on every candidate (noop fails, references pass, counterexamples fail, recoverable)')
    .option('--concurrency <n>', 'check episodes at a time', wholeNumber, 2)
    .addOption(new Option('--sandbox <backend>', 'sandbox backend for --check').choices([...SANDBOX_BACKENDS]))
    .addOption(new Option('-f, --format <format>', 'output format').choices(['text', 'json']).default('text'))
    .action(async (file: string, flags: GenerateFlags) => {
      try {
        setExitCode(await generateCommand(file, flags, io));
      } catch (error) {
        if (error instanceof BatchError || error instanceof PathError || error instanceof TemplateError) {
          io.stderr(`mcpbench: ${error.message}\n`);
          setExitCode(2);
          return;
        }
        if (error instanceof TaskLoadError) {
          io.stderr(`mcpbench: ${error.message}\n`);
          for (const d of error.diagnostics) io.stderr(`${d.uri}:${d.start.line + 1}:${d.start.character + 1} ${d.severity} ${d.code} ${d.message}\n`);
          setExitCode(1);
          return;
        }
        throw error;
      }
    });
}

async function generateCommand(file: string, flags: GenerateFlags, io: GenerateIo): Promise<number> {
  const path = resolve(io.cwd, file);
  const shown = (p: string) => {
    const r = relative(io.cwd, p);
    return r === '' ? '.' : r.startsWith('..') ? p : r;
  };
  const text = readText(path);
  const registry = await loadRegistry();
  const { diagnostics } = lintTemplate(path, text, registry);
  for (const d of diagnostics) io.stderr(`${shown(d.uri)}:${d.start.line + 1}:${d.start.character + 1} ${d.severity} ${d.code} ${d.message}\n`);
  if (diagnostics.some((d) => d.severity === 'error')) {
    io.stderr(`${shown(path)}: the template has errors; nothing was generated\n`);
    return 1;
  }
  const template: Template = TemplateSchema.parse(JSON.parse(text));
  const directory = batchDirectory(resolve(io.cwd, flags.out), template.id, flags.seed);
  const result = generateVariants(template, { count: flags.count, seed: flags.seed, registry, uriFor: (id) => resolve(directory, `${id}.json`) });
  const manifest = writeBatch({ directory, template, templateFile: shown(path), seed: flags.seed, count: flags.count, result });

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
      const outcome = await checkBatch(directory, { registry, cwd: io.cwd, seed: flags.seed, concurrency: flags.concurrency, backend, version: packageJson.version, signal: controller.signal, onEvent });
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
  if (interrupted) return 130;
  return manifest.invalid.length === 0 && checksOk ? 0 : 1;
}
