/**
 * The language server: LSP requests onto the engine. Lints task files as they change (debounced) and offers
 * the linter's fixes as quick fixes.
 */
import { TextDocument } from 'vscode-languageserver-textdocument';
import { TextDocuments, TextDocumentSyncKind, type Connection, type InitializeResult } from 'vscode-languageserver';
import { loadRegistry, type Registry } from '../mcp/registry.ts';
import { JsonDocument } from '../tasks/document.ts';
import { lintTask } from '../tasks/lint.ts';
import { SOURCE, toCodeActions, toLspDiagnostic } from './convert.ts';

const DEBOUNCE_MS = 150;

export function startServer(connection: Connection): void {
  const documents = new TextDocuments(TextDocument);
  const pending = new Map<string, NodeJS.Timeout>();
  let registry: Registry | undefined;
  const registryReady = loadRegistry().then(
    (loaded) => (registry = loaded),
    (error: Error) => {
      // A broken namespace file must not take the editor down: say what is wrong and lint nothing.
      connection.window.showErrorMessage(`MCPBench: cannot load the namespace schemas: ${error.message}`);
      connection.console.error(error.stack ?? error.message);
      return undefined;
    },
  );

  connection.onInitialize(
    (): InitializeResult => ({
      capabilities: {
        textDocumentSync: TextDocumentSyncKind.Incremental,
        codeActionProvider: { codeActionKinds: ['quickfix'] },
      },
      serverInfo: { name: 'mcpbench-language-server' },
    }),
  );

  const validate = async (uri: string) => {
    await registryReady;
    const document = documents.get(uri);
    if (!document || !registry) return;
    const version = document.version;
    const { diagnostics } = lintTask(uri, document.getText(), registry);
    if (documents.get(uri)?.version !== version) return; // a newer edit is on its way
    await connection.sendDiagnostics({ uri, version, diagnostics: diagnostics.map(toLspDiagnostic) });
  };

  const schedule = (uri: string) => {
    clearTimeout(pending.get(uri));
    pending.set(uri, setTimeout(() => {
      pending.delete(uri);
      validate(uri).catch((error: Error) => connection.console.error(`lint ${uri}: ${error.stack ?? error.message}`));
    }, DEBOUNCE_MS));
  };

  documents.onDidOpen((e) => schedule(e.document.uri));
  documents.onDidChangeContent((e) => schedule(e.document.uri));
  documents.onDidClose((e) => {
    clearTimeout(pending.get(e.document.uri));
    pending.delete(e.document.uri);
    void connection.sendDiagnostics({ uri: e.document.uri, diagnostics: [] });
  });

  connection.onCodeAction((params) => {
    const document = documents.get(params.textDocument.uri);
    if (!document) return [];
    const json = new JsonDocument(params.textDocument.uri, document.getText());
    return params.context.diagnostics
      .filter((d) => d.source === SOURCE)
      .flatMap((d) => toCodeActions(params.textDocument.uri, json, d));
  });

  documents.listen(connection);
  connection.listen();
}
