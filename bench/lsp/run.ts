/**
 * bench/lsp: the time from a didChange on a ~300-line task file to its publishDiagnostics, over the real
 * protocol (stdio) to the bundled dist/server.js, median over EDITS edits; against vscode-json-languageservice
 * validating the same text against schemas/task.schema.json behind the same LSP stack over stdio
 * (json-baseline-server.ts), edit for edit in the same run. The ratio of the two is the goal (<= 1.0): both
 * sides pay the same protocol costs. The same validation in this process, without a protocol, is printed too.
 * Our server's debounce is switched off (`initializationOptions.debounceMs: 0`; the baseline has none), so
 * nothing is subtracted. Then our server's memory (VmRSS) with every task file of tasks/ open.
 *
 * Workspace diagnostics: a workspace of FILES (1,000) task files nobody opens (the dev set five times over, ids
 * made unique, each with an unknown key that both linters report); the time from `initialized` to the first and
 * to the last file's publishDiagnostics and the server's memory then, for our server (full lint of every file)
 * and for the baseline validating the same files against the schema. Then, on our server with that workspace
 * loaded, go-to-definition (a tool name to its namespace file) and find-references (a tool used across the
 * workspace) latency, medians.
 *
 *   node esbuild.mjs && npx tsx bench/lsp/run.ts          (EDITS=200 WARMUP=20 FILES=1000 by default)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import * as esbuild from 'esbuild';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { getLanguageService } from 'vscode-json-languageservice';
import {
  createProtocolConnection,
  DidChangeTextDocumentNotification,
  DefinitionRequest,
  DidOpenTextDocumentNotification,
  DocumentSymbolRequest,
  ReferencesRequest,
  ExitNotification,
  InitializedNotification,
  InitializeRequest,
  PublishDiagnosticsNotification,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
  type ProtocolConnection,
  type PublishDiagnosticsParams,
} from 'vscode-languageserver-protocol/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { schemasDir } from '../../server/src/paths.ts';
import { collectTaskFiles, readText } from '../../server/src/tasks/files.ts';

const EDITS = Number(process.env.EDITS ?? 200);
const FILES = Number(process.env.FILES ?? 1000);
const WARMUP = Number(process.env.WARMUP ?? 20);
const root = join(__dirname, '..', '..');
const serverModule = join(root, 'dist', 'server.js');

/** A ~300-line task: a dev-set task pretty-printed, with more reference solutions and counterexamples. */
function bigTask(): string {
  const task = JSON.parse(readText(join(root, 'test', 'fixtures', 'tasks', 'filesystem', 'fs-move-report-001.json')));
  delete task.$schema;
  task.id = 'bench-lsp-300-lines';
  const reference = task.reference_solutions[0];
  const counter = task.counterexamples[0];
  task.reference_solutions = [];
  task.counterexamples = [];
  // Two reads before the move: longer solutions, still correct, still within max_steps.
  task.max_steps = 12;
  const solution = [
    { tool: 'filesystem.list_directory', arguments: { path: '.' } },
    { tool: 'filesystem.read_text_file', arguments: { path: 'report.txt' } },
    ...reference,
  ];
  for (let i = 0; JSON.stringify(task, null, 2).split('\n').length < 300; i++) {
    if (i % 2 === 0) task.reference_solutions.push(structuredClone(solution));
    else task.counterexamples.push(structuredClone(counter));
  }
  return JSON.stringify(task, null, 2) + '\n';
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

interface Server {
  child: ChildProcess;
  connection: ProtocolConnection;
  /** Resolves with the diagnostics published for `uri` at `version`. */
  published(uri: string, version: number): Promise<PublishDiagnosticsParams>;
  stop(): Promise<void>;
}

/** Bundles the baseline server as dist/server.js is bundled, so neither side runs through a transpiler. */
async function buildBaselineServer(dir: string): Promise<string> {
  const outfile = join(dir, 'json-baseline-server.js');
  await esbuild.build({ entryPoints: [join(__dirname, 'json-baseline-server.ts')], outfile, bundle: true, platform: 'node', format: 'cjs', target: 'node20', mainFields: ['module', 'main'], logLevel: 'warning' });
  return outfile;
}

async function startServer(module = serverModule, env: Record<string, string> = {}): Promise<Server> {
  const child = spawn(process.execPath, [module, '--stdio'], { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  const connection = createProtocolConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  const waiting = new Map<string, (p: PublishDiagnosticsParams) => void>();
  connection.onNotification(PublishDiagnosticsNotification.type, (params) => {
    const key = `${params.uri}@${params.version}`;
    waiting.get(key)?.(params);
    waiting.delete(key);
  });
  connection.listen();
  await connection.sendRequest(InitializeRequest.type, {
    processId: process.pid,
    rootUri: null,
    workspaceFolders: null,
    capabilities: {},
    initializationOptions: { debounceMs: 0 },
  });
  await connection.sendNotification(InitializedNotification.type, {});
  return {
    child,
    connection,
    published: (uri, version) => new Promise((resolve) => waiting.set(`${uri}@${version}`, resolve)),
    stop: async () => {
      await connection.sendRequest(ShutdownRequest.type);
      await connection.sendNotification(ExitNotification.type);
      connection.dispose();
      child.kill();
    },
  };
}

function rssKiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = status.match(/^VmRSS:\s+(\d+)\s+kB/m);
  if (!match) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(match[1]);
}

async function latency() {
  const text = bigTask();
  const lines = text.split('\n').length - 1;
  const uri = pathToFileURL(join(root, 'tasks', 'filesystem', 'bench-lsp-300-lines.json')).href;
  const schema = JSON.parse(readFileSync(join(schemasDir(), 'task.schema.json'), 'utf8'));
  const service = getLanguageService({});
  service.configure({ validate: true, allowComments: false, schemas: [{ uri: schema.$id, fileMatch: ['*.json'], schema }] });

  const server = await startServer();
  const scratch = mkdtempSync(join(tmpdir(), 'mcpbench-bench-lsp-'));
  const json = await startServer(await buildBaselineServer(scratch), { MCPBENCH_TASK_SCHEMA: join(schemasDir(), 'task.schema.json') });
  let document = TextDocument.create(uri, 'json', 1, text);
  const opened = server.published(uri, 1);
  const jsonOpened = json.published(uri, 1);
  await server.connection.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId: 'json', version: 1, text } });
  await json.connection.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId: 'json', version: 1, text } });
  const first = await opened;
  await jsonOpened;

  // Typing in the goal: insert one character, then delete it, as incremental changes.
  const goalEnd = text.indexOf('folder.') + 'folder'.length;
  const edit = (i: number) => {
    const at = document.positionAt(goalEnd);
    return i % 2 === 0
      ? { range: { start: at, end: at }, text: 's' }
      : { range: { start: at, end: document.positionAt(goalEnd + 1) }, text: '' };
  };
  const ours: number[] = [];
  const baseline: number[] = [];
  const inProcess: number[] = [];
  const floor: number[] = [];
  // The protocol floor: a request the server answers at once (symbols of a file it does not handle).
  const other = pathToFileURL(join(root, 'bench-floor.schema.json')).href;
  await server.connection.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri: other, languageId: 'json', version: 1, text: '{}' } });
  const measureFloor = async () => {
    const start = process.hrtime.bigint();
    await server.connection.sendRequest(DocumentSymbolRequest.type, { textDocument: { uri: other } });
    return Number(process.hrtime.bigint() - start) / 1e6;
  };
  let serverFindings = 0;
  let baselineFindings = 0;
  let inProcessFindings = 0;
  for (let i = 0; i < WARMUP + EDITS; i++) {
    const change = edit(i);
    const version = document.version + 1;
    document = TextDocument.update(document, [change], version);
    const roundTrip = async (target: Server) => {
      const start = process.hrtime.bigint();
      const published = target.published(uri, version);
      await target.connection.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri, version }, contentChanges: [change] });
      const findings = (await published).diagnostics.length;
      return { ms: Number(process.hrtime.bigint() - start) / 1e6, findings };
    };
    const measureServer = async () => {
      const { ms, findings } = await roundTrip(server);
      serverFindings = findings;
      return ms;
    };
    const measureBaseline = async () => {
      const { ms, findings } = await roundTrip(json);
      baselineFindings = findings;
      return ms;
    };
    const measureInProcess = async () => {
      const start = process.hrtime.bigint();
      // What a JSON language server does on a change: parse the new text, validate it against the schema.
      const current = TextDocument.create(uri, 'json', version, document.getText());
      const parsed = service.parseJSONDocument(current);
      inProcessFindings = (await service.doValidation(current, parsed, { schemaValidation: 'error' }, schema)).length;
      return Number(process.hrtime.bigint() - start) / 1e6;
    };
    // Alternate the order so neither side always runs right after the other's garbage.
    const [a, b] = i % 2 ? [await measureBaseline(), await measureServer()] : [await measureServer(), await measureBaseline()];
    const [s, j] = i % 2 ? [b, a] : [a, b];
    const p = await measureInProcess();
    const f = await measureFloor();
    if (i >= WARMUP) {
      ours.push(s);
      baseline.push(j);
      inProcess.push(p);
      floor.push(f);
    }
  }
  await server.stop();
  await json.stop();
  rmSync(scratch, { recursive: true, force: true });
  const o = median(ours);
  const b = median(baseline);
  console.log(`bench/lsp: didChange → publishDiagnostics on a ${lines}-line task file, median of ${EDITS} edits (${WARMUP} warm-up), debounce off (debounceMs: 0)`);
  console.log(`  mcpbench language server over stdio (full lint + protocol):                ${o.toFixed(3)} ms  (${first.diagnostics.length}→${serverFindings} findings)`);
  console.log(`  vscode-json-languageservice behind the same LSP stack over stdio (schema): ${b.toFixed(3)} ms  (${baselineFindings} findings)`);
  console.log(`  ratio ours / baseline: ${(o / b).toFixed(3)}  (goal <= 1.0)`);
  console.log(`  for reference, vscode-json-languageservice in this process, no protocol: ${median(inProcess).toFixed(3)} ms  (${inProcessFindings} findings)`);
  console.log(`  protocol floor (an empty request/response on the same connection): ${median(floor).toFixed(3)} ms; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} on ${cpus().length} CPUs`);
}

async function memory() {
  const files = collectTaskFiles([join(root, 'tasks')]);
  const server = await startServer();
  const pid = server.child.pid!;
  // One small file first, so the idle figure includes the loaded namespace registry.
  const probe = pathToFileURL(join(root, 'bench-probe.json')).href;
  const probed = server.published(probe, 1);
  await server.connection.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri: probe, languageId: 'json', version: 1, text: '{}' } });
  await probed;
  const idle = rssKiB(pid);
  const all = files.map((file) => {
    const uri = pathToFileURL(file).href;
    const done = server.published(uri, 1);
    void server.connection.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId: 'json', version: 1, text: readText(file) } });
    return done;
  });
  await Promise.all(all);
  const loaded = rssKiB(pid);
  await server.stop();
  console.log(`  server memory (VmRSS): ${(idle / 1024).toFixed(1)} MiB after start-up with the registry loaded, ${(loaded / 1024).toFixed(1)} MiB with all ${files.length} files of tasks/ open and linted`);
}

/** FILES task files under `<dir>/tasks/<ns>/`: the dev set over and over, ids made unique, each with one unknown key. */
function writeWorkspace(dir: string): { files: string[]; toolFile: string } {
  const sources = collectTaskFiles([join(root, 'tasks')]).map((file) => JSON.parse(readText(file)) as Record<string, unknown> & { id: string; server: string | string[] });
  const files: string[] = [];
  for (let i = 0; files.length < FILES; i++) {
    const task = structuredClone(sources[i % sources.length]!);
    task.id = `${task.id}-w${Math.floor(i / sources.length)}`;
    task.notes = 'written by bench/lsp'; // an unknown key: the task schema and our linter both report it
    const namespace = Array.isArray(task.server) ? task.server[0]! : task.server;
    const file = join(dir, 'tasks', namespace, `${task.id}.json`);
    mkdirSync(join(dir, 'tasks', namespace), { recursive: true });
    writeFileSync(file, JSON.stringify(task, null, 2) + '\n');
    files.push(file);
  }
  const toolFile = files.find((f) => readFileSync(f, 'utf8').includes('"filesystem.move_file"'))!;
  return { files, toolFile };
}

interface WorkspacePass {
  firstMs: number;
  lastMs: number;
  published: number;
  rssMiB: number;
}

/** Starts a server on `dir`, then times `initialized` → the first and the last of `expected` files published. */
async function workspacePass(module: string, dir: string, expected: number, env: Record<string, string> = {}): Promise<{ pass: WorkspacePass; connection: ProtocolConnection; stop: () => Promise<void> }> {
  // PROFILE_DIR=<dir>: a CPU profile of each server, for finding where the time goes.
  const profile = process.env.PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.PROFILE_DIR}`] : [];
  const child = spawn(process.execPath, [...profile, module, '--stdio'], { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  const connection = createProtocolConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  const seen = new Set<string>();
  let start = 0n;
  let first = 0;
  let resolveDone: (ms: number) => void = () => undefined;
  const done = new Promise<number>((resolve) => (resolveDone = resolve));
  connection.onNotification(PublishDiagnosticsNotification.type, (params) => {
    if (!params.diagnostics.length || seen.has(params.uri)) return;
    seen.add(params.uri);
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (seen.size === 1) first = ms;
    if (seen.size === expected) resolveDone(ms);
  });
  connection.listen();
  const folderUri = pathToFileURL(dir).href;
  await connection.sendRequest(InitializeRequest.type, { processId: process.pid, rootUri: folderUri, workspaceFolders: [{ uri: folderUri, name: 'bench' }], capabilities: {}, initializationOptions: { debounceMs: 0 } });
  start = process.hrtime.bigint();
  await connection.sendNotification(InitializedNotification.type, {});
  const last = await done;
  const pass = { firstMs: first, lastMs: last, published: seen.size, rssMiB: rssKiB(child.pid!) / 1024 };
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const stop = async () => {
    await connection.sendRequest(ShutdownRequest.type);
    await connection.sendNotification(ExitNotification.type);
    // It exits by itself (and writes its CPU profile); the kill is for one that does not.
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000))]);
    connection.dispose();
    child.kill();
  };
  return { pass, connection, stop };
}

async function workspaceDiagnostics() {
  const dir = mkdtempSync(join(tmpdir(), 'mcpbench-bench-ws-'));
  try {
    const { files, toolFile } = writeWorkspace(dir);
    const ours = await workspacePass(serverModule, dir, files.length);
    // Navigation on the loaded workspace: a tool name to its namespace file, and every use of it.
    const uri = pathToFileURL(toolFile).href;
    const text = readFileSync(toolFile, 'utf8');
    await ours.connection.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId: 'json', version: 1, text } });
    const position = TextDocument.create(uri, 'json', 1, text).positionAt(text.indexOf('"filesystem.move_file"') + 2);
    const timed = async (n: number, request: () => Promise<unknown>) => {
      const times: number[] = [];
      let result: unknown;
      for (let i = 0; i < n; i++) {
        const start = process.hrtime.bigint();
        result = await request();
        times.push(Number(process.hrtime.bigint() - start) / 1e6);
      }
      return { ms: median(times.slice(Math.min(5, n - 1))), result };
    };
    const definition = await timed(105, () => ours.connection.sendRequest(DefinitionRequest.type, { textDocument: { uri }, position }));
    const references = await timed(35, () => ours.connection.sendRequest(ReferencesRequest.type, { textDocument: { uri }, position, context: { includeDeclaration: true } }));
    const floor = await timed(105, () => ours.connection.sendRequest(DocumentSymbolRequest.type, { textDocument: { uri: pathToFileURL(join(dir, 'bench-floor.schema.json')).href } }));
    await ours.stop();

    const scratch = mkdtempSync(join(tmpdir(), 'mcpbench-bench-lsp-'));
    const json = await workspacePass(await buildBaselineServer(scratch), dir, files.length, { MCPBENCH_TASK_SCHEMA: join(schemasDir(), 'task.schema.json'), MCPBENCH_BASELINE_WORKSPACE: '1' });
    await json.stop();
    rmSync(scratch, { recursive: true, force: true });

    const o = ours.pass;
    const b = json.pass;
    const defined = Array.isArray(definition.result) ? definition.result.length : 0;
    const referenced = Array.isArray(references.result) ? references.result.length : 0;
    console.log(`bench/lsp: workspace diagnostics for ${files.length} task files nobody opened (each with one unknown key), from \`initialized\``);
    console.log(`  mcpbench language server (full lint):            first ${o.firstMs.toFixed(0)} ms, last ${o.lastMs.toFixed(0)} ms (${o.published} files), VmRSS ${o.rssMiB.toFixed(1)} MiB`);
    console.log(`  vscode-json-languageservice (schema validation): first ${b.firstMs.toFixed(0)} ms, last ${b.lastMs.toFixed(0)} ms (${b.published} files), VmRSS ${b.rssMiB.toFixed(1)} MiB`);
    console.log(`  ratio ours / baseline: first ${(o.firstMs / b.firstMs).toFixed(2)}, last ${(o.lastMs / b.lastMs).toFixed(2)}  (goal <= 1.0)`);
    console.log(`  with the workspace loaded: go to definition ${definition.ms.toFixed(2)} ms (${defined} location), find references ${references.ms.toFixed(2)} ms (${referenced} locations), protocol floor ${floor.ms.toFixed(2)} ms; medians`);
    console.log(`  load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} on ${cpus().length} CPUs`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  if (process.env.ONLY !== 'workspace') {
    await latency();
    await memory();
  }
  await workspaceDiagnostics();
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
