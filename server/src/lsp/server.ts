/**
 * The language server: LSP requests onto the engine and the small modules beside this file. Lints task and
 * template files as they change (debounced), keeps the workspace's task ids current for the set-wide
 * duplicate-id rule (open documents, files on disk, watched changes), and answers completion, hover, code
 * actions, code lenses and document symbols. Wiring only: the logic lives in the modules it calls.
 */
import { readFileSync } from 'node:fs';
import { basename, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { TextDocument } from 'vscode-languageserver-textdocument';
import {
  CodeActionKind,
  CodeLensRefreshRequest,
  DidChangeWatchedFilesNotification,
  FileChangeType,
  TextDocuments,
  TextDocumentSyncKind,
  type CodeAction,
  type Connection,
  type Diagnostic as LspDiagnostic,
  type InitializeParams,
  type InitializeResult,
  type Range,
} from 'vscode-languageserver';
import { lintTemplate } from '../generator/lint-template.ts';
import { loadRegistry, type Registry } from '../mcp/registry.ts';
import { canonicalHash } from '../tasks/hash.ts';
import { finding, toDiagnostic } from '../tasks/diagnostics.ts';
import { JsonDocument } from '../tasks/document.ts';
import { collectTaskFiles, isTaskFileName } from '../tasks/files.ts';
import { lintTask } from '../tasks/lint.ts';
import { addReferenceToolsFix, missingArgumentsFix } from './actions.ts';
import { CheckRuns, taskLenses, type LensCoverage } from './check-coverage.ts';
import { completionsAt } from './completion.ts';
import { fixToCodeAction, SOURCE, toCodeActions, toLspDiagnostic } from './convert.ts';
import { hoverAt } from './hover.ts';
import { parseLoosely } from './json-context.ts';
import { taskOutline } from './outline.ts';
import { readTaskId, TaskIdIndex } from './task-index.ts';

export const DEFAULT_DEBOUNCE_MS = 150;

/** Options a client may pass in `initializationOptions`. */
export interface ServerOptions {
  /** Delay between the last edit and the lint; 0 lints on every change at once (benchmarks, tests). */
  debounceMs?: number;
}

type FileKind = 'task' | 'template' | 'other';

/** Folders collectTaskFiles skips; a watched change inside them is not a task file either. */
const SKIPPED_FOLDERS = new Set(['node_modules', 'dist', 'runs', 'out']);

function fileKind(uri: string): FileKind {
  const name = basename(uri.startsWith('file:') ? fileURLToPath(uri) : uri);
  if (name.endsWith('.template.json')) return 'template';
  // Untitled buffers and other non-.json names the client sends are tasks being written.
  return isTaskFileName(name) || !name.endsWith('.json') ? 'task' : 'other';
}

/** One key per file, whatever percent-encoding the client's URI uses. */
function fileKey(uri: string): string {
  return uri.startsWith('file:') ? fileURLToPath(uri) : uri;
}

interface Linted {
  version: number;
  document: JsonDocument;
  /** The single-file findings; set-wide ones are added when publishing. */
  diagnostics: LspDiagnostic[];
}

export function startServer(connection: Connection): void {
  const documents = new TextDocuments(TextDocument);
  const pending = new Map<string, NodeJS.Timeout>();
  const linted = new Map<string, Linted>();
  const ids = new TaskIdIndex();
  const checkRuns = new CheckRuns();
  let folders: string[] = [];
  let debounceMs = DEFAULT_DEBOUNCE_MS;
  let canWatchFiles = false;
  let canRefreshLenses = false;
  let supportsFolders = false;
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

  const log = (what: string) => (error: Error) => connection.console.error(`${what}: ${error.stack ?? error.message}`);

  // ---- workspace

  const folderOf = (path: string): string | undefined => folders.find((f) => path === f || path.startsWith(f.endsWith(sep) ? f : f + sep));
  const label = (key: string): string => {
    const folder = folderOf(key);
    return folder ? relative(folder, key) : key;
  };
  const openDocument = (key: string) => documents.all().find((d) => fileKey(d.uri) === key);
  const uriOf = (key: string): string => openDocument(key)?.uri ?? (key.startsWith('/') || /^[A-Za-z]:/.test(key) ? pathToFileURL(key).href : key);
  /** Whether a file on disk counts as a workspace task file (the rules of collectTaskFiles). */
  const isWorkspaceTaskFile = (key: string): boolean => {
    const folder = folderOf(key);
    if (!folder || !isTaskFileName(basename(key))) return false;
    return !relative(folder, key).split(sep).slice(0, -1).some((part) => part.startsWith('.') || SKIPPED_FOLDERS.has(part));
  };
  const readDisk = (key: string): string | undefined => {
    try {
      return readFileSync(key, 'utf8');
    } catch {
      return undefined;
    }
  };
  /** Reads a closed file's id from disk into the index. */
  const indexFromDisk = (key: string): string[] => {
    const text = isWorkspaceTaskFile(key) ? readDisk(key) : undefined;
    return ids.set(key, text === undefined ? undefined : readTaskId(text));
  };

  const scanFolders = (scanned: string[]) => {
    const affected = new Set<string>();
    for (const folder of scanned) {
      let files: string[];
      try {
        files = collectTaskFiles([folder]);
      } catch (error) {
        log(`scan ${folder}`)(error as Error);
        continue;
      }
      for (const file of files) if (!openDocument(file)) indexFromDisk(file).forEach((k) => affected.add(k));
    }
    republish(affected);
  };

  // ---- diagnostics

  const duplicateIdDiagnostics = (key: string, document: JsonDocument): LspDiagnostic[] => {
    const others = ids.others(key);
    const idNode = document.nodeAt(['id']);
    if (others.length === 0 || !idNode) return [];
    const message = `task id \`${ids.id(key)}\` is also used by ${others.map(label).join(', ')}: ids must be unique across the set`;
    const diagnostic = toLspDiagnostic(toDiagnostic(document, finding('duplicate-id', { offset: idNode.offset, length: idNode.length }, message)));
    diagnostic.relatedInformation = others.map((other) => ({ location: { uri: uriOf(other), range: idRange(other) }, message: 'the same task id' }));
    return [diagnostic];
  };

  const idRange = (key: string): Range => {
    const text = openDocument(key)?.getText() ?? readDisk(key) ?? '';
    const document = new JsonDocument(key, text);
    const node = document.nodeAt(['id']);
    const zero = { line: 0, character: 0 };
    return node ? { start: document.positionAt(node.offset), end: document.positionAt(node.offset + node.length) } : { start: zero, end: zero };
  };

  const publish = async (uri: string) => {
    const result = linted.get(uri);
    if (!result) return;
    const diagnostics = fileKind(uri) === 'task' ? [...result.diagnostics, ...duplicateIdDiagnostics(fileKey(uri), result.document)] : result.diagnostics;
    await connection.sendDiagnostics({ uri, version: result.version, diagnostics });
  };

  /** Publishes again the open files among `keys` (their set-wide findings changed). */
  const republish = (keys: Iterable<string>) => {
    for (const key of keys) {
      const document = openDocument(key);
      if (document) publish(document.uri).catch(log(`publish ${document.uri}`));
    }
  };

  const validate = async (uri: string) => {
    await registryReady;
    const document = documents.get(uri);
    if (!document || !registry) return;
    const version = document.version;
    const text = document.getText();
    const kind = fileKind(uri);
    if (kind === 'other') {
      await connection.sendDiagnostics({ uri, version, diagnostics: [] });
      return;
    }
    if (kind === 'template') {
      const { diagnostics } = lintTemplate(uri, text, registry);
      linted.set(uri, { version, document: new JsonDocument(uri, text), diagnostics: diagnostics.map(toLspDiagnostic) });
      await publish(uri);
      return;
    }
    const result = lintTask(uri, text, registry);
    if (documents.get(uri)?.version !== version) return; // a newer edit is on its way
    linted.set(uri, { version, document: result.document, diagnostics: result.diagnostics.map(toLspDiagnostic) });
    const key = fileKey(uri);
    const affected = ids.set(key, result.id ?? readTaskId(text));
    await publish(uri);
    republish(affected.filter((k) => k !== key));
  };

  const schedule = (uri: string) => {
    clearTimeout(pending.get(uri));
    pending.delete(uri);
    if (debounceMs <= 0) {
      validate(uri).catch(log(`lint ${uri}`));
      return;
    }
    pending.set(uri, setTimeout(() => {
      pending.delete(uri);
      validate(uri).catch(log(`lint ${uri}`));
    }, debounceMs));
  };

  // ---- lifecycle

  connection.onInitialize((params: InitializeParams): InitializeResult => {
    const options = (params.initializationOptions ?? {}) as ServerOptions;
    if (typeof options.debounceMs === 'number' && options.debounceMs >= 0) debounceMs = options.debounceMs;
    const workspaceUris = params.workspaceFolders?.map((f) => f.uri) ?? (params.rootUri ? [params.rootUri] : []);
    folders = workspaceUris.filter((u) => u.startsWith('file:')).map((u) => fileURLToPath(u));
    if (folders.length === 0 && params.rootPath) folders = [params.rootPath];
    canWatchFiles = params.capabilities.workspace?.didChangeWatchedFiles?.dynamicRegistration === true;
    canRefreshLenses = params.capabilities.workspace?.codeLens?.refreshSupport === true;
    supportsFolders = params.capabilities.workspace?.workspaceFolders === true;
    return {
      capabilities: {
        textDocumentSync: TextDocumentSyncKind.Incremental,
        codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix] },
        completionProvider: { triggerCharacters: ['"', ':', '.'] },
        hoverProvider: true,
        codeLensProvider: { resolveProvider: false },
        documentSymbolProvider: true,
        workspace: supportsFolders ? { workspaceFolders: { supported: true, changeNotifications: true } } : undefined,
      },
      serverInfo: { name: 'mcpbench-language-server' },
    };
  });

  connection.onInitialized(() => {
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
        folders = [...folders.filter((f) => !removed.includes(f)), ...added];
        const affected = new Set<string>();
        for (const folder of removed) {
          // Files of a removed folder no longer count, unless open.
          for (const key of collectKeysUnder(folder)) if (!openDocument(key)) ids.delete(key).forEach((k) => affected.add(k));
        }
        republish(affected);
        setImmediate(() => scanFolders(added));
      });
    }
    // After the handshake, so the client is not kept waiting by a large workspace.
    setImmediate(() => scanFolders(folders));
  });

  const collectKeysUnder = (folder: string): string[] => {
    try {
      return collectTaskFiles([folder]);
    } catch {
      return [];
    }
  };

  // ---- documents and files

  // onDidChangeContent also fires on open.
  documents.onDidChangeContent((e) => schedule(e.document.uri));
  documents.onDidClose((e) => {
    const uri = e.document.uri;
    clearTimeout(pending.get(uri));
    pending.delete(uri);
    linted.delete(uri);
    void connection.sendDiagnostics({ uri, diagnostics: [] });
    if (fileKind(uri) === 'task') republish(indexFromDisk(fileKey(uri)));
  });

  connection.onDidChangeWatchedFiles((params) => {
    const affected = new Set<string>();
    let journalChanged = false;
    for (const change of params.changes) {
      if (/\/runs\/check-[^/]*\/checks\.json$/.test(change.uri)) {
        journalChanged = true;
        continue;
      }
      if (!change.uri.startsWith('file:')) continue;
      const key = fileKey(change.uri);
      if (openDocument(key)) continue; // an open document speaks for itself, not its file on disk
      const changed = change.type === FileChangeType.Deleted ? ids.delete(key) : indexFromDisk(key);
      changed.forEach((k) => affected.add(k));
    }
    republish(affected);
    if (journalChanged && canRefreshLenses) connection.sendRequest(CodeLensRefreshRequest.type).catch(log('refresh code lenses'));
  });

  // ---- requests

  const taskDocument = (uri: string): TextDocument | undefined => {
    const document = documents.get(uri);
    return document && registry && fileKind(uri) === 'task' ? document : undefined;
  };

  connection.onCompletion(async (params) => {
    await registryReady;
    const document = taskDocument(params.textDocument.uri);
    if (!document || !registry) return [];
    return completionsAt(document.getText(), document.offsetAt(params.position), registry);
  });

  connection.onHover(async (params) => {
    await registryReady;
    const document = taskDocument(params.textDocument.uri);
    if (!document || !registry) return null;
    const key = fileKey(document.uri);
    return hoverAt(document.getText(), document.offsetAt(params.position), registry, { fileLabel: label(key), sameId: ids.others(key).map(label) });
  });

  connection.onCodeAction(async (params) => {
    await registryReady;
    const uri = params.textDocument.uri;
    const document = documents.get(uri);
    if (!document) return [];
    const text = document.getText();
    const json = new JsonDocument(uri, text);
    const ours = params.context.diagnostics.filter((d) => d.source === SOURCE);
    const actions: CodeAction[] = ours.flatMap((d) => toCodeActions(uri, json, d));
    if (!registry || fileKind(uri) !== 'task') return actions;

    const seen = new Set<string>();
    for (const diagnostic of ours) {
      if (diagnostic.code !== 'predicate-arguments' && diagnostic.code !== 'tool-arguments') continue;
      const fix = missingArgumentsFix(text, document.offsetAt(diagnostic.range.start), registry);
      if (!fix || seen.has(fix.title)) continue;
      seen.add(fix.title);
      actions.push(fixToCodeAction(uri, json, fix, [diagnostic], false));
    }
    const notAvailable = ours.filter((d) => d.code === 'tool-not-available');
    const offset = document.offsetAt(params.range.start);
    const inside = (key: string) => {
      const node = json.nodeAt([key]);
      return node !== undefined && offset >= node.offset && offset <= node.offset + node.length;
    };
    if (notAvailable.length || inside('available_tools') || inside('reference_solutions')) {
      const fix = addReferenceToolsFix(text, registry);
      if (fix) actions.push(fixToCodeAction(uri, json, fix, notAvailable, false));
    }
    return actions;
  });

  connection.onCodeLens(async (params) => {
    await registryReady;
    const document = taskDocument(params.textDocument.uri);
    if (!document) return [];
    const text = document.getText();
    const id = parseLoosely(text).id;
    const folder = document.uri.startsWith('file:') ? folderOf(fileKey(document.uri)) ?? folders[0] : folders[0];
    let coverage: LensCoverage = {};
    const check = typeof id === 'string' && folder ? checkRuns.latestFor(folder, id) : undefined;
    if (check) {
      try {
        const task = JSON.parse(text) as Record<string, unknown>;
        coverage = { coverage: check.coverage, stale: canonicalHash(task) !== check.taskHash };
      } catch {
        coverage = {}; // mid-edit syntax error: no predicate to cover
      }
    }
    return taskLenses(document.uri, text, coverage);
  });

  connection.onDocumentSymbol((params) => {
    const document = documents.get(params.textDocument.uri);
    return document && fileKind(document.uri) === 'task' ? taskOutline(document.getText()) : [];
  });

  documents.listen(connection);
  connection.listen();
}
