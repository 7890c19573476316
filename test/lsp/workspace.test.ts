/**
 * The language server on a whole workspace, over the real protocol: files nobody opened are linted and their
 * findings published (duplicate ids across closed files too), an open file's edits win until it is closed, and
 * disk changes are followed; navigation (definition, references, rename, workspace symbols) across the set;
 * template lenses; the add-tool quick fix in the author's layout, offered once; JSON formatting and folding; and
 * the file status the editor asks before a run.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  CodeActionRequest,
  CodeLensRequest,
  DefinitionRequest,
  DidChangeWatchedFilesNotification,
  DocumentFormattingRequest,
  FileChangeType,
  FoldingRangeRequest,
  PrepareRenameRequest,
  ReferencesRequest,
  RenameRequest,
  WorkspaceSymbolRequest,
  type CodeAction,
  type Location,
  type RenameFile,
  type SymbolInformation,
  type TextDocumentEdit,
  type TextEdit,
} from 'vscode-languageserver-protocol/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { messageOf, startServer, type Server } from './lsp-client.ts';

const root = join(__dirname, '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');
// With a frame (what must not change), so the clean file has no finding at all, not even information.
const moveReport = read('test/fixtures/tasks/filesystem/fs-move-report-001.json').replace(
  '{ "not": { "filesystem.fileExists": { "path": "report.txt" } } }',
  '{ "not": { "filesystem.fileExists": { "path": "report.txt" } } },\n      { "filesystem.matchesReference": { "pointers": [""] } }',
);
const withId = (text: string, id: string) => text.replace('"fs-move-report-001"', JSON.stringify(id));

/** The text a location points at. */
function textAt(location: Location): string {
  const document = TextDocument.create(location.uri, 'json', 0, readFileSync(fileURLToPath(location.uri), 'utf8'));
  return document.getText(location.range);
}

/** The position `offset` characters into the first occurrence of `needle` in `text`. */
function positionOf(text: string, needle: string, offset = 1) {
  const at = text.indexOf(needle);
  assert.ok(at >= 0, `${needle} in the text`);
  return TextDocument.create('', 'json', 0, text).positionAt(at + offset);
}

describe('the language server on a workspace', () => {
  let workspace: string;
  let server: Server;
  const path = (relative: string) => join(workspace, ...relative.split('/'));
  const uri = (relative: string) => pathToFileURL(path(relative)).href;
  const write = (relative: string, text: string) => {
    mkdirSync(join(path(relative), '..'), { recursive: true });
    writeFileSync(path(relative), text);
  };
  const generated = read('tasks/filesystem/fs-move-file-0d5a67cf.json');

  before(async () => {
    workspace = mkdtempSync(join(tmpdir(), 'mcpbench-lsp-workspace-'));
    write('tasks/filesystem/fs-move-report-001.json', moveReport);
    write('tasks/filesystem/broken-closed.json', withId(moveReport, 'broken-closed-001').replace('"filesystem.list_directory"', '"filesystem.list_dir"'));
    write('tasks/filesystem/dup-a.json', withId(moveReport, 'shared-001'));
    write('tasks/filesystem/dup-b.json', withId(moveReport, 'shared-001'));
    write('tasks/filesystem/fs-move-file-0d5a67cf.json', generated);
    write('templates/filesystem/move-file.template.json', read('templates/filesystem/move-file.template.json'));
    // JSON that is no task: not linted, whatever it holds.
    write('notes/config.json', '{ "not": "a task", ');
    write('schemas/servers/example.json', '{}');
    cpSync(join(root, 'test', 'fixtures', 'broken', 'valid.json'), path('tasks/other/valid.task.json'));
    server = startServer(workspace);
    const init = await server.initialize({
      workspace: { workspaceFolders: true, didChangeWatchedFiles: { dynamicRegistration: true }, workspaceEdit: { documentChanges: true, resourceOperations: ['create', 'rename', 'delete'] } },
      textDocument: { completion: { completionItem: { snippetSupport: true } } },
    });
    const caps = init.capabilities;
    assert.ok(caps.definitionProvider && caps.referencesProvider && caps.renameProvider && caps.workspaceSymbolProvider && caps.documentFormattingProvider && caps.foldingRangeProvider);
  });

  after(async () => {
    await server.stop();
    rmSync(workspace, { recursive: true, force: true });
  });

  test('files nobody opened are linted: their findings are published, duplicate ids across closed files too', async () => {
    const broken = await server.diagnostics(uri('tasks/filesystem/broken-closed.json'), (d) => d.length > 0);
    assert.deepEqual(broken.map((d) => d.code), ['unknown-tool']);
    assert.match(broken[0]!.codeDescription!.href, /docs\/rules\.md#unknown-tool$/);
    const a = await server.diagnostics(uri('tasks/filesystem/dup-a.json'), (d) => d.some((x) => x.code === 'duplicate-id'));
    assert.match(messageOf(a.find((d) => d.code === 'duplicate-id')!), /also used by tasks\/filesystem\/dup-b\.json/);
    const b = await server.diagnostics(uri('tasks/filesystem/dup-b.json'), (d) => d.some((x) => x.code === 'duplicate-id'));
    assert.equal(b.find((d) => d.code === 'duplicate-id')!.relatedInformation?.[0]?.location.uri, uri('tasks/filesystem/dup-a.json'));
    // What is no task is never linted; clean files are not published at all.
    const indexed = (await server.connection.sendRequest('mcpbench/workspaceIndexed')) as { files: number };
    assert.equal(indexed.files, 7, 'every task and template file, and nothing else');
    const publishedUris = new Set(server.published.map((p) => p.uri));
    for (const quiet of ['notes/config.json', 'schemas/servers/example.json', 'tasks/filesystem/fs-move-report-001.json']) assert.ok(!publishedUris.has(uri(quiet)), quiet);
  });

  test("an open file's edits win until it is closed; then the file on disk speaks again, and disk changes are followed", async () => {
    const file = 'tasks/filesystem/broken-closed.json';
    const onDisk = readFileSync(path(file), 'utf8');
    // The workspace scan has published the file on disk first (so no publish of it is still on its way).
    await server.diagnostics(uri(file), (d) => d.some((x) => x.code === 'unknown-tool'));
    await server.open(uri(file), onDisk);
    let mark = server.mark();
    await server.change(uri(file), onDisk.replace('"filesystem.list_dir"', '"filesystem.list_directory"'));
    assert.deepEqual(await server.diagnostics(uri(file), () => true, mark), []);
    mark = server.mark();
    await server.close(uri(file)); // closed without saving: the error on disk is back
    assert.deepEqual((await server.diagnostics(uri(file), (d) => d.length > 0, mark)).map((d) => d.code), ['unknown-tool']);

    mark = server.mark();
    writeFileSync(path(file), onDisk.replace('"filesystem.list_dir"', '"filesystem.list_directory"'));
    await server.connection.sendNotification(DidChangeWatchedFilesNotification.type, { changes: [{ uri: uri(file), type: FileChangeType.Changed }] });
    assert.deepEqual(await server.diagnostics(uri(file), () => true, mark), []);

    mark = server.mark();
    rmSync(path('tasks/filesystem/dup-b.json'));
    await server.connection.sendNotification(DidChangeWatchedFilesNotification.type, { changes: [{ uri: uri('tasks/filesystem/dup-b.json'), type: FileChangeType.Deleted }] });
    assert.deepEqual(await server.diagnostics(uri('tasks/filesystem/dup-a.json'), () => true, mark), []);
    assert.deepEqual(await server.diagnostics(uri('tasks/filesystem/dup-b.json'), () => true, mark), [], 'a deleted file keeps no findings');
  });

  test('go to definition: tools and predicates to their namespace file, template.id to the template, a placeholder to its parameter', async () => {
    const file = 'tasks/filesystem/fs-move-report-001.json';
    await server.open(uri(file), moveReport);
    const definition = async (text: string, target: string, needle: string, offset = 2) =>
      (await server.connection.sendRequest(DefinitionRequest.type, { textDocument: { uri: uri(target) }, position: positionOf(text, needle, offset) })) as Location[];

    const [tool] = await definition(moveReport, file, '"filesystem.move_file"');
    assert.equal(fileURLToPath(tool!.uri), join(root, 'schemas', 'servers', 'filesystem.json'));
    assert.equal(textAt(tool!), '"move_file"');
    const [predicate] = await definition(moveReport, file, '"filesystem.fileExists"');
    assert.equal(textAt(predicate!), '"fileExists"');
    const [namespace] = await definition(moveReport, file, '"server": "filesystem"', 12);
    assert.equal(textAt(namespace!), '"filesystem"');
    assert.equal(fileURLToPath(namespace!.uri), join(root, 'schemas', 'servers', 'filesystem.json'));

    const task = 'tasks/filesystem/fs-move-file-0d5a67cf.json';
    await server.open(uri(task), generated);
    const [template] = await definition(generated, task, '"id": "fs-move-file"', 8);
    assert.equal(template!.uri, uri('templates/filesystem/move-file.template.json'));
    assert.equal(textAt(template!), '"fs-move-file"');

    const templateFile = 'templates/filesystem/move-file.template.json';
    const templateText = readFileSync(path(templateFile), 'utf8');
    await server.open(uri(templateFile), templateText);
    const [parameter] = await definition(templateText, templateFile, '{{stem}}', 3);
    assert.equal(textAt(parameter!), '"stem"');
    assert.equal(parameter!.range.start.line, templateText.split('\n').findIndex((l) => l.includes('"stem": {"pool"')));
  });

  test('find references: a tool across the set, opened or not, templates included; with its declaration when asked', async () => {
    const file = 'tasks/filesystem/fs-move-report-001.json';
    const position = positionOf(moveReport, '"filesystem.move_file"', 2);
    const references = (await server.connection.sendRequest(ReferencesRequest.type, { textDocument: { uri: uri(file) }, position, context: { includeDeclaration: false } })) as Location[];
    const files = new Set(references.map((r) => fileURLToPath(r.uri)));
    for (const expected of ['tasks/filesystem/fs-move-report-001.json', 'tasks/filesystem/dup-a.json', 'tasks/filesystem/fs-move-file-0d5a67cf.json', 'templates/filesystem/move-file.template.json']) {
      assert.ok(files.has(path(expected)), `${expected} in ${[...files].join(', ')}`);
    }
    for (const r of references) assert.equal(textAt(r).replace(/^"|"$/g, ''), 'filesystem.move_file');
    const withDeclaration = (await server.connection.sendRequest(ReferencesRequest.type, { textDocument: { uri: uri(file) }, position, context: { includeDeclaration: true } })) as Location[];
    assert.equal(withDeclaration.length, references.length + 1);
    assert.ok(withDeclaration.some((r) => r.uri.endsWith('/schemas/servers/filesystem.json')));

    // A template: the tasks generated from it.
    const task = 'tasks/filesystem/fs-move-file-0d5a67cf.json';
    const templateRefs = (await server.connection.sendRequest(ReferencesRequest.type, { textDocument: { uri: uri(task) }, position: positionOf(generated, '"id": "fs-move-file"', 8), context: { includeDeclaration: true } })) as Location[];
    assert.deepEqual(templateRefs.map((r) => fileURLToPath(r.uri)).sort(), [path(task), path('templates/filesystem/move-file.template.json')].sort());
  });

  test('rename a task id: the id and the file together; an invalid or taken id is refused with the reason', async () => {
    const file = 'tasks/filesystem/fs-move-report-001.json';
    const position = positionOf(moveReport, '"fs-move-report-001"', 3);
    const prepared = await server.connection.sendRequest(PrepareRenameRequest.type, { textDocument: { uri: uri(file) }, position });
    assert.deepEqual(prepared && 'placeholder' in prepared ? prepared.placeholder : prepared, 'fs-move-report-001');
    assert.equal(await server.connection.sendRequest(PrepareRenameRequest.type, { textDocument: { uri: uri(file) }, position: positionOf(moveReport, '"goal"') }), null);

    const edit = await server.connection.sendRequest(RenameRequest.type, { textDocument: { uri: uri(file) }, position, newName: 'fs-move-report-002' });
    // The file is renamed first, then the id is edited in the renamed file.
    const [renameFile, textEdit] = edit!.documentChanges! as [RenameFile, TextDocumentEdit];
    assert.deepEqual([renameFile.kind, renameFile.oldUri, renameFile.newUri], ['rename', uri(file), uri('tasks/filesystem/fs-move-report-002.json')]);
    assert.equal(textEdit.textDocument.uri, renameFile.newUri);
    assert.deepEqual((textEdit.edits as TextEdit[]).map((e) => e.newText), ['fs-move-report-002']);
    assert.equal(TextDocument.create('', 'json', 0, moveReport).getText((textEdit.edits[0] as TextEdit).range), 'fs-move-report-001');

    await assert.rejects(server.connection.sendRequest(RenameRequest.type, { textDocument: { uri: uri(file) }, position, newName: 'Not An Id' }), /is not a task id/);
    await assert.rejects(server.connection.sendRequest(RenameRequest.type, { textDocument: { uri: uri(file) }, position, newName: 'shared-001' }), /already used by tasks\/filesystem\/dup-a\.json/);
  });

  test('workspace symbols: task and template ids', async () => {
    const symbols = (await server.connection.sendRequest(WorkspaceSymbolRequest.type, { query: 'fsmove' })) as SymbolInformation[];
    const names = symbols.map((s) => s.name);
    assert.ok(names.includes('fs-move-report-001') && names.includes('fs-move-file') && names.includes('fs-move-file-0d5a67cf'), names.join());
    const template = symbols.find((s) => s.name === 'fs-move-file')!;
    assert.equal(template.location.uri, uri('templates/filesystem/move-file.template.json'));
    assert.match(template.containerName!, /^template/);
  });

  test('template lenses: Generate Batch, Lint a Sample, and Open Last Batch once a batch exists', async () => {
    const templateFile = 'templates/filesystem/move-file.template.json';
    const lenses = async () => ((await server.connection.sendRequest(CodeLensRequest.type, { textDocument: { uri: uri(templateFile) } })) ?? []).map((l) => [l.command?.title, l.command?.command]);
    assert.deepEqual(await lenses(), [['Generate Batch...', 'mcpbench.generateBatch'], ['Lint a Sample', 'mcpbench.lintTemplateSample']]);
    write('batches/fs-move-file-3/batch.json', '{}');
    assert.deepEqual((await lenses())[2], ['Open Last Batch (fs-move-file-3)', 'mcpbench.reviewBatch']);
  });

  test('the add-tool quick fix goes on a line of its own in a multi-line list, and is offered once', async () => {
    const task = JSON.parse(moveReport);
    task.id = 'layout-001';
    task.available_tools = ['filesystem.list_directory', 'filesystem.write_file'];
    const text = JSON.stringify(task, null, 2);
    const file = 'tasks/filesystem/layout-001.json';
    await server.open(uri(file), text);
    const diagnostics = await server.diagnostics(uri(file), (d) => d.some((x) => x.code === 'tool-not-available'));
    const missing = diagnostics.filter((d) => d.code === 'tool-not-available');
    const actions = (await server.connection.sendRequest(CodeActionRequest.type, { textDocument: { uri: uri(file) }, range: missing[0]!.range, context: { diagnostics: missing } })) as CodeAction[];
    const adding = actions.filter((a) => /filesystem\.move_file/.test(a.title) && /available_tools/.test(a.title));
    assert.equal(adding.length, 1, `one fix adds the tool: ${actions.map((a) => a.title).join(' | ')}`);
    const fixed = TextDocument.applyEdits(TextDocument.create(uri(file), 'json', 1, text), adding[0]!.edit!.changes![uri(file)]!);
    assert.match(fixed, /\n {4}"filesystem\.write_file",\n {4}"filesystem\.move_file"\n {2}\]/);
  });

  test('JSON formatting and folding, as for any JSON file', async () => {
    const file = 'tasks/filesystem/fs-move-report-001.json';
    const squashed = JSON.stringify(JSON.parse(moveReport));
    await server.change(uri(file), squashed);
    const edits = (await server.connection.sendRequest(DocumentFormattingRequest.type, { textDocument: { uri: uri(file) }, options: { tabSize: 2, insertSpaces: true } })) as TextEdit[];
    const formatted = TextDocument.applyEdits(TextDocument.create(uri(file), 'json', 1, squashed), edits);
    assert.deepEqual(JSON.parse(formatted), JSON.parse(moveReport));
    assert.ok(formatted.split('\n').length > 10, 'one property per line');
    await server.change(uri(file), moveReport);
    const folds = await server.connection.sendRequest(FoldingRangeRequest.type, { textDocument: { uri: uri(file) } });
    assert.ok(folds && folds.length > 3);
  });

  test('the file status the editor asks before a run: kind, id and lint errors, for open and closed files', async () => {
    const status = (relative: string) => server.connection.sendRequest('mcpbench/fileStatus', { uri: uri(relative) }) as Promise<{ kind: string; id?: string; errors: { code: string; line: number }[] }>;
    write('tasks/filesystem/not-yet-seen.json', withId(moveReport, 'not-yet-seen-001').replace('"filesystem.write_file"', '"filesystem.write_fil"'));
    const unseen = await status('tasks/filesystem/not-yet-seen.json');
    assert.equal(unseen.kind, 'task');
    assert.equal(unseen.id, 'not-yet-seen-001');
    assert.deepEqual(unseen.errors.map((e) => e.code), ['unknown-tool']);
    assert.deepEqual((await status('tasks/filesystem/fs-move-report-001.json')).errors, []);
    assert.equal((await status('notes/config.json')).kind, 'other');
    assert.equal((await status('templates/filesystem/move-file.template.json')).kind, 'template');
  });
});
