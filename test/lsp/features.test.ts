/**
 * The bundled language server (dist/server.js) over the real protocol on stdio, in a temporary workspace:
 * completion, hover, code actions, code lenses with coverage from a real check run, document symbols,
 * template routing, and the workspace-wide duplicate-id rule kept current as files change on disk.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  CodeActionRequest,
  CodeLensRequest,
  CompletionRequest,
  DidChangeWatchedFilesNotification,
  DocumentSymbolRequest,
  FileChangeType,
  HoverRequest,
  InsertTextFormat,
  type CodeAction,
  type CompletionItem,
  type DocumentSymbol,
  type MarkupContent,
  type TextEdit,
} from 'vscode-languageserver-protocol/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { messageOf, startServer, type Server } from './lsp-client.ts';

const root = join(__dirname, '..', '..');
const cli = join(root, 'dist', 'cli.js');
const repoTask = (path: string) => readFileSync(join(root, 'test', 'fixtures', 'tasks', path), 'utf8');
const fixture = (name: string) => readFileSync(join(__dirname, '..', 'fixtures', 'broken', name), 'utf8');

/** `text` with the `|` marker removed, and the marker's position. */
function cursor(text: string) {
  const offset = text.indexOf('|');
  assert.ok(offset >= 0, 'the text has a cursor marker');
  const clean = text.slice(0, offset) + text.slice(offset + 1);
  return { text: clean, position: TextDocument.create('', 'json', 0, clean).positionAt(offset) };
}

const labels = (items: CompletionItem[]) => items.map((i) => i.label);
const newText = (item: CompletionItem | undefined) => (item?.textEdit as TextEdit | undefined)?.newText;
const markdown = (contents: unknown) => (contents as MarkupContent).value;

const moveReport = repoTask('filesystem/fs-move-report-001.json');

describe('language server features over the protocol', () => {
  let workspace: string;
  let server: Server;
  const fileUri = (relative: string) => pathToFileURL(join(workspace, relative)).href;
  let counter = 0;
  /** Opens `text` as a new task file of the workspace (in memory only) and returns its URI. */
  const openScratch = async (text: string, name = `scratch-${++counter}.json`) => {
    const uri = fileUri(join('tasks', 'filesystem', name));
    await server.open(uri, text);
    return uri;
  };
  const complete = async (marked: string) => {
    const { text, position } = cursor(marked);
    const uri = await openScratch(text);
    const result = await server.connection.sendRequest(CompletionRequest.type, { textDocument: { uri }, position });
    return Array.isArray(result) ? result : result?.items ?? [];
  };

  before(async () => {
    workspace = mkdtempSync(join(tmpdir(), 'mcpbench-lsp-ws-'));
    mkdirSync(join(workspace, 'tasks', 'filesystem'), { recursive: true });
    server = startServer(workspace);
    const init = await server.initialize();
    assert.ok(init.capabilities.completionProvider && init.capabilities.hoverProvider && init.capabilities.codeLensProvider && init.capabilities.documentSymbolProvider);
  });

  after(async () => {
    await server.stop();
    rmSync(workspace, { recursive: true, force: true });
  });

  test('completion: the task keys not yet present, with their schema documentation', async () => {
    const items = await complete(moveReport.replace('"difficulty": "easy",', '|'));
    const keys = labels(items);
    assert.ok(keys.includes('difficulty') && keys.includes('tags') && keys.includes('timeout_s'), keys.join());
    assert.ok(!keys.includes('goal') && !keys.includes('id'), 'keys already present are not offered');
    const difficulty = items.find((i) => i.label === 'difficulty')!;
    assert.match(markdown(difficulty.documentation), /How hard the task is/);
    assert.ok(difficulty.sortText! < items.find((i) => i.label === 'tags')!.sortText!, 'required keys come first');
  });

  test('completion: predicates of the task namespaces as snippets with their required arguments, and all/any/not', async () => {
    const items = await complete(moveReport.replace('{ "filesystem.fileExists": { "path": "archive/report.txt" } },', '{ "|" },'));
    const keys = labels(items);
    for (const expected of ['all', 'any', 'not', 'filesystem.fileExists', 'filesystem.directoryContains', 'answer.includes']) assert.ok(keys.includes(expected), expected);
    // The generic state predicates the registry gives every namespace with a state, documented like the rest.
    for (const generic of ['filesystem.unchanged', 'filesystem.stateEquals', 'filesystem.matchesReference']) {
      const item = items.find((i) => i.label === generic);
      assert.ok(item, generic);
      assert.match(markdown(item.documentation), /JSON pointer/, generic);
    }
    assert.ok(!keys.includes('answer.unchanged'), 'the answer namespace has no state');
    assert.ok(!keys.some((k) => k.startsWith('calendar.')), 'predicates of namespaces the task does not use are left out');
    const contains = items.find((i) => i.label === 'filesystem.directoryContains')!;
    assert.equal(contains.insertTextFormat, InsertTextFormat.Snippet);
    // Required arguments as placeholders, seeded from the declaration's first example.
    assert.equal(newText(contains), '"filesystem.directoryContains": { "path": "${1:archive}", "name": "${2:report.txt}" }');
  });

  test('completion: tool names, a call\'s tool and argument keys, enum values, namespaces', async () => {
    const tools = await complete(moveReport.replace('"filesystem.move_file", "filesystem.list_directory"', '"filesystem.move_file", "|", "filesystem.list_directory"'));
    assert.ok(labels(tools).includes('filesystem.create_directory') && labels(tools).includes('github.merge_pull_request'));
    assert.ok(!labels(tools).includes('filesystem.list_directory'), 'tools already listed are left out');
    const rank = (label: string) => tools.find((i) => i.label === label)!.sortText!;
    assert.ok(rank('filesystem.create_directory') < rank('github.merge_pull_request'), "the task's namespace first");

    const calls = await complete(moveReport.replace('{ "tool": "filesystem.move_file", "arguments"', '{ "tool": "|", "arguments"'));
    const sorted = [...calls].sort((a, b) => a.sortText!.localeCompare(b.sortText!));
    assert.deepEqual(sorted.slice(0, 4).map((i) => i.label).sort(), ['filesystem.list_directory', 'filesystem.move_file', 'filesystem.read_text_file', 'filesystem.write_file']);

    const args = await complete(moveReport.replace('"arguments": { "source": "report.txt", "destination": "archive/report.txt" }', '"arguments": { "source": "report.txt", | }'));
    assert.deepEqual(labels(args), ['destination']);

    const category = await complete(moveReport.replace('"category": "single-tool"', '"category": |'));
    assert.deepEqual(labels(category), ['single-tool', 'composition', 'recovery']);
    assert.equal(newText(category[0]), '"single-tool"');

    const kinds = await complete(moveReport.replace('{ "filesystem.fileExists": { "path": "archive/report.txt" } },', '{ "filesystem.directoryContains": { "path": "archive", "name": "report.txt", "kind": | } },'));
    assert.deepEqual(labels(kinds), ['file', 'directory']);

    const namespaces = await complete(moveReport.replace('"server": "filesystem"', '"server": "|"'));
    assert.ok(labels(namespaces).includes('filesystem') && labels(namespaces).includes('postgres'));
  });

  test('hover: predicate and tool documentation; on the task id the canonical hash that `mcpbench hash` prints', async () => {
    const path = join(workspace, 'tasks', 'filesystem', 'fs-move-report-001.json');
    writeFileSync(path, moveReport);
    const uri = pathToFileURL(path).href;
    await server.open(uri, moveReport);
    const document = TextDocument.create(uri, 'json', 1, moveReport);
    const hover = (needle: string) =>
      server.connection.sendRequest(HoverRequest.type, { textDocument: { uri }, position: document.positionAt(moveReport.indexOf(needle) + 2) });

    const predicate = await hover('"filesystem.fileExists"');
    assert.match(markdown(predicate!.contents), /True when a regular file \(not a directory\) exists/);
    assert.match(markdown(predicate!.contents), /`path`: `string`/);
    assert.match(markdown(predicate!.contents), /\*\*Reads\*\*: `files`/);

    const tool = await hover('"filesystem.move_file"');
    assert.match(markdown(tool!.contents), /Move or rename files and directories/);

    const expectedHash = execFileSync(process.execPath, [cli, 'hash', path], { encoding: 'utf8' }).split(/\s+/)[0]!;
    assert.match(expectedHash, /^[0-9a-f]{64}$/);
    const id = await hover('"fs-move-report-001"');
    assert.ok(markdown(id!.contents).includes(expectedHash), markdown(id!.contents));
    assert.ok(markdown(id!.contents).includes(join('tasks', 'filesystem', 'fs-move-report-001.json')));
    assert.equal(document.getText(id!.range!), '"fs-move-report-001"');

    const key = await hover('"max_steps"');
    assert.match(markdown(key!.contents), /The most tool calls the agent may make/);
  });

  test('code action: add the missing required arguments of a tool call', async () => {
    const text = fixture('tool-arguments-missing.json');
    const uri = await openScratch(text);
    const diagnostics = await server.diagnostics(uri, (d) => d.some((x) => x.code === 'tool-arguments'));
    const missing = diagnostics.find((d) => d.code === 'tool-arguments')!;
    const actions = (await server.connection.sendRequest(CodeActionRequest.type, { textDocument: { uri }, range: missing.range, context: { diagnostics: [missing] } })) as CodeAction[];
    const add = actions.find((a) => a.title.startsWith('Add the missing required argument'));
    assert.ok(add, `an "add missing arguments" action among ${actions.map((a) => a.title).join(' | ')}`);
    const fixed = TextDocument.applyEdits(TextDocument.create(uri, 'json', 1, text), add.edit!.changes![uri]!);
    assert.match(fixed, /"arguments": \{ "source": "report.txt", "destination": "" \}/);
    const mark = server.mark();
    await server.change(uri, fixed);
    const after = await server.diagnostics(uri, () => true, mark);
    assert.ok(!after.some((d) => d.code === 'tool-arguments'), JSON.stringify(after));
  });

  test('code action: add the missing required arguments of a predicate', async () => {
    const text = moveReport.replace('{ "filesystem.fileExists": { "path": "archive/report.txt" } },', '{ "filesystem.directoryContains": { "path": "archive" } },');
    const uri = await openScratch(text);
    const diagnostics = await server.diagnostics(uri, (d) => d.some((x) => x.code === 'predicate-arguments'));
    const missing = diagnostics.find((d) => d.code === 'predicate-arguments')!;
    const actions = (await server.connection.sendRequest(CodeActionRequest.type, { textDocument: { uri }, range: missing.range, context: { diagnostics: [missing] } })) as CodeAction[];
    const add = actions.find((a) => a.title.startsWith('Add the missing required argument'))!;
    const fixed = TextDocument.applyEdits(TextDocument.create(uri, 'json', 1, text), add.edit!.changes![uri]!);
    assert.ok(fixed.includes('{ "filesystem.directoryContains": { "path": "archive", "name": "" } }'), fixed);
  });

  test('code action: add every tool the reference solutions use to available_tools in one edit', async () => {
    const task = JSON.parse(moveReport);
    task.id = 'lsp-add-tools-001';
    task.available_tools = ['filesystem.write_file'];
    task.reference_solutions = [[
      { tool: 'filesystem.read_text_file', arguments: { path: 'report.txt' } },
      { tool: 'filesystem.move_file', arguments: { source: 'report.txt', destination: 'archive/report.txt' } },
    ]];
    const text = JSON.stringify(task, null, 2);
    const uri = await openScratch(text);
    const diagnostics = await server.diagnostics(uri, (d) => d.filter((x) => x.code === 'tool-not-available').length === 2);
    const notAvailable = diagnostics.filter((d) => d.code === 'tool-not-available');
    const actions = (await server.connection.sendRequest(CodeActionRequest.type, { textDocument: { uri }, range: notAvailable[0]!.range, context: { diagnostics: notAvailable } })) as CodeAction[];
    const addAll = actions.find((a) => a.title.startsWith('Add the tools the reference solutions use'));
    assert.ok(addAll, actions.map((a) => a.title).join(' | '));
    const fixed = TextDocument.applyEdits(TextDocument.create(uri, 'json', 1, text), addAll.edit!.changes![uri]!);
    assert.deepEqual(JSON.parse(fixed).available_tools, ['filesystem.write_file', 'filesystem.read_text_file', 'filesystem.move_file']);
    const mark = server.mark();
    await server.change(uri, fixed);
    const after = await server.diagnostics(uri, () => true, mark);
    assert.deepEqual(after.filter((d) => d.code === 'tool-not-available'), []);
  });

  test('code lenses: run, run with faults, check, and coverage from the latest check run', async () => {
    const task = JSON.parse(moveReport);
    delete task.$schema;
    task.id = 'lsp-two-paths-001';
    task.goal = 'Move report.txt into the archive folder or the backup folder.';
    task.initial_state.filesystem.files['backup/'] = null;
    const moved = (folder: string) => ({ all: [{ 'filesystem.fileExists': { path: `${folder}/report.txt` } }, { not: { 'filesystem.fileExists': { path: 'report.txt' } } }] });
    task.success_predicate = { any: [moved('archive'), moved('backup')] };
    const path = join(workspace, 'tasks', 'filesystem', 'lsp-two-paths-001.json');
    const text = JSON.stringify(task, null, 2);
    writeFileSync(path, text);
    const uri = pathToFileURL(path).href;
    await server.open(uri, text);

    const lenses = async () => (await server.connection.sendRequest(CodeLensRequest.type, { textDocument: { uri } })) ?? [];
    const before = await lenses();
    assert.deepEqual(before.map((l) => [l.command?.title, l.command?.command]), [
      ['Run', 'mcpbench.runTask'],
      ['Run with faults...', 'mcpbench.runTaskWithFaults'],
      ['Check', 'mcpbench.checkTask'],
      ['coverage: not checked yet', 'mcpbench.checkTask'],
    ]);
    assert.deepEqual(before[0]!.command!.arguments, [uri]);
    assert.equal(before[0]!.range.start.line, text.split('\n').findIndex((l) => l.includes('"id"')));

    // A real check run: the one reference solution takes the `archive` branch only.
    // `check` exits non-zero for the unwitnessed branch; its journal is what the lens reads.
    try {
      execFileSync(process.execPath, [cli, 'check', path, '--sandbox', 'process', '--reporter', 'none', '--out', join(workspace, 'runs')], { stdio: 'pipe' });
    } catch (error) {
      assert.equal((error as { status?: number }).status, 1, String((error as { stderr?: Buffer }).stderr));
    }
    const afterCheck = await lenses();
    assert.equal(afterCheck.length, 4);
    assert.equal(afterCheck[3]!.command!.title, '1/2 solution paths covered');

    // The task edited since the check: the lens says so.
    const edited = text.replace('"max_steps": 6', '"max_steps": 7');
    await server.change(uri, edited);
    const stale = await lenses();
    assert.equal(stale[3]!.command!.title, '1/2 solution paths covered (task changed since the check)');
  });

  test('document symbols: the task outline with the predicate tree and solution steps', async () => {
    const uri = await openScratch(moveReport);
    const symbols = (await server.connection.sendRequest(DocumentSymbolRequest.type, { textDocument: { uri } })) as DocumentSymbol[];
    const names = symbols.map((s) => s.name);
    for (const key of ['id', 'goal', 'available_tools', 'success_predicate', 'reference_solutions', 'counterexamples']) assert.ok(names.includes(key), key);
    const byName = (name: string) => symbols.find((s) => s.name === name)!;
    assert.equal(byName('id').detail, 'fs-move-report-001');
    assert.equal(byName('available_tools').children!.length, 4);
    const tree = byName('success_predicate').children!;
    const outline = (s: DocumentSymbol): unknown => (s.children ? { [s.name]: s.children.map(outline) } : s.name);
    assert.deepEqual(tree.map(outline), [{ all: ['filesystem.fileExists', { not: ['filesystem.fileExists'] }] }]);
    assert.deepEqual(byName('reference_solutions').children!.map(outline), [{ 'solution 1': ['1. filesystem.move_file'] }]);
  });

  test('template files go to the template linter, not the task rules', async () => {
    const text = readFileSync(join(root, 'templates', 'filesystem', 'move-file.template.json'), 'utf8');
    const uri = fileUri('templates/move-file.template.json');
    await server.open(uri, text);
    const diagnostics = await server.diagnostics(uri);
    assert.ok(!diagnostics.some((d) => d.code === 'missing-key' && /`server`|`category`/.test(messageOf(d))), JSON.stringify(diagnostics));
  });
});

describe('duplicate ids across the workspace', () => {
  test('a file on disk with the same id is named; fixing it on disk clears the finding', async () => {
    const workspace = mkdtempSync(join(tmpdir(), 'mcpbench-lsp-dup-'));
    const folder = join(workspace, 'tasks', 'filesystem');
    mkdirSync(folder, { recursive: true });
    const task = (id: string) => moveReport.replace('"fs-move-report-001"', JSON.stringify(id));
    writeFileSync(join(folder, 'a.json'), task('shared-id-001'));
    writeFileSync(join(folder, 'b.json'), task('shared-id-001'));
    writeFileSync(join(folder, 'c.json'), task('other-id-001'));
    const server = startServer(workspace);
    try {
      await server.initialize();
      const a = pathToFileURL(join(folder, 'a.json')).href;
      const b = pathToFileURL(join(folder, 'b.json')).href;
      await server.open(a, task('shared-id-001'));

      const duplicate = (await server.diagnostics(a, (d) => d.some((x) => x.code === 'duplicate-id'))).find((d) => d.code === 'duplicate-id')!;
      assert.match(messageOf(duplicate), /also used by tasks\/filesystem\/b\.json/);
      assert.equal(TextDocument.create(a, 'json', 1, task('shared-id-001')).getText(duplicate.range), '"shared-id-001"');
      assert.equal(duplicate.relatedInformation?.[0]?.location.uri, b);
      assert.ok(server.registrations.some((r) => r.method === DidChangeWatchedFilesNotification.method), 'a file watcher is registered');

      // b.json changes on disk: the duplicate goes away in a.json.
      let mark = server.mark();
      writeFileSync(join(folder, 'b.json'), task('renamed-id-001'));
      await server.connection.sendNotification(DidChangeWatchedFilesNotification.type, { changes: [{ uri: b, type: FileChangeType.Changed }] });
      // Under load the background pass may publish a.json once more first: wait for the publication without it.
      await server.diagnostics(a, (d) => !d.some((x) => x.code === 'duplicate-id'), mark);

      // An edit in the open file that takes c.json's id is flagged against c.json.
      mark = server.mark();
      await server.change(a, task('other-id-001'));
      const again = await server.diagnostics(a, (d) => d.some((x) => x.code === 'duplicate-id'), mark);
      assert.match(messageOf(again.find((d) => d.code === 'duplicate-id')!), /c\.json/);

      // c.json deleted on disk: clear again.
      mark = server.mark();
      rmSync(join(folder, 'c.json'));
      await server.connection.sendNotification(DidChangeWatchedFilesNotification.type, { changes: [{ uri: pathToFileURL(join(folder, 'c.json')).href, type: FileChangeType.Deleted }] });
      await server.diagnostics(a, (d) => !d.some((x) => x.code === 'duplicate-id'), mark);

      // Two open files with one id: each names the other.
      mark = server.mark();
      await server.open(b, task('other-id-001'));
      const fromB = await server.diagnostics(b, (d) => d.some((x) => x.code === 'duplicate-id'), mark);
      assert.match(messageOf(fromB.find((d) => d.code === 'duplicate-id')!), /a\.json/);
      const fromA = await server.diagnostics(a, (d) => d.some((x) => x.code === 'duplicate-id'), mark);
      assert.match(messageOf(fromA.find((d) => d.code === 'duplicate-id')!), /b\.json/);
    } finally {
      await server.stop();
      rmSync(workspace, { recursive: true, force: true });
    }
  });
});
