/**
 * The language server: LSP requests onto the language service (service.ts) and the workspace (workspace.ts).
 * Wiring only: capabilities, the document and file-change events, and one line per request.
 */
import { fileURLToPath } from 'node:url';
import { TextDocument } from 'vscode-languageserver-textdocument';
import {
  CodeActionKind,
  CodeLensRefreshRequest,
  DidChangeWatchedFilesNotification,
  FileChangeType,
  TextDocuments,
  TextDocumentSyncKind,
  type Connection,
  type InitializeParams,
  type InitializeResult,
} from 'vscode-languageserver';
import { loadRegistry } from '../mcp/registry.ts';
import { CheckRuns } from './check-coverage.ts';
import { runHistory, runView } from '../engine/history.ts';
import { FILE_STATUS_REQUEST, RUN_HISTORY_REQUEST, RUN_VIEW_REQUEST, WORKSPACE_INDEXED_REQUEST, type FileStatus, type RunSummary, type RunView } from '../engine/protocol.ts';
import { getLanguageService, type LanguageService, type OpenFile } from './service.ts';
import { documentKind, Workspace } from './workspace.ts';

export const DEFAULT_DEBOUNCE_MS = 150;

/** Options a client may pass in `initializationOptions`. */
export interface ServerOptions {
  /** Delay between the last edit and the lint; 0 lints on every change at once (benchmarks, tests). */
  debounceMs?: number;
}

export function startServer(connection: Connection): void {
  const documents = new TextDocuments(TextDocument);
  const log = (what: string) => (error: Error) => connection.console.error(`${what}: ${error.stack ?? error.message}`);
  let workspace: Workspace | undefined;
  let service: LanguageService | undefined;
  let canWatchFiles = false;
  let canRefreshLenses = false;
  let canRenameFiles = false;
  let supportsFolders = false;
  const checkRuns = new CheckRuns();

  /** The service and workspace, once the namespace registry has loaded (undefined when it cannot). */
  let resolveReady: (ready: boolean) => void = () => undefined;
  const ready = new Promise<boolean>((resolve) => (resolveReady = resolve));

  /** An open task or template document, parsed once for its current version. */
  const openFile = async (uri: string): Promise<OpenFile | undefined> => {
    if (!(await ready) || !workspace) return undefined;
    const textDocument = documents.get(uri);
    const kind = documentKind(uri);
    if (!textDocument || kind === 'other') return undefined;
    return { kind, document: workspace.parsed(uri)!, textDocument };
  };

  // ---- lifecycle

  connection.onInitialize((params: InitializeParams): InitializeResult => {
    const options = (params.initializationOptions ?? {}) as ServerOptions;
    const debounceMs = typeof options.debounceMs === 'number' && options.debounceMs >= 0 ? options.debounceMs : DEFAULT_DEBOUNCE_MS;
    workspace = new Workspace(documents, { publish: (p) => connection.sendDiagnostics(p), log: (m) => connection.console.error(m) }, { debounceMs });
    const workspaceUris = params.workspaceFolders?.map((f) => f.uri) ?? (params.rootUri ? [params.rootUri] : []);
    let folders = workspaceUris.filter((u) => u.startsWith('file:')).map((u) => fileURLToPath(u));
    if (folders.length === 0 && params.rootPath) folders = [params.rootPath];
    const pending = folders;
    const capabilities = params.capabilities;
    canWatchFiles = capabilities.workspace?.didChangeWatchedFiles?.dynamicRegistration === true;
    canRefreshLenses = capabilities.workspace?.codeLens?.refreshSupport === true;
    canRenameFiles = capabilities.workspace?.workspaceEdit?.resourceOperations?.includes('rename') === true && capabilities.workspace?.workspaceEdit?.documentChanges === true;
    supportsFolders = capabilities.workspace?.workspaceFolders === true;

    loadRegistry().then(
      (registry) => {
        workspace!.setRegistry(registry);
        service = getLanguageService(registry, workspace!, checkRuns);
        resolveReady(true);
        // After the handshake, so the client is not kept waiting by a large workspace: the background pass.
        initialized.then(() => workspace!.setFolders(pending), log('scan'));
      },
      (error: Error) => {
        // A broken namespace file must not take the editor down: say what is wrong and lint nothing.
        connection.window.showErrorMessage(`MCPBench: cannot load the namespace schemas: ${error.message}`);
        connection.console.error(error.stack ?? error.message);
        resolveReady(false);
      },
    );
    return {
      capabilities: {
        textDocumentSync: TextDocumentSyncKind.Incremental,
        codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix] },
        completionProvider: { triggerCharacters: ['"', ':', '.'] },
        hoverProvider: true,
        codeLensProvider: { resolveProvider: false },
        documentSymbolProvider: true,
        definitionProvider: true,
        referencesProvider: true,
        renameProvider: { prepareProvider: true },
        workspaceSymbolProvider: true,
        documentFormattingProvider: true,
        documentRangeFormattingProvider: true,
        foldingRangeProvider: true,
        workspace: supportsFolders ? { workspaceFolders: { supported: true, changeNotifications: true } } : undefined,
      },
      serverInfo: { name: 'mcpbench-language-server' },
    };
  });

  let resolveInitialized: () => void = () => undefined;
  const initialized = new Promise<void>((resolve) => (resolveInitialized = resolve));
  connection.onInitialized(() => {
    resolveInitialized();
    if (canWatchFiles) {
      connection.client
        .register(DidChangeWatchedFilesNotification.type, {
          watchers: [{ globPattern: '**/*.json' }],
        })
        .catch(log('register file watchers'));
    }
    if (supportsFolders) {
      connection.workspace.onDidChangeWorkspaceFolders((event) => {
        const removed = event.removed.map((f) => fileURLToPath(f.uri));
        const added = event.added.map((f) => fileURLToPath(f.uri));
        void ready.then(() => workspace?.setFolders([...workspace.workspaceFolders.filter((f) => !removed.includes(f)), ...added]));
      });
    }
  });

  // ---- documents and files

  // onDidChangeContent also fires on open.
  documents.onDidChangeContent((e) => void ready.then((ok) => ok && workspace?.documentChanged(e.document.uri)));
  documents.onDidClose((e) => {
    const uri = e.document.uri;
    void ready.then((ok) => {
      if (ok) workspace?.documentClosed(uri);
      else void connection.sendDiagnostics({ uri, diagnostics: [] });
    });
  });

  connection.onDidChangeWatchedFiles((params) => {
    let checksChanged = false;
    for (const change of params.changes) {
      if (/\/runs\/check-[^/]*\/checks\.json$/.test(change.uri)) {
        checksChanged = true;
        continue;
      }
      if (change.uri.startsWith('file:')) void ready.then((ok) => ok && workspace?.diskChanged(fileURLToPath(change.uri), change.type === FileChangeType.Deleted));
    }
    if (checksChanged && canRefreshLenses) connection.sendRequest(CodeLensRefreshRequest.type).catch(log('refresh code lenses'));
  });

  // ---- requests: each one line onto the service

  const withFile = <P extends { textDocument: { uri: string } }, R>(fallback: R, answer: (file: OpenFile, params: P) => R) => async (params: P): Promise<R> => {
    const file = await openFile(params.textDocument.uri);
    return file && service ? answer(file, params) : fallback;
  };

  connection.onCompletion(withFile([], (file, p) => service!.doComplete(file, p.position)));
  connection.onHover(withFile(null, (file, p) => service!.doHover(file, p.position)));
  connection.onCodeAction(withFile([], (file, p) => service!.getCodeActions(file, p.range, p.context.diagnostics)));
  connection.onCodeLens(withFile([], (file) => service!.getCodeLenses(file)));
  connection.onDocumentSymbol(withFile([], (file) => service!.findDocumentSymbols(file)));
  connection.onDefinition(withFile([], (file, p) => service!.findDefinition(file, p.position)));
  connection.onReferences(withFile([], (file, p) => service!.findReferences(file, p.position, p.context.includeDeclaration)));
  connection.onPrepareRename(withFile(null, (file, p) => service!.prepareRename(file, p.position)));
  connection.onRenameRequest(withFile(null, (file, p) => service!.doRename(file, p.position, p.newName, { version: file.textDocument.version, canRenameFiles })));
  connection.onDocumentFormatting(withFile([], (file, p) => service!.format(file, undefined, p.options)));
  connection.onDocumentRangeFormatting(withFile([], (file, p) => service!.format(file, p.range, p.options)));
  connection.onFoldingRanges(withFile([], (file) => service!.getFoldingRanges(file)));
  connection.onWorkspaceSymbol(async (params) => ((await ready) && service ? service.findWorkspaceSymbols(params.query) : []));
  // Resolves once the background pass has linted every file found so far (tests, benchmarks, a client that waits).
  connection.onRequest(WORKSPACE_INDEXED_REQUEST, async (): Promise<{ files: number }> => {
    if (!(await ready) || !workspace) return { files: 0 };
    await initialized;
    await workspace.idle();
    return { files: [...workspace.all()].length };
  });
  connection.onRequest(FILE_STATUS_REQUEST, async (params: { uri: string }): Promise<FileStatus> =>
    (await ready) && service ? service.fileStatus(params.uri) : { kind: 'other', label: params.uri, errors: [{ line: 1, code: 'server', message: 'the namespace schemas did not load (see the MCPBench output)' }] },
  );
  // The runner panel's history: run folders read through the record and derived as every reader derives them.
  connection.onRequest(RUN_HISTORY_REQUEST, (params: { directory: string; limit?: number }): RunSummary[] => runHistory(params.directory, params.limit));
  connection.onRequest(RUN_VIEW_REQUEST, async (params: { directory: string }): Promise<RunView | { error: string }> => {
    try {
      return runView(params.directory);
    } catch (error) {
      return { error: (error as Error).message };
    }
  });

  documents.listen(connection);
  connection.listen();
}
