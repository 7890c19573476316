// Runs the extension tests (client/test/, bundled to out/test/) inside a real VS Code: code-server's workbench in
// headless Chromium, the extension in its remote extension host. The way, and why, is ../shared/E2E-VSCODE.md.
//
//   node test/e2e/run-code-server.mjs [--grep <text>] [--timeout <seconds>] [--keep] [--no-build] [--verbose]
//
// Installs code-server and Node 24 into a cache folder outside the repository the first time (see
// install-code-server.mjs), builds the extension and the tests, opens a scratch copy of the fixture workspace
// with the extension under development, forwards the extension host's log, takes screenshots into
// test/e2e/screenshots/ when the suite asks (a `MCPBENCH_SCREENSHOT <name>` line) and on failure, does what a user
// would do in the workbench when the suite asks (`MCPBENCH_UI click <selector>`: a click in a webview;
// `MCPBENCH_UI answer <text>`: type into the open input box and press Enter; `MCPBENCH_UI read <selector> <file>`:
// write the text a webview shows in the element into a file the suite reads; arguments URI-encoded), and exits
// with the suite's exit code. It ends every process it started, by id.
//
// Environment: CHROMIUM (default /usr/bin/chromium), MCPBENCH_E2E_CACHE (the install folder).
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureCodeServer } from './install-code-server.mjs';
import { createFixtureWorkspace, REPO_ROOT } from './workspace.mjs';

const SCREENSHOT_MARKER = /MCPBENCH_SCREENSHOT (\S+)/;
const UI_MARKER = /MCPBENCH_UI (click|answer|read) (\S+)(?: (\S+))?/;
// Workbench log lines that say nothing about the extension: the gallery and telemetry hosts cannot be reached
// here, and the chat and agent features have no account. --verbose shows them.
const NOISE = /marketplace|gallery|telemetry|update\.code\.visualstudio|vscode-unpkg|open-vsx|\[(ChatModelSelection|AgentHost[^\]]*|AccountPolicyGate)\]/i;
const SCREENSHOT_DIR = join(REPO_ROOT, 'test', 'e2e', 'screenshots');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
// Chromium's own services that would reach for the network or a GPU; none of them is needed to render a workbench.
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const { values: options } = parseArgs({
  options: {
    grep: { type: 'string' },
    timeout: { type: 'string', default: '900' },
    keep: { type: 'boolean', default: false },
    'no-build': { type: 'boolean', default: false },
    verbose: { type: 'boolean', default: false },
  },
});
const timeoutMs = Number(options.timeout) * 1000;
if (!(timeoutMs > 0)) throw new Error(`--timeout takes seconds, got ${options.timeout}`);

const started = Date.now();
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
const log = (line) => console.error(`[e2e ${elapsed()}] ${line}`);

/** Everything to undo, most recent first. */
const cleanups = [];
let page;
const pendingScreenshots = new Set();
/** Kept for a look when the run failed or timed out, removed otherwise. */
let keepScratch = options.keep;
let timedOut = false;
let scratchDir;

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function build() {
  for (const script of ['esbuild.mjs', 'scripts/build-extension-tests.mjs']) {
    const result = spawnSync(process.execPath, [script], { cwd: REPO_ROOT, stdio: 'inherit' });
    if (result.status !== 0) throw new Error(`node ${script} failed (${result.signal ?? result.status})`);
  }
  for (const file of ['dist/client.js', 'dist/server.js', 'dist/cli.js', 'out/test/index.js']) {
    if (!existsSync(join(REPO_ROOT, file))) throw new Error(`the build did not produce ${file}`);
  }
}

/** Parent → children, from /proc: what our processes started, so that we end exactly those. */
function childrenByParent() {
  const children = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // The command name in parentheses may hold spaces; the fields after its last ')' are fixed.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ppid = Number(fields[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
  }
  return children;
}

/** The processes under `pid`, each with its depth below it (1: a child). */
function descendantsOf(pid) {
  const children = childrenByParent();
  const found = [];
  const visit = (parent, depth) => {
    for (const child of children.get(parent) ?? []) {
      found.push({ pid: child, depth });
      visit(child, depth + 1);
    }
  };
  visit(pid, 1);
  return found;
}

function processesMentioning(text) {
  const found = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(text)) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

const alive = (pid) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
};

const signal = (pid, name) => {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
};

const gone = (pid) => !existsSync(`/proc/${pid}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitUntil(condition, ms) {
  const deadline = Date.now() + ms;
  while (!condition() && Date.now() < deadline) await sleep(50);
}

/**
 * Ends the processes this script started (code-server's tree, Chromium's tree, anything they spawned), by id,
 * deepest first and one level at a time: a process ended while its parent still runs is reaped by that parent.
 * Ending a parent first (as closing the browser does) hands its children to init, which here reaps late, so they
 * linger as zombies. TERM first, KILL for what ignores it.
 */
async function endDescendants() {
  const tree = descendantsOf(process.pid);
  // Chromium's crash handlers detach themselves (their parent is init), so they are found by the scratch folder
  // on their command line instead.
  const inTree = new Set(tree.map((p) => p.pid));
  const detached = scratchDir ? processesMentioning(scratchDir).filter((pid) => pid !== process.pid && !inTree.has(pid)) : [];
  const levels = [...new Set(tree.map((p) => p.depth))].sort((a, b) => b - a).map((depth) => tree.filter((p) => p.depth === depth).map((p) => p.pid));
  const stubborn = [];
  for (const pids of [detached, ...levels]) {
    for (const pid of pids) signal(pid, 'SIGTERM');
    await waitUntil(() => pids.every((pid) => !alive(pid)), 3000);
    for (const pid of pids.filter(alive)) {
      stubborn.push(pid);
      signal(pid, 'SIGKILL');
    }
    // Reaped, not only ended, before their parents go.
    await waitUntil(() => pids.every(gone), 1000);
  }
  if (stubborn.length) log(`killed ${stubborn.length} processes that ignored SIGTERM: ${stubborn.join(' ')}`);
  // The detached ones are init's children from the start; only ours are worth a word.
  const zombies = tree.map((p) => p.pid).filter((pid) => !gone(pid));
  if (zombies.length) log(`${zombies.length} ended processes not reaped yet (left to init): ${zombies.join(' ')}`);
}

async function cleanup() {
  // The processes first (see endDescendants), then what is left to close in-process.
  await endDescendants();
  for (const undo of cleanups.splice(0).reverse()) {
    try {
      await undo();
    } catch (error) {
      log(`cleanup: ${error.message}`);
    }
  }
  // Last: nothing is left running in it now.
  if (scratchDir && keepScratch) log(`scratch folder kept: ${scratchDir}`);
  else if (scratchDir) rmSync(scratchDir, { recursive: true, force: true });
}

function takeScreenshot(name) {
  if (!page) return Promise.resolve();
  const file = join(SCREENSHOT_DIR, `${name.replace(/[^\w.-]+/g, '-')}.png`);
  const shot = page
    .screenshot({ path: file, timeout: 15_000 })
    .then(() => log(`screenshot ${file}`))
    .catch((error) => log(`screenshot ${name} failed: ${error.message}`))
    .finally(() => pendingScreenshots.delete(shot));
  pendingScreenshots.add(shot);
  return shot;
}

/** Writes JSON so that a reader polling for the file never sees half of it. */
function writeWhole(file, value) {
  writeFileSync(`${file}.partial`, JSON.stringify(value));
  renameSync(`${file}.partial`, file);
}

/** The suite's UI requests, one after the other, in the order it asked. */
let uiQueue = Promise.resolve();

/**
 * Does what the suite asks a user to do. `click`: the element matching the selector in a webview (the frames of
 * webviews are nested in the workbench page; the first that has a match is used), waiting up to 20 s for it to
 * appear. `read`: looks at such an element as a person would and writes its text to `file` (JSON `{ text }`, or
 * `{ error }`). `answer`: fills the workbench's input box (showInputBox) once it is open, and presses Enter.
 */
async function uiAction(action, argument, file) {
  const deadline = Date.now() + 20_000;
  if (action === 'click' || action === 'read') {
    for (;;) {
      for (const frame of page.frames()) {
        if (frame === page.mainFrame()) continue;
        const handle = await frame.$(argument).catch(() => null);
        if (!handle) continue;
        if (action === 'read') {
          // What a person sees: the rendered text (hidden parts left out), into the file the suite waits for.
          const text = await handle.evaluate((node) => node.innerText);
          writeWhole(file, { text });
          log(`ui: read ${argument}`);
          return;
        }
        await handle.click({ timeout: 10_000 });
        log(`ui: clicked ${argument}`);
        return;
      }
      if (Date.now() > deadline) {
        const message = `no webview has an element matching ${argument}`;
        // The suite is waiting for the file: tell it why it will not have the text.
        if (action === 'read') writeWhole(file, { error: message });
        throw new Error(message);
      }
      await sleep(200);
    }
  }
  const input = page.locator('.quick-input-widget .quick-input-box input');
  await input.first().waitFor({ state: 'visible', timeout: 20_000 });
  await input.first().fill(argument);
  await input.first().press('Enter');
  log(`ui: answered the input box with ${JSON.stringify(argument)}`);
}

/** `codeAutomationLog(level, message)`: the workbench's log, the extension host's console among it. */
function onWorkbenchLog(level, message) {
  const text = Array.isArray(message) ? message.map(String).join(' ') : String(message);
  const marker = SCREENSHOT_MARKER.exec(text);
  if (marker) void takeScreenshot(marker[1]);
  const ui = UI_MARKER.exec(text);
  if (ui && page) {
    const [, action, encoded, second] = ui;
    uiQueue = uiQueue
      .then(() => uiAction(action, decodeURIComponent(encoded), second === undefined ? undefined : decodeURIComponent(second)))
      .catch((error) => log(`ui ${action} failed: ${error.message}`));
  }
  if (!options.verbose && NOISE.test(text)) return;
  if (!options.verbose && (level === 'trace' || level === 'debug')) return;
  for (const line of text.split('\n')) console.log(`  ${line}`);
}

async function main() {
  const installStarted = Date.now();
  const paths = await ensureCodeServer({ log });
  log(`code-server ready (${((Date.now() - installStarted) / 1000).toFixed(1)} s)`);

  if (!options['no-build']) {
    log('building the extension and the tests');
    build();
  }

  const scratch = mkdtempSync(join(tmpdir(), 'mcpbench-e2e-'));
  scratchDir = scratch;
  const dirs = Object.fromEntries(
    ['home', 'config', 'data', 'cache', 'state', 'user-data', 'extensions', 'chromium'].map((name) => {
      const dir = join(scratch, name);
      mkdirSync(dir, { recursive: true });
      return [name, dir];
    }),
  );
  const workspace = createFixtureWorkspace(scratch);
  // User settings of this throwaway profile: no welcome page, no tips over the views the screenshots show.
  mkdirSync(join(dirs['user-data'], 'User'), { recursive: true });
  writeFileSync(
    join(dirs['user-data'], 'User', 'settings.json'),
    JSON.stringify(
      {
        'workbench.startupEditor': 'none',
        'workbench.tips.enabled': false,
        'workbench.secondarySideBar.defaultVisibility': 'hidden',
        'chat.disableAIFeatures': true,
        'extensions.ignoreRecommendations': true,
        'telemetry.telemetryLevel': 'off',
      },
      null,
      2,
    ),
  );

  const port = await freePort();
  const host = `127.0.0.1:${port}`;
  const configFile = join(scratch, 'code-server.yaml');
  // An empty config is rejected, and without one code-server writes one with password auth into HOME.
  writeFileSync(configFile, `bind-addr: ${host}\nauth: none\ncert: false\n`);

  const serverLog = join(scratch, 'code-server.log');
  const serverLogStream = createWriteStream(serverLog);
  const env = {
    ...process.env,
    HOME: dirs.home,
    XDG_CONFIG_HOME: dirs.config,
    XDG_DATA_HOME: dirs.data,
    XDG_CACHE_HOME: dirs.cache,
    XDG_STATE_HOME: dirs.state,
    ...(options.grep ? { MCPBENCH_E2E_GREP: options.grep } : {}),
    // The suite may ask this runner to click and type in the workbench (see uiAction).
    MCPBENCH_E2E_UI: '1',
  };
  const server = spawn(
    paths.node,
    [
      paths.codeServerEntry,
      '--config', configFile,
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      '--user-data-dir', dirs['user-data'],
      '--extensions-dir', dirs.extensions,
      // Without it the workbench ignores the extension-test payload in the URL.
      '--vscode-option', 'enable-smoke-test-driver',
    ],
    { cwd: scratch, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  server.stdout.pipe(serverLogStream);
  server.stderr.pipe(serverLogStream);
  if (options.verbose) {
    server.stdout.on('data', (chunk) => process.stderr.write(`[code-server] ${chunk}`));
    server.stderr.on('data', (chunk) => process.stderr.write(`[code-server] ${chunk}`));
  }
  const serverExited = new Promise((resolve) => server.on('exit', (code, sig) => resolve(sig ?? code)));
  cleanups.push(async () => {
    // endDescendants has ended it already unless it outlived a KILL; then wait for Node to reap it.
    if (server.exitCode !== null || server.signalCode !== null) return;
    server.kill('SIGKILL');
    await Promise.race([serverExited, sleep(5000)]);
  });
  const serverTail = () => {
    try {
      return readFileSync(serverLog, 'utf8').split('\n').slice(-30).join('\n');
    } catch {
      return '';
    }
  };

  log(`starting code-server on ${host}`);
  const healthDeadline = Date.now() + 60_000;
  for (;;) {
    if (server.exitCode !== null || server.signalCode !== null) throw new Error(`code-server exited (${server.exitCode ?? server.signalCode}):\n${serverTail()}`);
    try {
      const response = await fetch(`http://${host}/healthz`);
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > healthDeadline) throw new Error(`code-server did not answer /healthz within 60 s:\n${serverTail()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  log('code-server answers /healthz');

  // playwright-core is a dev dependency of the repository (no browser download: Debian's Chromium is used).
  const { chromium } = await import('playwright-core');
  const context = await chromium.launchPersistentContext(dirs.chromium, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    // Its crash database and caches go to the scratch HOME too, not into the real one.
    env: { ...process.env, HOME: dirs.home, XDG_CONFIG_HOME: dirs.config, XDG_CACHE_HOME: dirs.cache, XDG_DATA_HOME: dirs.data },
    viewport: { width: 1440, height: 900 },
    // Playwright's own handlers would kill Chromium and exit on Ctrl-C before this script has ended code-server.
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
  });
  cleanups.push(() => Promise.race([context.close(), new Promise((r) => setTimeout(r, 10_000))]));
  page = context.pages()[0] ?? (await context.newPage());

  let reportExit;
  const suiteExit = new Promise((resolve) => (reportExit = resolve));
  let workbenchLogs = [];
  await page.exposeFunction('codeAutomationLog', onWorkbenchLog);
  await page.exposeFunction('codeAutomationExit', (code, logs) => {
    workbenchLogs = Array.isArray(logs) ? logs : [];
    reportExit(Number(code));
  });
  page.on('pageerror', (error) => log(`workbench page error: ${error.message}`));

  const remote = (path) => `vscode-remote://${host}${path}`;
  const payload = [
    ['extensionDevelopmentPath', remote(REPO_ROOT)],
    ['extensionTestsPath', remote(join(REPO_ROOT, 'out', 'test', 'index.js'))],
  ];
  const url = `http://${host}/?folder=${encodeURIComponent(remote(workspace))}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
  log(`opening the workbench (${workspace})`);
  const suiteStarted = Date.now();
  await page.goto(url, { waitUntil: 'domcontentloaded' });

  const outcome = await Promise.race([
    suiteExit.then((code) => ({ code })),
    serverExited.then((how) => ({ code: 1, reason: `code-server exited (${how}) before the tests finished:\n${serverTail()}` })),
  ]);
  // The timer is tearing everything down and will exit; what ended here is a consequence, not news.
  if (timedOut) return new Promise(() => {});
  const suiteSeconds = ((Date.now() - suiteStarted) / 1000).toFixed(1);
  if (outcome.reason) log(outcome.reason);
  log(`extension tests exited with ${outcome.code} after ${suiteSeconds} s in the workbench`);
  if (outcome.code !== 0) {
    keepScratch = true;
    await takeScreenshot('failure');
    const logDir = join(SCREENSHOT_DIR, 'logs');
    for (const file of workbenchLogs) {
      if (typeof file?.relativePath !== 'string') continue;
      const target = join(logDir, file.relativePath);
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, file.contents instanceof Uint8Array ? file.contents : String(file.contents ?? ''));
    }
    // The server side: the remote extension host's log and the extension's output channels.
    const serverLogs = join(dirs['user-data'], 'logs');
    if (existsSync(serverLogs)) cpSync(serverLogs, join(logDir, 'server'), { recursive: true });
    log(`workbench and extension host logs written to ${logDir}`);
    log(`code-server's log: ${serverLog}`);
  }
  await Promise.all([...pendingScreenshots]);
  return outcome.code;
}

// Pictures and logs of an earlier run would pass for this one's.
rmSync(SCREENSHOT_DIR, { recursive: true, force: true });
mkdirSync(SCREENSHOT_DIR, { recursive: true });
const timer = setTimeout(async () => {
  timedOut = true;
  keepScratch = true;
  log(`timed out after ${options.timeout} s`);
  await takeScreenshot('timeout');
  await Promise.all([...pendingScreenshots]);
  await cleanup();
  process.exit(124);
}, timeoutMs);
let interrupted = false;
for (const name of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(name, async () => {
    if (interrupted) return; // a second Ctrl-C while cleaning up
    interrupted = true;
    timedOut = true; // what main() sees from here on is the teardown
    log(`${name}: cleaning up`);
    await cleanup();
    process.exit(130);
  });
}

let exitCode = 1;
try {
  exitCode = await main();
} catch (error) {
  log(error.stack ?? error.message);
  await takeScreenshot('failure');
  await Promise.all([...pendingScreenshots]);
}
clearTimeout(timer);
await cleanup();
log(exitCode === 0 ? 'passed' : `failed (exit code ${exitCode})`);
process.exit(exitCode);
