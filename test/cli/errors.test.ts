/**
 * How `mcpbench` ends on an error: the exit status from the error's class, `mcpbench: message` on stderr, and
 * with `--format json` the error as JSON on stdout carrying its code (in-process, through runCli).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../server/src/cli/main.ts';

const broken = join(import.meta.dirname, '..', 'fixtures', 'broken');

async function cli(argv: string[], cwd = mkdtempSync(join(tmpdir(), 'mcpbench-errors-'))) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), cwd });
  return { code, stdout, stderr };
}

test('lint --format json on a missing path: exit 2, the error as JSON with its code, the message on stderr', async () => {
  const missing = join(tmpdir(), 'mcpbench-no-such-folder', 'nope');
  const json = await cli(['lint', '--format', 'json', missing]);
  assert.equal(json.code, 2);
  assert.match(json.stderr, /^mcpbench: .*nope: no such file or folder\n$/);
  const { error } = JSON.parse(json.stdout);
  assert.equal(error.code, 'path');
  assert.equal(error.exit_status, 2);
  assert.match(error.message, /nope: no such file or folder/);
  // Without --format json, stdout stays empty.
  const text = await cli(['lint', missing]);
  assert.equal(text.code, 2);
  assert.equal(text.stdout, '');
});

test('check --format json on a task that does not load: exit 1, code task-load, the findings with their places', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcpbench-errors-'));
  writeFileSync(join(dir, 'bad.json'), '{"id": "t",\n  "goal": }');
  const result = await cli(['check', '--format', 'json', '--reporter', 'none', '--sandbox', 'process', join(dir, 'bad.json')], dir);
  assert.equal(result.code, 1, result.stderr);
  assert.match(result.stderr, /nothing was run:\n.*bad\.json:2:\d+ error json-syntax/);
  const { error } = JSON.parse(result.stdout.slice(result.stdout.indexOf('{')));
  assert.equal(error.code, 'task-load');
  assert.equal(error.exit_status, 1);
  assert.equal(error.file, join(dir, 'bad.json'));
  assert.equal(error.line, 2);
  assert.equal(error.diagnostics[0].code, 'json-syntax');
});

test('a usage error of the command line itself carries code usage; a findings error of a command its own code', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcpbench-errors-'));
  const usage = await cli(['run', '--perturb', 'wild', '--reporter', 'none', '--sandbox', 'process', join(broken, 'valid.json')], dir);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /^mcpbench: --perturb wild: use none, light/m);
  writeFileSync(join(dir, 'not-a-task.json'), '{"id": 3}');
  const stats = await cli(['stats', '--format', 'json', join(dir, 'not-a-task.json')], dir);
  assert.equal(stats.code, 1);
  assert.equal(JSON.parse(stats.stdout).error.code, 'invalid-task');
});
