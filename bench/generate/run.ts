/**
 * bench/generate: variants per second for the whole of `generateVariants` (sample, dedup, lint) at 10,000
 * variants of templates/travel/cheapest-flight.template.json (6 routes x 173 dates x 8 passengers x 2-5
 * flights with drawn ids and prices: duplicates are rare, so every variant is linted), and, in the same run
 * and on the same variant seeds, the cost of each phase alone:
 *   generation: sampling parameters, expanding the grammar, filling the body and writing the file text;
 *   dedup:      the canonical hash (RFC 8785 + SHA-256) of each body and the set lookup;
 *   lint:       lintTask on each file text.
 * Prints variants/s and dedup / generation as a ratio. Phases run in alternating order over ROUNDS rounds;
 * medians are reported.
 *
 *   npx tsx bench/generate/run.ts            (VARIANTS=10000 ROUNDS=3 by default)
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateVariants, TASK_SCHEMA_LINK } from '../../server/src/generator/generate.ts';
import { TemplateSchema } from '../../server/src/generator/model.ts';
import { createRandom } from '../../server/src/generator/random.ts';
import { compileTemplate, sampleVariant, type SampledVariant } from '../../server/src/generator/sample.ts';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { canonicalHash } from '../../server/src/canonical-json.ts';
import { lintTask } from '../../server/src/tasks/lint.ts';

const VARIANTS = Number(process.env.VARIANTS ?? 10_000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const TEMPLATE = join(__dirname, '..', '..', 'templates', 'travel', 'cheapest-flight.template.json');

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const time = <T>(run: () => T): [number, T] => {
  const start = process.hrtime.bigint();
  const result = run();
  return [Number(process.hrtime.bigint() - start) / 1e6, result];
};

async function main() {
  const registry = await loadRegistry();
  const template = TemplateSchema.parse(JSON.parse(readFileSync(TEMPLATE, 'utf8')));
  const compiled = compileTemplate(template);
  const seedSource = createRandom(1);
  const seeds = Array.from({ length: VARIANTS }, () => seedSource.uint32());

  // The phases, each over the same variants; each returns something so no work is optimised away.
  const generation = () => {
    const out: { sample: SampledVariant; text: string }[] = [];
    for (const seed of seeds) {
      const sample = sampleVariant(compiled, seed);
      const text = JSON.stringify({ $schema: TASK_SCHEMA_LINK, id: `${template.id}-00000000`, ...sample.body, template: { id: template.id, version: template.version, parameters: sample.parameters, seed } }, null, 2) + '\n';
      out.push({ sample, text });
    }
    return out;
  };
  const dedup = (generated: ReturnType<typeof generation>) => {
    const seen = new Set<string>();
    let duplicates = 0;
    for (const { sample } of generated) {
      const hash = canonicalHash(sample.body);
      if (seen.has(hash)) duplicates++;
      else seen.add(hash);
    }
    return duplicates;
  };
  const lint = (generated: ReturnType<typeof generation>) => {
    let findings = 0;
    for (const { text } of generated) findings += lintTask('bench.json', text, registry).diagnostics.length;
    return findings;
  };
  const full = () => {
    const r = generateVariants(template, { count: VARIANTS, seed: 1, registry });
    return { kept: r.candidates.length, dropped: r.dropped, attempts: r.attempts };
  };

  // Warm-up: JIT every path and compile the schemas once.
  lint(generation().slice(0, 500));
  const times: Record<'generation' | 'dedup' | 'lint' | 'full', number[]> = { generation: [], dedup: [], lint: [], full: [] };
  let duplicates = 0;
  let findings = 0;
  let summary: ReturnType<typeof full> | undefined;
  // Each round: the phases alone over one generation (held only for that round), then the whole pipeline
  // with nothing else held, or the other way round; the heap each side sees is the same in both orders.
  for (let round = 0; round < ROUNDS; round++) {
    const phases = () => {
      const [g, generated] = time(generation);
      times.generation.push(g);
      let ms: number;
      [ms, duplicates] = time(() => dedup(generated));
      times.dedup.push(ms);
      [ms, findings] = time(() => lint(generated));
      times.lint.push(ms);
    };
    const pipeline = () => {
      let ms: number;
      [ms, summary] = time(full);
      times.full.push(ms);
    };
    if (round % 2) (pipeline(), phases());
    else (phases(), pipeline());
  }
  const g = median(times.generation);
  const d = median(times.dedup);
  const l = median(times.lint);
  const f = median(times.full);
  const perSecond = (ms: number, n = VARIANTS) => ((n / ms) * 1000).toFixed(0);
  console.log(`bench/generate: ${VARIANTS} variants of ${template.id}, median of ${ROUNDS} rounds (node ${process.version})`);
  console.log(`  generate + dedup + lint (generateVariants): ${f.toFixed(0)} ms  ${perSecond(f, summary!.kept)} variants/s  (${summary!.kept} kept, ${summary!.dropped.duplicates} duplicates, ${summary!.dropped.invalid} invalid, ${summary!.attempts} samples)`);
  console.log(`  generation alone:                          ${g.toFixed(0)} ms  ${perSecond(g)} variants/s`);
  console.log(`  dedup alone (canonical hash + set):        ${d.toFixed(0)} ms  ${perSecond(d)} variants/s  (${duplicates} duplicates)`);
  console.log(`  lint alone (lintTask):                     ${l.toFixed(0)} ms  ${perSecond(l)} variants/s  (${findings} findings)`);
  console.log(`  dedup / generation: ${(d / g).toFixed(3)}    lint / generation: ${(l / g).toFixed(2)}`);
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
