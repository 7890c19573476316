/**
 * The .vsix: `vsce ls` (what `npm run package` would put in it) holds every bundle esbuild wrote to dist/, the
 * schemas, the webview pages, and the packages the CLI loads from node_modules at run time. A bundle missing
 * from .vscodeignore's allow-list would make the installed extension fail only on a user's machine.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..');

test('the packaged extension holds every dist bundle, the schemas, the webviews and the runtime packages', { timeout: 180_000 }, () => {
  const result = spawnSync(process.execPath, [join(root, 'node_modules', '@vscode', 'vsce', 'vsce'), 'ls'], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  assert.equal(result.status, 0, result.stderr);
  const packaged = new Set(result.stdout.split('\n').map((line) => line.trim()).filter(Boolean));
  const expected = [
    ...readdirSync(join(root, 'dist')).filter((f) => f.endsWith('.js')).map((f) => `dist/${f}`),
    ...readdirSync(join(root, 'schemas', 'servers')).map((f) => `schemas/servers/${f}`),
    'schemas/task.schema.json',
    'schemas/template.schema.json',
    ...['webview', 'language', 'snippets', 'walkthrough'].flatMap((dir) => readdirSync(join(root, 'client', dir)).map((f) => `client/${dir}/${f}`)),
    'docs/rules.md',
    'node_modules/@modelcontextprotocol/server-filesystem/package.json',
    'node_modules/@modelcontextprotocol/server-memory/package.json',
    'node_modules/@electric-sql/pglite/package.json',
    'node_modules/d3/dist/d3.min.js',
    'node_modules/@observablehq/plot/dist/plot.umd.min.js',
  ];
  const missing = expected.filter((file) => !packaged.has(file));
  assert.deepEqual(missing, [], `not in the .vsix (add them to .vscodeignore's allow-list): ${missing.join(', ')}`);
  assert.ok(![...packaged].some((f) => f.startsWith('tasks/') || f.startsWith('test/') || f.startsWith('server/src/')), 'sources and tests stay out of the .vsix');
});
