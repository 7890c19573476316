/**
 * The bundled language server (dist/server.js) over the real protocol on stdio: open a broken task, receive
 * its diagnostics on the exact range, apply the quick fix, see the diagnostics clear.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  CodeActionRequest,
  createProtocolConnection,
  DidChangeTextDocumentNotification,
  DidOpenTextDocumentNotification,
  ExitNotification,
  InitializedNotification,
  InitializeRequest,
  PublishDiagnosticsNotification,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
  type Diagnostic,
  type PublishDiagnosticsParams,
  type TextEdit,
} from 'vscode-languageserver-protocol/node';
import { TextDocument } from 'vscode-languageserver-textdocument';

const serverModule = join(__dirname, '..', '..', 'dist', 'server.js');
const fixture = (name: string) => readFileSync(join(__dirname, '..', 'fixtures', 'broken', name), 'utf8');

function startServer() {
  const child = spawn(process.execPath, [serverModule, '--stdio'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const connection = createProtocolConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  const published: PublishDiagnosticsParams[] = [];
  const waiters: (() => void)[] = [];
  connection.onNotification(PublishDiagnosticsNotification.type, (params) => {
    published.push(params);
    waiters.splice(0).forEach((wake) => wake());
  });
  connection.listen();
  /** The next diagnostics published for `uri` at `version` (or later). */
  const diagnosticsFor = async (uri: string, version: number, timeoutMs = 10_000): Promise<Diagnostic[]> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = published.find((p) => p.uri === uri && (p.version ?? 0) >= version);
      if (hit) return hit.diagnostics;
      if (Date.now() > deadline) throw new Error(`no diagnostics for ${uri} v${version}`);
      await new Promise<void>((wake) => { waiters.push(wake); setTimeout(wake, 200); });
    }
  };
  const stop = async () => {
    await connection.sendRequest(ShutdownRequest.type);
    await connection.sendNotification(ExitNotification.type);
    connection.dispose();
    child.kill();
  };
  return { connection, diagnosticsFor, stop };
}

test('diagnostics on the exact range, a quick fix, and the diagnostics clear after it', async () => {
  const { connection, diagnosticsFor, stop } = startServer();
  try {
    const init = await connection.sendRequest(InitializeRequest.type, { processId: process.pid, rootUri: null, capabilities: {}, workspaceFolders: null });
    assert.ok(init.capabilities.codeActionProvider);
    await connection.sendNotification(InitializedNotification.type, {});

    const uri = pathToFileURL('/work/tasks/filesystem/unknown-tool.json').href;
    const text = fixture('unknown-tool.json');
    let document = TextDocument.create(uri, 'json', 1, text);
    await connection.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId: 'json', version: 1, text } });

    const [diagnostic, ...rest] = await diagnosticsFor(uri, 1);
    assert.equal(rest.length, 0);
    assert.equal(diagnostic!.code, 'unknown-tool');
    assert.equal(document.getText(diagnostic!.range), '"filesystem.list_dir"');

    const actions = await connection.sendRequest(CodeActionRequest.type, {
      textDocument: { uri },
      range: diagnostic!.range,
      context: { diagnostics: [diagnostic!] },
    });
    const fix = actions!.find((a) => 'edit' in a && a.title.includes('filesystem.list_directory'));
    assert.ok(fix && 'edit' in fix, `a quick fix to filesystem.list_directory among ${JSON.stringify(actions)}`);
    const edits = fix.edit!.changes![uri] as TextEdit[];
    const fixed = TextDocument.applyEdits(document, edits);
    assert.ok(fixed.includes('"filesystem.list_directory"'));

    document = TextDocument.update(document, [{ text: fixed }], 2);
    await connection.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri, version: 2 }, contentChanges: [{ text: fixed }] });
    assert.deepEqual(await diagnosticsFor(uri, 2), []);

    // Broken JSON mid-edit: one syntax error, the server keeps working.
    const truncated = fixed.slice(0, 200);
    await connection.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri, version: 3 }, contentChanges: [{ text: truncated }] });
    const syntax = await diagnosticsFor(uri, 3);
    assert.deepEqual(syntax.map((d) => d.code), ['json-syntax']);
  } finally {
    await stop();
  }
});
