/**
 * bench/lint: our full lint (syntax, structure, every semantic rule, set-wide duplicate ids) of 1,000
 * generated task files against vscode-json-languageservice validating the same texts against
 * task.schema.json (schema checks only), in the same process and run. Prints the median of several rounds
 * and the ratio ours / baseline (goal: <= 1.0).
 *
 *   npm run bench:lint            (FILES=1000 ROUNDS=7 by default)
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getLanguageService } from 'vscode-json-languageservice';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { collectTaskFiles, readText } from '../../server/src/tasks/files.ts';
import { lintTaskSet } from '../../server/src/tasks/lint.ts';
import { schemasDir } from '../../server/src/paths.ts';
import { pick, seededRandom } from '../../test/seeded-random.ts';

const FILES = Number(process.env.FILES ?? 1000);
const ROUNDS = Number(process.env.ROUNDS ?? 7);

/** Task files made from the dev set: new ids, renamed values, reformatted; some with one injected mistake. */
function generateTasks(dir: string): string[] {
  const seeds = collectTaskFiles([join(__dirname, '..', '..', 'tasks'), join(__dirname, '..', '..', 'test', 'fixtures', 'tasks')]).map((f) => JSON.parse(readFileSync(f, 'utf8')));
  if (seeds.length === 0) throw new Error('no tasks in tasks/ to generate from');
  const random = seededRandom(1000);
  const paths: string[] = [];
  for (let i = 0; i < FILES; i++) {
    const task = structuredClone(pick(random, seeds));
    task.id = `${task.id}-v${i}`;
    task.goal = `${task.goal} (variant ${i})`;
    if (random() < 0.2) task.max_steps = 0; // an error for both validators
    if (random() < 0.1) task.availble_tools = task.available_tools; // an unknown key
    const path = join(dir, `task-${String(i).padStart(4, '0')}.json`);
    writeFileSync(path, JSON.stringify(task, null, random() < 0.5 ? 2 : 4));
    paths.push(path);
  }
  return paths;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'mcpbench-bench-lint-'));
  try {
    const paths = generateTasks(dir);
    const lines = paths.reduce((n, p) => n + readText(p).split('\n').length, 0);
    const registry = await loadRegistry();
    const schema = JSON.parse(readFileSync(join(schemasDir(), 'task.schema.json'), 'utf8'));
    const service = getLanguageService({});
    service.configure({ validate: true, allowComments: false, schemas: [{ uri: schema.$id, fileMatch: ['*.json'], schema }] });

    // Both sides read the files from disk in each round, so I/O is on both sides of the ratio.
    const ours = async () => {
      const results = lintTaskSet(paths.map((p) => ({ uri: p, text: readText(p) })), registry);
      return results.reduce((n, r) => n + r.diagnostics.length, 0);
    };
    const baseline = async () => {
      let count = 0;
      for (const path of paths) {
        const document = TextDocument.create(`file://${path}`, 'json', 1, readText(path));
        const json = service.parseJSONDocument(document);
        count += (await service.doValidation(document, json, { schemaValidation: 'error' }, schema)).length;
      }
      return count;
    };

    // Warm-up: compile schemas, JIT both paths.
    const oursFindings = await ours();
    const baselineFindings = await baseline();
    const oursTimes: number[] = [];
    const baselineTimes: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate the order so neither side always runs on a warmer or colder heap.
      for (const side of round % 2 ? ['baseline', 'ours'] : ['ours', 'baseline']) {
        const start = process.hrtime.bigint();
        if (side === 'ours') await ours();
        else await baseline();
        const ms = Number(process.hrtime.bigint() - start) / 1e6;
        (side === 'ours' ? oursTimes : baselineTimes).push(ms);
      }
    }
    const o = median(oursTimes);
    const b = median(baselineTimes);
    console.log(`bench/lint: ${paths.length} task files, ${lines} lines, median of ${ROUNDS} rounds`);
    console.log(`  mcpbench lint (full, semantic rules included): ${o.toFixed(1)} ms  (${((paths.length / o) * 1000).toFixed(0)} files/s, ${oursFindings} findings)`);
    console.log(`  vscode-json-languageservice (schema only):     ${b.toFixed(1)} ms  (${((paths.length / b) * 1000).toFixed(0)} files/s, ${baselineFindings} findings)`);
    console.log(`  ratio ours / baseline: ${(o / b).toFixed(3)}  (goal <= 1.0)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
