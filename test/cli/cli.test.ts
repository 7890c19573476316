/**
 * The built `mcpbench` CLI (dist/cli.js) as a user runs it: exit codes, the `file:line:col severity code
 * message` text form, JSON, --max-warnings, and `hash` (SARIF: sarif.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');
const cli = join(root, 'dist', 'cli.js');
const broken = join(__dirname, '..', 'fixtures', 'broken');

function run(args: string[], cwd = root) {
  const result = spawnSync(process.execPath, [cli, ...args], { cwd, encoding: 'utf8' });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

function scratch(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'mcpbench-cli-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

test('lint exits 0 on a clean task, 1 on findings, 2 on a missing path or a bad option', () => {
  const dir = scratch({});
  cpSync(join(broken, 'valid.json'), join(dir, 'valid.json'));
  assert.equal(run(['lint', dir]).code, 0);
  assert.match(run(['lint', dir]).stdout, /1 file checked: no problems/);
  assert.equal(run(['lint', join(broken, 'unknown-tool.json')]).code, 1);
  const missing = run(['lint', join(dir, 'nope')]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /nope: no such file or folder/);
  assert.equal(run(['lint', '--format', 'xml', dir]).code, 2);
});

test('text output is file:line:col severity code message', () => {
  const { stdout } = run(['lint', 'test/fixtures/broken/unknown-tool.json']);
  assert.match(stdout, /^test\/fixtures\/broken\/unknown-tool\.json:9:47 error unknown-tool `filesystem` has no tool `list_dir`: did you mean `filesystem\.list_directory`\?$/m);
});

test('json output carries 1-based positions, offsets and fixes', () => {
  const { stdout, code } = run(['lint', '--format', 'json', 'test/fixtures/broken/max-steps-too-low.json']);
  assert.equal(code, 1);
  const report = JSON.parse(stdout);
  const [d] = report.files[0].diagnostics;
  assert.equal(d.code, 'max-steps-too-low');
  assert.deepEqual([d.line, d.column, d.endLine, d.endColumn], [6, 16, 6, 17]);
  assert.deepEqual(d.fixes[0].edits[0].newText, '2');
  assert.equal(report.totals.errors, 1);
});

test('--max-warnings turns warnings into a failing exit code', () => {
  const file = 'test/fixtures/broken/unused-namespace.json'; // one warning, no error
  assert.equal(run(['lint', file]).code, 0);
  assert.equal(run(['lint', '--max-warnings', '1', file]).code, 0);
  const strict = run(['lint', '--max-warnings', '0', file]);
  assert.equal(strict.code, 1);
  assert.match(strict.stderr, /too many warnings: 1/);
});

test('hash prints the same SHA-256 for reordered, reformatted tasks and refuses broken JSON', () => {
  const dir = scratch({
    'a.json': '{"id":"t","goal":"x","max_steps":2}',
    'b.json': '{\n  "max_steps": 2,\n  "goal": "x",\n  "id": "t"\n}\n',
    'c.json': '{"id":"t","goal":"x","max_steps":3}',
    'broken.json': '{"id": "t",\n  "goal": }',
  });
  const hashes = ['a', 'b', 'c'].map((n) => run(['hash', join(dir, `${n}.json`)]).stdout.split(' ')[0]);
  assert.match(hashes[0]!, /^[0-9a-f]{64}$/);
  assert.equal(hashes[0], hashes[1]);
  assert.notEqual(hashes[0], hashes[2]);
  const bad = run(['hash', join(dir, 'broken.json')]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /broken\.json:2:11 cannot hash: .*a value was expected/);
});

test('lint takes template grammars too: a folder of templates, findings on the placeholder', () => {
  const dir = scratch({});
  cpSync(join(root, 'templates', 'filesystem', 'move-file.template.json'), join(dir, 'move-file.template.json'));
  const clean = run(['lint', dir]);
  assert.equal(clean.code, 0, clean.stdout + clean.stderr);
  // No error or warning; the template has no frame yet (information `missing-frame-condition`, as the dev set).
  assert.match(clean.stdout, /1 file checked: 0 errors, 0 warnings/);
  const text = JSON.stringify(JSON.parse(readFileSync(join(dir, 'move-file.template.json'), 'utf8')), null, 2).replace('"{{folder}}/{{file}}"', '"{{folder}}/{{fiel}}"');
  writeFileSync(join(dir, 'move-file.template.json'), text);
  const broken = run(['lint', dir]);
  assert.equal(broken.code, 1);
  const line = text.split('\n').findIndex((l) => l.includes('{{fiel}}')) + 1;
  assert.match(broken.stdout, new RegExp(`move-file\\.template\\.json:${line}:\\d+ error template-unknown-parameter .*fiel`));
});

test('stats prints the composition of a set: namespace x category x difficulty, cross-server, information, distractors', () => {
  const fixtures = join(root, 'test', 'fixtures', 'tasks');
  const json = run(['stats', fixtures, '--format', 'json']);
  assert.equal(json.code, 0, json.stderr);
  const c = JSON.parse(json.stdout);
  const files = readdirSync(fixtures, { recursive: true }).filter((f) => String(f).endsWith('.json'));
  assert.equal(c.total, files.length);
  assert.equal(c.cells.github.recovery.medium, 1); // github-draft-squash-merge-001
  assert.equal(c.crossServer, 1); // github-chat-release-announce-001
  assert.ok(c.information >= 1); // github-open-bugs-count-001 checks the answer
  assert.equal(c.byCategory['single-tool'] + c.byCategory.composition + c.byCategory.recovery, c.total);
  const markdown = run(['stats', fixtures, '--format', 'markdown', '--title', 'Fixtures']).stdout;
  assert.match(markdown, /^# Fixtures\n/);
  assert.match(markdown, /\| `github` \| 1 \| 0 \| 0 \| 0 \| 2 \| 0 \| 0 \| 1 \| 0 \| 4 \|/);
});

test('new writes a task skeleton that lints with a finding for each thing left to write, and never overwrites', () => {
  const dir = scratch({});
  const created = run(['new', 'fs-archive-invoices-001', '--server', 'filesystem', '--category', 'composition', '--difficulty', 'medium'], dir);
  assert.equal(created.code, 0, created.stderr);
  assert.equal(created.stdout.trim(), join('tasks', 'filesystem', 'fs-archive-invoices-001.json'));
  const file = join(dir, 'tasks', 'filesystem', 'fs-archive-invoices-001.json');
  const task = JSON.parse(readFileSync(file, 'utf8'));
  assert.deepEqual([task.id, task.server, task.category, task.difficulty], ['fs-archive-invoices-001', 'filesystem', 'composition', 'medium']);
  assert.ok(task.available_tools.includes('filesystem.move_file'));
  const lint = run(['lint', '--format', 'json', file], dir);
  assert.equal(lint.code, 1, 'a skeleton is not a finished task');
  const codes = JSON.parse(lint.stdout).files[0].diagnostics.map((d: { code: string; message: string }) => `${d.code}: ${d.message}`);
  assert.ok(codes.some((c: string) => /^todo: left to do: what the agent must do/.test(c)), codes.join('\n'));
  assert.ok(codes.some((c: string) => c.startsWith('empty-combinator')), codes.join('\n'));

  const again = run(['new', 'fs-archive-invoices-001', '--server', 'filesystem'], dir);
  assert.equal(again.code, 2);
  assert.match(again.stderr, /exists already/);
  assert.match(run(['new', 'x-001', '--server', 'filesystm'], dir).stderr, /unknown namespace `filesystm`/);
  assert.equal(run(['new', 'Bad Id', '--server', 'filesystem'], dir).code, 2);
  const cross = run(['new', 'gh-chat-001', '--server', 'github,chat', '--out', 'x.task.json'], dir);
  assert.equal(cross.code, 0, cross.stderr);
  assert.deepEqual(JSON.parse(readFileSync(join(dir, 'x.task.json'), 'utf8')).server, ['github', 'chat']);
});

test('a sandbox backend asked for by name that does not work here is refused before anything starts, with the fix', () => {
  // A PATH with Node and nothing else: no bubblewrap, no docker.
  const bin = scratch({});
  symlinkSync(process.execPath, join(bin, 'node'));
  const result = spawnSync(process.execPath, [cli, 'run', join(root, 'test', 'fixtures', 'tasks', 'filesystem', 'fs-move-report-001.json'), '--sandbox', 'bwrap', '--reporter', 'none'], {
    cwd: scratch({}),
    encoding: 'utf8',
    env: { ...process.env, PATH: bin },
  });
  assert.equal(result.status, 2, result.stderr);
  assert.match(result.stderr, /sandbox backend `bwrap` does not work here: not installed \(apt-get install bubblewrap\)/);
  assert.match(result.stderr, /mcpbench doctor/);
  assert.doesNotMatch(result.stderr, /ENOENT|at .*\.js/);
});
