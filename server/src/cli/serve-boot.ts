/**
 * dist/serve-boot.js: what an episode starts per simulated or builtin namespace. It runs dist/serve.js (same
 * arguments) from V8's code cache, `dist/serve.js.v8cache`, written by `npm run build` (esbuild.mjs): the
 * bundle's functions are deserialised instead of parsed and compiled, ~40 ms of a ~170 ms start. This is
 * what Node 22's `module.enableCompileCache()` does; Node 20, which we support, has only `vm.Script`'s
 * `cachedData`.
 *
 * A cache V8 rejects (another Node version, other flags, a rebuilt bundle) costs nothing but the saving: the
 * bundle is compiled as without it. The cache is only ever written at build time, outside any sandbox, when
 * MCPBENCH_WRITE_CODE_CACHE names the file (a server's allow-listed environment never carries it).
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire, Module } from 'node:module';
import { dirname, join } from 'node:path';
import { Script } from 'node:vm';

type CommonJsWrapper = (exports: unknown, require: NodeJS.Require, module: Module, filename: string, dirname: string) => void;

const file = join(__dirname, 'serve.js');
const cacheFile = `${file}.v8cache`;

function readCache(): Buffer | undefined {
  try {
    return readFileSync(cacheFile);
  } catch {
    return undefined;
  }
}

// The shebang line becomes a comment, so line numbers (and the source map) stay those of serve.js.
const source = readFileSync(file, 'utf8').replace(/^#!/, '//');
const script = new Script(Module.wrap(source), { filename: file, cachedData: readCache() });

const writeTo = process.env.MCPBENCH_WRITE_CODE_CACHE;
if (writeTo) {
  // At exit, so every function the start compiled is in the cache; written atomically (temporary + rename).
  process.on('exit', () => {
    writeFileSync(`${writeTo}.tmp`, script.createCachedData());
    renameSync(`${writeTo}.tmp`, writeTo);
  });
}

const loaded = new Module(file);
loaded.filename = file;
const run: unknown = script.runInThisContext();
if (typeof run !== 'function') throw new Error(`${file} did not compile to a CommonJS module`);
(run as CommonJsWrapper).call(loaded.exports, loaded.exports, createRequire(file), loaded, file, dirname(file));
