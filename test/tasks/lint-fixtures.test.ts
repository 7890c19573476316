/**
 * The fixture corpus of broken tasks (test/fixtures/broken): each file must produce exactly the findings
 * listed in expected.jsonc, each on the exact range whose text is given.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parse } from 'jsonc-parser';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { collectTaskFiles } from '../../server/src/tasks/files.ts';
import { lintTask, lintTaskSet } from '../../server/src/tasks/lint.ts';

const dir = join(__dirname, '..', 'fixtures', 'broken');
interface Expectation {
  code: string;
  text: string;
  line?: number;
}
const expected = parse(readFileSync(join(dir, 'expected.jsonc'), 'utf8')) as Record<string, Expectation[]>;

test('the fixture corpus covers every rule', async () => {
  const { RULES } = await import('../../server/src/tasks/diagnostics.ts');
  const covered = new Set(Object.values(expected).flat().map((e) => e.code));
  assert.deepEqual(Object.keys(RULES).filter((code) => !covered.has(code)), []);
});

test('every broken task yields exactly its expected findings on their exact ranges', async () => {
  const registry = await loadRegistry();
  const files = collectTaskFiles([dir]);
  assert.equal(files.length, Object.keys(expected).length, 'one expectation entry per fixture file');
  const results = lintTaskSet(files.map((f) => ({ uri: f, text: readFileSync(f, 'utf8') })), registry);
  for (const result of results) {
    const name = basename(result.document.uri);
    const wanted = expected[name];
    assert.ok(wanted, `${name} has no entry in expected.jsonc`);
    const got = result.diagnostics.map((d) => ({
      code: d.code,
      text: result.document.text.slice(d.offset, d.offset + d.length),
      line: d.start.line + 1,
    }));
    const describe = () => `${name}:\n${got.map((g) => `  ${g.code} @${g.line} ${JSON.stringify(g.text)}`).join('\n')}`;
    assert.deepEqual(got.map((g) => g.code).sort(), wanted.map((w) => w.code).sort(), `codes differ in ${describe()}`);
    for (const w of wanted) {
      const match = got.find((g) => g.code === w.code && g.text === w.text && (w.line === undefined || g.line === w.line));
      assert.ok(match, `${name}: expected ${w.code} on ${JSON.stringify(w.text)}${w.line ? ` (line ${w.line})` : ''}; ${describe()}`);
    }
  }
});

test('every finding says how to fix it and unknown names come with a suggestion', async () => {
  const registry = await loadRegistry();
  const files = collectTaskFiles([dir]);
  const results = lintTaskSet(files.map((f) => ({ uri: f, text: readFileSync(f, 'utf8') })), registry);
  const diagnostics = results.flatMap((r) => r.diagnostics);
  const withCode = (code: string) => diagnostics.filter((d) => d.code === code);
  for (const code of ['unknown-key', 'unknown-namespace', 'unknown-predicate', 'unknown-tool', 'invalid-value'] as const) {
    const suggested = withCode(code).filter((d) => /did you mean `[^`]+`\?/.test(d.message));
    assert.ok(suggested.length > 0, `${code} suggests a name`);
    assert.ok(suggested.every((d) => d.fixes?.length), `${code} with a suggestion offers it as a quick fix`);
  }
  for (const code of ['missing-frame-condition', 'max-steps-too-low', 'duplicate-tool', 'tool-not-available', 'double-negation', 'predicate-namespace-not-in-task'] as const) {
    assert.ok(withCode(code).every((d) => d.fixes?.length), `${code} offers a quick fix`);
  }
  for (const d of diagnostics) assert.ok(d.message.length > 20, `${d.code}: "${d.message}" says what to do`);
});

test('the frame quick fix adds a frame for the namespaces the solution writes, and the finding goes', async () => {
  const registry = await loadRegistry();
  const file = join(dir, 'missing-frame-condition.json');
  const text = readFileSync(file, 'utf8');
  const [finding] = lintTask(file, text, registry).diagnostics.filter((d) => d.code === 'missing-frame-condition');
  const edit = finding?.fixes?.[0]?.edits[0];
  assert.ok(edit, 'a quick fix');
  const fixed = text.slice(0, edit.offset) + edit.newText + text.slice(edit.offset + edit.length);
  assert.deepEqual(JSON.parse(fixed).success_predicate.all.at(-1), { 'filesystem.matchesReference': { pointers: [''] } });
  assert.deepEqual(lintTask(file, fixed, registry).diagnostics.map((d) => d.code), []);
});
