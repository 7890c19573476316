// Bundles the extension client, the language server and the CLI (which carries the MCP servers and the
// engine) into dist/. `node esbuild.mjs --watch` rebuilds on change.
import * as esbuild from 'esbuild';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const entries = [
  { in: 'server/src/cli/index.ts', out: 'cli' },
  // What every episode starts per namespace: the MCP servers without the rest of the CLI (see serve.ts).
  { in: 'server/src/cli/serve-index.ts', out: 'serve' },
  // ... loaded through its V8 code cache (see serve-boot.ts).
  { in: 'server/src/cli/serve-boot.ts', out: 'serve-boot' },
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

/**
 * The official MCP servers (namespaces whose schemas/servers/<ns>.json says `kind: npm`), each bundled from
 * its pinned package in node_modules into one ES module, dist/npm/<ns>.mjs: the same code, but one file to
 * load instead of a few hundred (the official filesystem server starts in ~110 ms instead of ~200).
 * The runner falls back to the package's own entry when a bundle is missing.
 */
function officialBundles() {
  const bundles = [];
  for (const name of readdirSync('schemas/servers').filter((n) => n.endsWith('.json'))) {
    const implementation = JSON.parse(readFileSync(join('schemas/servers', name), 'utf8')).implementation;
    if (implementation?.kind !== 'npm' || !implementation.package) continue;
    const folder = join('node_modules', implementation.package);
    if (!existsSync(join(folder, 'package.json'))) continue;
    const { bin } = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'));
    const entry = typeof bin === 'string' ? bin : Object.values(bin ?? {})[0];
    if (typeof entry === 'string') bundles.push({ in: join(folder, entry), out: name.replace(/\.json$/, '') });
  }
  return bundles;
}

const officialOptions = {
  entryPoints: officialBundles(),
  outdir: 'dist/npm',
  outExtension: { '.js': '.mjs' },
  bundle: true,
  platform: 'node',
  // ES modules, as published: they use top-level await. CommonJS dependencies inside get a require.
  format: 'esm',
  target: 'node20',
  banner: { js: "import { createRequire as __mcpbenchCreateRequire } from 'node:module'; const require = __mcpbenchCreateRequire(import.meta.url);" },
  logLevel: 'warning',
};

/**
 * dist/serve.js.v8cache: V8's code cache of dist/serve.js, made by starting one simulated namespace through
 * dist/serve-boot.js and answering initialize and tools/list, so the functions every start runs are in it.
 * Made with the flags the runner starts servers with (V8 rejects a cache made under other flags, or by
 * another Node version: then the bundle is compiled as before). Loading it saves ~40 ms per server start.
 */
function writeCodeCache() {
  const cache = join('dist', 'serve.js.v8cache');
  rmSync(cache, { force: true });
  const dir = mkdtempSync(join(tmpdir(), 'mcpbench-code-cache-'));
  try {
    const request = (id, method, params) => JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n';
    const input =
      request(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'build', version: '0' } }) +
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n' +
      request(2, 'tools/list', {});
    // SERVE_NODE_FLAGS in server/src/runner/launch.ts: the cache is only accepted under the same flags.
    const result = spawnSync(process.execPath, ['--liftoff-only', join('dist', 'serve-boot.js'), 'calendar', '--dir', dir], {
      input,
      env: { ...process.env, MCPBENCH_WRITE_CODE_CACHE: cache },
      timeout: 60_000,
    });
    if (result.status !== 0 || !existsSync(cache)) console.warn(`esbuild.mjs: no code cache for dist/serve.js (exit ${result.status}): ${String(result.stderr).trim()}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Files bundled packages read beside themselves at run time (found by import.meta.url, which is the bundle's):
 * the OpenAPI meta-schemas `mcpbench api`'s route builder checks schemas/openapi.yaml against.
 */
function copyBundledAssets() {
  cpSync(join('node_modules', '@platformatic', 'openapi-schema-validator', 'schemas'), join('dist', 'schemas'), { recursive: true });
}

if (process.argv.includes('--watch')) {
  const context = await esbuild.context(options);
  await context.watch();
} else {
  await esbuild.build(options);
  await esbuild.build(officialOptions);
  copyBundledAssets();
  writeCodeCache();
}
