/**
 * The public dev set (tasks/) as the issue defines it: every task was generated from a template in templates/
 * (rebuilding it from its recorded template, version and seed gives the file byte for byte) and accepted by a
 * reviewer with a reason (its sha256 is an accepted candidate of a review record in reviews/); the set has the
 * composition it promises; tasks/README.md is the current output of `mcpbench stats`. Lint and check of the
 * whole set run in `npm run test:devset`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildVariant } from '../server/src/generator/generate.ts';
import { TemplateSchema, type Template } from '../server/src/generator/model.ts';
import { compileTemplate } from '../server/src/generator/sample.ts';
import { loadRegistry } from '../server/src/mcp/registry.ts';
import { composition, taskTraits } from '../server/src/tasks/composition.ts';
import { collectTaskFiles } from '../server/src/tasks/files.ts';
import { canonicalHash } from '../server/src/canonical-json.ts';
import { TaskSchema, type Task } from '../server/src/tasks/model.ts';

const root = join(__dirname, '..');
const NAMESPACES = ['calendar', 'chat', 'filesystem', 'git', 'github', 'memory', 'postgres', 'shop', 'support', 'travel'];

const files = collectTaskFiles([join(root, 'tasks')]);
const tasks = files.map((file) => ({ file, text: readFileSync(file, 'utf8'), task: TaskSchema.parse(JSON.parse(readFileSync(file, 'utf8'))) as Task }));

const templates = new Map<string, { file: string; template: Template }>();
for (const file of readdirSync(join(root, 'templates'), { recursive: true }).map(String).filter((f) => f.endsWith('.template.json'))) {
  const template = TemplateSchema.parse(JSON.parse(readFileSync(join(root, 'templates', file), 'utf8')));
  assert.ok(!templates.has(template.id), `two templates have the id ${template.id}`);
  templates.set(template.id, { file, template });
}

interface ReviewRecord {
  template: { id: string; version: string };
  candidates: { task_id: string; sha256: string; review?: { decision: string; reason: string } }[];
}
const records = readdirSync(join(root, 'reviews'))
  .filter((f) => f.endsWith('.batch.json'))
  .map((f) => ({ file: f, record: JSON.parse(readFileSync(join(root, 'reviews', f), 'utf8')) as ReviewRecord }));

test('every task rebuilds byte for byte from its template, version and seed', () => {
  const compiled = new Map<string, ReturnType<typeof compileTemplate>>();
  const problems: string[] = [];
  for (const { file, text, task } of tasks) {
    const provenance = task.template;
    if (!provenance) {
      problems.push(`${file}: no template provenance`);
      continue;
    }
    const found = templates.get(provenance.id);
    if (!found) {
      problems.push(`${file}: template ${provenance.id} is not in templates/`);
      continue;
    }
    if (found.template.version !== provenance.version) {
      problems.push(`${file}: made by ${provenance.id} version ${provenance.version}, templates/${found.file} is version ${found.template.version}`);
      continue;
    }
    if (!compiled.has(provenance.id)) compiled.set(provenance.id, compileTemplate(found.template));
    const rebuilt = buildVariant(compiled.get(provenance.id)!, provenance.seed);
    if (rebuilt.text !== text) problems.push(`${file}: templates/${found.file} with seed ${provenance.seed} no longer gives this file`);
  }
  assert.deepEqual(problems, []);
});

test('every task was accepted by a reviewer with a reason, in a review record of its template', () => {
  const accepted = new Map<string, { file: string; reason: string; template: string }>();
  for (const { file, record } of records) {
    for (const c of record.candidates) {
      if (c.review?.decision === 'accepted') accepted.set(c.sha256, { file, reason: c.review.reason, template: record.template.id });
    }
  }
  const problems: string[] = [];
  for (const { file, task } of tasks) {
    const review = accepted.get(canonicalHash(JSON.parse(readFileSync(file, 'utf8'))));
    if (!review) problems.push(`${file}: no accepted review of these exact bytes in reviews/`);
    else if (review.template !== task.template?.id) problems.push(`${file}: reviewed in ${review.file}, a batch of another template`);
    else if (!review.reason.trim()) problems.push(`${file}: accepted without a reason`);
  }
  assert.deepEqual(problems, []);
});

test('the set has the promised composition', async () => {
  const registry = await loadRegistry();
  const c = composition(tasks.map(({ task }) => taskTraits(task, registry)));
  assert.equal(c.total, 200);
  assert.deepEqual(c.namespaces, NAMESPACES);
  for (const ns of NAMESPACES) {
    const count = Object.values(c.cells[ns]!).reduce((sum, byDifficulty) => sum + Object.values(byDifficulty).reduce((s, n) => s + n, 0), 0);
    assert.equal(count, 20, `${ns} has ${count} tasks`);
  }
  // About half single-tool, a third composition, the rest recovery; every difficulty well represented.
  assert.ok(c.byCategory['single-tool'] >= 90 && c.byCategory['single-tool'] <= 110, `single-tool: ${c.byCategory['single-tool']}`);
  assert.ok(c.byCategory.composition >= 55 && c.byCategory.composition <= 75, `composition: ${c.byCategory.composition}`);
  assert.ok(c.byCategory.recovery >= 20, `recovery: ${c.byCategory.recovery}`);
  for (const d of ['easy', 'medium', 'hard'] as const) assert.ok(c.byDifficulty[d] >= 30, `${d}: ${c.byDifficulty[d]}`);
  assert.ok(c.crossServer >= 30, `cross-server: ${c.crossServer}`);
  assert.ok(c.information >= 20, `information: ${c.information}`);
  assert.ok(c.distractors * 3 >= c.total, `distractor tools: ${c.distractors}`);
  assert.equal(c.withProvenance, c.total);
  assert.ok(c.templates >= 30, `templates: ${c.templates}`);
});

test("the reference paper's Appendix C samples are in the set, in our format", () => {
  const samples = tasks.filter(({ task }) => task.tags?.includes('appendix-c')).map(({ task }) => task);
  const meeting = samples.find((t) => t.server === 'calendar');
  assert.ok(meeting, 'C.1, the meeting booking');
  assert.match(meeting.goal, /Book a meeting about 'Review' on 2026-01-01 at 09:00\./);
  const flight = samples.find((t) => t.server === 'travel');
  assert.ok(flight, 'C.2, the cheapest-flight booking');
  assert.match(flight.goal, /Book the cheapest flight from LON to PAR on 2026-01-05 for Bob\./);
  assert.match(JSON.stringify(flight.success_predicate), /AA-500/);
});

test('tasks/README.md is the current output of mcpbench stats', () => {
  const result = spawnSync(process.execPath, [join(root, 'dist', 'cli.js'), 'stats', 'tasks', '--format', 'markdown'], { cwd: root, encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  assert.equal(readFileSync(join(root, 'tasks', 'README.md'), 'utf8'), result.stdout, 'run `npm run tasks:readme` after changing the set');
});
