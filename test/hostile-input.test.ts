/**
 * Hostile input is normal input: each case ends in a precise message (a lint finding with its range, or an
 * error with exit code 2), no stack trace, in bounded time and memory. The CLI is run in-process (runCli).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../server/src/cli/main.ts';
import { generateVariants } from '../server/src/generator/generate.ts';
import { MAX_GRAMMAR_DEPTH } from '../server/src/generator/grammar.ts';
import { MAX_LIST_LENGTH, MAX_VARIANTS, TemplateSchema } from '../server/src/generator/model.ts';
import { loadRegistry } from '../server/src/mcp/registry.ts';
import { packageRoot } from '../server/src/paths.ts';
import { MAX_JSON_DEPTH } from '../server/src/tasks/document.ts';
import { startServer } from '../server/src/runner/launch.ts';
import { seedNamespace, snapshotNamespace } from '../server/src/runner/state.ts';

const fixture = join(packageRoot(), 'test', 'fixtures', 'tasks', 'travel', 'travel-cheapest-flight-001.json');
const templateFile = join(packageRoot(), 'templates', 'travel', 'cheapest-flight.template.json');

/** The CLI in-process; a file argument ending in .json is taken relative to `cwd` (as a shell would). */
async function cli(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const absolute = args.map((a) => (a.endsWith('.json') && !a.startsWith('/') ? join(cwd, a) : a));
  const code = await runCli(absolute, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), cwd });
  return { code, stdout, stderr };
}

function folder(files: Record<string, string | Buffer>): string {
  const dir = mkdtempSync(join(tmpdir(), 'mcpbench-hostile-'));
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  return dir;
}

const noStack = (text: string) => assert.doesNotMatch(text, /\n\s+at |internal error|RangeError|Maximum call stack/);

test('10,000-deep nesting: one json-syntax finding at the bracket past the limit for lint, a clean error for hash, refused by run and check', { timeout: 120_000 }, async () => {
  const deep = `{"id":"x","goal":${'['.repeat(10_000)}${']'.repeat(10_000)}}`;
  const dir = folder({ 'deep.json': deep });
  try {
    const lint = await cli(['lint', 'deep.json'], dir);
    assert.equal(lint.code, 1);
    const column = deep.indexOf('[') + MAX_JSON_DEPTH; // the first bracket past the limit (the object is level 1)
    assert.match(lint.stdout, new RegExp(`deep\\.json:1:${column} error json-syntax nesting deeper than ${MAX_JSON_DEPTH} levels`));
    const hash = await cli(['hash', 'deep.json'], dir);
    assert.equal(hash.code, 2);
    assert.match(hash.stderr, /deep\.json:1:\d+ cannot hash: nesting deeper than 64 levels/);
    for (const command of ['run', 'check']) {
      const refused = await cli([command, 'deep.json', '--sandbox', 'process', '--reporter', 'none', '--out', join(dir, 'runs')], dir);
      assert.equal(refused.code, 1, command);
      assert.match(refused.stderr, /nothing was run:\n.*deep\.json:1:\d+ error json-syntax nesting deeper than 64 levels/);
      noStack(refused.stderr);
    }
    for (const out of [lint.stdout, lint.stderr, hash.stderr]) noStack(out);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a byte-order mark is accepted; a Latin-1 file is refused with the offset of its first bad byte', async () => {
  const text = readFileSync(fixture, 'utf8');
  const latin1 = Buffer.from(text.replace('"goal": "', '"goal": "café '), 'latin1');
  const offset = latin1.indexOf(0xe9);
  const dir = folder({ 'bom.json': Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]), 'latin1.json': latin1 });
  try {
    const bom = await cli(['lint', 'bom.json'], dir);
    assert.equal(bom.code, 0, bom.stdout);
    const plain = await cli(['hash', fixture], dir);
    const withBom = await cli(['hash', 'bom.json'], dir);
    assert.equal(withBom.stdout.split(' ')[0], plain.stdout.split(' ')[0], 'the mark does not change the hash');
    for (const command of ['lint', 'hash']) {
      const bad = await cli([command, 'latin1.json'], dir);
      assert.equal(bad.code, 2, command);
      assert.match(bad.stderr, new RegExp(`latin1\\.json:\\d+: not UTF-8: byte 0xe9 at byte offset ${offset} is not valid UTF-8`));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('template productions 10,000 deep are refused at the reference past the depth limit; generate makes nothing', async () => {
  const template = JSON.parse(readFileSync(templateFile, 'utf8'));
  const productions: Record<string, string[]> = {};
  for (let i = 0; i < 10_000; i++) productions[`p${i}`] = [i < 9_999 ? `step <p${i + 1}>` : 'the end'];
  template.grammar = { start: 'p0', productions };
  const dir = folder({ 'deep.template.json': JSON.stringify(template) });
  try {
    const lint = await cli(['lint', 'deep.template.json'], dir);
    assert.equal(lint.code, 1);
    assert.match(lint.stdout, new RegExp(`error template-grammar-cycle <p${MAX_GRAMMAR_DEPTH}> is ${MAX_GRAMMAR_DEPTH} productions deep`));
    const generate = await cli(['generate', 'deep.template.json', '--out', join(dir, 'batches')], dir);
    assert.equal(generate.code, 1);
    assert.match(generate.stderr, /the template has errors; nothing was generated/);
    noStack(lint.stdout + generate.stderr);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a list length of 2^53 and --count 1000000000 are refused, in the schema and at run time', async () => {
  const template = JSON.parse(readFileSync(templateFile, 'utf8'));
  const list = Object.values(template.parameters as Record<string, { list?: { length: unknown } }>).find((p) => p.list)!;
  list.list!.length = 2 ** 53;
  const dir = folder({ 'huge.template.json': JSON.stringify(template) });
  try {
    const lint = await cli(['lint', 'huge.template.json'], dir);
    assert.equal(lint.code, 1);
    assert.match(lint.stdout, new RegExp(`huge\\.template\\.json:\\d+:\\d+ error invalid-value \`parameters\\.flights\\.list\\.length\` must be <= ${MAX_LIST_LENGTH}`));
    assert.equal(TemplateSchema.safeParse(template).success, false, 'the schema bounds it');
    // At run time too, for a template that never went through the schema.
    const registry = await loadRegistry();
    assert.throws(() => generateVariants(template, { count: 1, seed: 1, registry, lint: false }), new RegExp(`length ${2 ** 53} is over ${MAX_LIST_LENGTH}`));
    const count = await cli(['generate', templateFile, '--count', '1000000000', '--out', join(dir, 'batches')], dir);
    assert.equal(count.code, 2);
    assert.match(count.stderr, new RegExp(`--count.*at most ${MAX_VARIANTS}`));
    const valid = JSON.parse(readFileSync(templateFile, 'utf8'));
    assert.throws(() => generateVariants(valid, { count: 1e9, seed: 1, registry }), /at most 100000 variants/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('git paths that leave the working tree or touch .git/ are lint errors on the key or value that names them', async () => {
  const task = {
    id: 'git-hostile-paths',
    server: 'git',
    category: 'single-tool',
    difficulty: 'easy',
    max_steps: 3,
    goal: 'Commit the staged change to notes.txt.',
    initial_state: {
      git: {
        commits: [{ id: 'c1', message: 'init', files: { 'notes.txt': 'a', '.git/hooks/pre-commit': '#!/bin/sh\nenv > /tmp/leak\n', '../outside.txt': 'x', 'docs/../../up.txt': 'y' } }],
        staged: { 'notes.txt': 'b', '.GIT/config': 'z' },
        working_tree: { '/etc/passwd': 'w' },
      },
    },
    available_tools: ['git.git_commit'],
    success_predicate: { 'git.fileAtRef': { ref: 'HEAD', path: '../notes.txt', contains: 'b' } },
    reference_solutions: [[{ tool: 'git.git_commit', arguments: { message: 'notes' } }]],
    counterexamples: [[]],
  };
  const dir = folder({ 'git.json': JSON.stringify(task, null, 2) });
  try {
    const lint = await cli(['lint', 'git.json', '--format', 'json'], dir);
    assert.equal(lint.code, 1);
    const findings = (JSON.parse(lint.stdout) as { files: { diagnostics: { code: string; message: string }[] }[] }).files[0]!.diagnostics;
    const paths = findings.filter((f) => /a path inside the working tree/.test(f.message)).map((f) => /(?:key "([^"]+)"|not the string "([^"]+)")/.exec(f.message)!.slice(1).find(Boolean));
    assert.deepEqual(paths.sort(), ['.GIT/config', '.git/hooks/pre-commit', '../notes.txt', '../outside.txt', '/etc/passwd', 'docs/../../up.txt'].sort());
    assert.ok(!/notes\.txt"/.test(findings.map((f) => f.message).join('\n').replace(/\.\.\/notes\.txt/g, '')), 'notes.txt itself is fine');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('COPY ... TO PROGRAM wedges PGlite: the end state is read again from the data directory, never as an empty database', { timeout: 120_000 }, async () => {
  const registry = await loadRegistry();
  const info = registry.get('postgres')!;
  const sandbox = mkdtempSync(join(tmpdir(), 'mcpbench-pg-wedge-'));
  try {
    await seedNamespace(info, { tables: { t: { columns: [{ name: 'id', type: 'integer' }], rows: [{ id: 1 }] } } }, sandbox);
    const server = await startServer(info, sandbox, { startTimeoutMs: 60_000, callTimeoutMs: 60_000 });
    try {
      assert.equal((await server.callTool('execute', { sql: 'INSERT INTO t VALUES (2)' })).isError, undefined);
      await server.callTool('execute', { sql: "COPY (SELECT 1) TO PROGRAM 'cat'" });
    } finally {
      await server.close();
    }
    const state = (await snapshotNamespace(info, sandbox)) as { tables: Record<string, { rows: unknown[] }> };
    assert.deepEqual(state.tables.t?.rows, [{ id: 1 }, { id: 2 }]);
  } finally {
    rmSync(sandbox, { recursive: true, force: true });
  }
});
