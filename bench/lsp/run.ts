/**
 * bench/lsp: the time from a didChange on a ~300-line task file to its publishDiagnostics, over the real
 * protocol (stdio) to the bundled dist/server.js, median over EDITS edits; against vscode-json-languageservice
 * validating the same text against schemas/task.schema.json behind the same LSP stack over stdio
 * (json-baseline-server.ts), edit for edit in the same run. The ratio of the two is the goal (<= 1.0): both
 * sides pay the same protocol costs. The same validation in this process, without a protocol, is printed too.
 * Our server's debounce is switched off (`initializationOptions.debounceMs: 0`; the baseline has none), so
 * nothing is subtracted. Then our server's memory (VmRSS) with every task file of tasks/ open.
 *
 *   node esbuild.mjs && npx tsx bench/lsp/run.ts          (EDITS=200 WARMUP=20 by default)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import * as esbuild from 'esbuild';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { getLanguageService } from 'vscode-json-languageservice';
import {
  createProtocolConnection,
  DidChangeTextDocumentNotification,
  DidOpenTextDocumentNotification,
  DocumentSymbolRequest,
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

async function main() {
  await latency();
  await memory();
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
