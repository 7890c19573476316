// Bundles the extension client, the language server and the CLI (which carries the MCP servers and the
// engine) into dist/. `node esbuild.mjs --watch` rebuilds on change.
import * as esbuild from 'esbuild';
import { existsSync } from 'node:fs';

const entries = [
  { in: 'server/src/cli/index.ts', out: 'cli' },
  // What every episode starts per namespace: the MCP servers without the rest of the CLI (see serve.ts).
  { in: 'server/src/cli/serve-index.ts', out: 'serve' },
  { in: 'server/src/lsp/index.ts', out: 'server' },
  { in: 'client/src/extension.ts', out: 'client' },
].filter((entry) => existsSync(entry.in));

const options = {
  entryPoints: entries,
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  sourcemap: true,
  // PGlite loads its wasm and data files from its own package folder, so it stays in node_modules.
  external: ['vscode', '@electric-sql/pglite'],
  logLevel: 'warning',
  // jsonc-parser's UMD build hides its requires from the bundler; its ESM build bundles cleanly.
  mainFields: ['module', 'main'],
  // An ESM package bundled into CommonJS that finds itself by import.meta.url (the egress proxy's `proxy`
  // reads its package.json for its Via header) gets the bundle's own URL.
  banner: { js: "const __import_meta_url = require('node:url').pathToFileURL(__filename).href;" },
  define: { 'import.meta.url': '__import_meta_url' },
  // Official MCP servers run as their own processes from node_modules; they are not bundled.
};

if (process.argv.includes('--watch')) {
  const context = await esbuild.context(options);
  await context.watch();
} else {
  await esbuild.build(options);
}
