// Bundles the extension tests (client/test/) for VS Code's extension host: out/test/index.js (exports `run()`,
// the extensionTestsPath) and one out/test/suite/<name>.test.js per suite file, which index.js hands to mocha.
// `vscode` comes from the extension host and mocha from node_modules (index.js and the suite files must share
// one mocha instance, whose `describe`/`it` the suite files import).
import * as esbuild from 'esbuild';
import { readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = join(root, 'out', 'test');
const suiteDir = join(root, 'client', 'test', 'suite');

const suites = readdirSync(suiteDir)
  .filter((name) => name.endsWith('.test.ts'))
  .map((name) => ({ in: join(suiteDir, name), out: join('suite', name.replace(/\.ts$/, '')) }));
if (!suites.length) throw new Error(`no *.test.ts files in ${suiteDir}`);

rmSync(outdir, { recursive: true, force: true });
await esbuild.build({
  entryPoints: [{ in: join(root, 'client', 'test', 'index.ts'), out: 'index' }, ...suites],
  outdir,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  sourcemap: 'inline',
  external: ['vscode', 'mocha'],
  // Same reason as esbuild.mjs: jsonc-parser's UMD build hides its requires from the bundler.
  mainFields: ['module', 'main'],
  logLevel: 'warning',
});
console.log(`extension tests: ${suites.length} suite files bundled into ${outdir}`);
