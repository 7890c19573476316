/**
 * The workspace as the language server sees it: every task and template file, opened or not, linted and
 * indexed. Open documents are linted as they change (debounced) from the editor's text; files on disk are linted
 * by a background pass after start-up and again when they change, a slice at a time so requests are answered in
 * between. Each file's findings are published whether it is open or not (workspace diagnostics), with the
 * set-wide duplicate-id rule kept current across all of them.
 *
 * Parse once: an open document's current version is parsed into one JsonDocument that the lint and every
 * feature request share (`parsed`); a closed file keeps only its findings and its index, not its text.
 */
import { readFileSync } from 'node:fs';
import { basename, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Diagnostic as LspDiagnostic, PublishDiagnosticsParams, Range } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { lintTemplateDocument } from '../generator/lint-template.ts';
import type { Registry } from '../mcp/registry.ts';
import { finding } from '../tasks/diagnostics.ts';
import { JsonDocument } from '../tasks/document.ts';
import { collectLintableFiles, isTaskFileName, isTemplateFileName, isWorkspaceTaskPath, isWorkspaceTemplatePath } from '../tasks/files.ts';
import { lintTaskDocument } from '../tasks/lint.ts';
import { toLspDiagnostic } from './convert.ts';
import { indexFile, type FileIndex } from './symbol-index.ts';
import { TaskIdIndex } from './task-index.ts';

export type FileKind = 'task' | 'template' | 'other';

/** One key per file, whatever percent-encoding the client's URI uses: the path, or the URI of an untitled buffer. */
export function fileKey(uri: string): string {
  return uri.startsWith('file:') ? fileURLToPath(uri) : uri;
}

/** What an open document is, by its name (the client sends task and template documents only). */
export function documentKind(uri: string): FileKind {
  const name = basename(fileKey(uri));
  if (isTemplateFileName(name)) return 'template';
  // Untitled buffers and other non-.json names the client sends are tasks being written.
  return isTaskFileName(name) || !name.endsWith('.json') ? 'task' : 'other';
}

export interface WorkspaceFile {
  key: string;
  /** The URI diagnostics are published on (the open document's own URI when open). */
  uri: string;
  kind: 'task' | 'template';
  open: boolean;
  /** The open document's version the findings are for. */
  version?: number;
  /** The single-file findings; the set-wide duplicate-id finding is added when publishing. */
  diagnostics: LspDiagnostic[];
  index: FileIndex;
  /** Whether the last publish had findings (a closed file without findings is never published, only cleared). */
  published: boolean;
}

export interface WorkspaceHost {
  publish(params: PublishDiagnosticsParams): Promise<void>;
  log(message: string): void;
}

export interface WorkspaceOptions {
  debounceMs: number;
  /** How long one background slice may run before yielding to requests. */
  sliceMs?: number;
}

export class Workspace {
  private folders: string[] = [];
  private registry: Registry | undefined;
  private readonly files = new Map<string, WorkspaceFile>();
  private readonly ids = new TaskIdIndex();
  private readonly parses = new Map<string, { version: number; document: JsonDocument }>();
  private readonly pending = new Map<string, NodeJS.Timeout>();
  /** Files on disk waiting for the background pass. */
  private readonly queue = new Set<string>();
  private pumping = false;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly documents: { get(uri: string): TextDocument | undefined; all(): TextDocument[] },
    private readonly host: WorkspaceHost,
    private readonly options: WorkspaceOptions,
  ) {}

  // ---- set-up

  setRegistry(registry: Registry): void {
    this.registry = registry;
  }

  get workspaceFolders(): readonly string[] {
    return this.folders;
  }

  setFolders(folders: string[]): void {
    const removed = this.folders.filter((f) => !folders.includes(f));
    const added = folders.filter((f) => !this.folders.includes(f));
    this.folders = [...folders];
    for (const key of [...this.files.keys()]) {
      if (removed.some((f) => this.isUnder(key, f)) && !this.files.get(key)!.open) this.remove(key);
    }
    this.scan(added);
  }

  /** Queues every task and template file under `folders` for the background pass. */
  scan(folders: string[]): void {
    for (const folder of folders) {
      let found: { tasks: string[]; templates: string[] };
      try {
        found = collectLintableFiles([folder]);
      } catch (error) {
        this.host.log(`scan ${folder}: ${(error as Error).message}`);
        continue;
      }
      for (const file of [...found.tasks, ...found.templates]) if (this.kindUnder(folder, file) !== 'other') this.queue.add(file);
    }
    this.pump();
  }

  /** Resolves when the background pass has nothing left to do (benchmarks, tests, the run pre-check). */
  idle(): Promise<void> {
    if (!this.pumping && this.queue.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  // ---- where things are

  folderOf(path: string): string | undefined {
    return this.folders.find((f) => this.isUnder(path, f));
  }

  private isUnder(path: string, folder: string): boolean {
    return path === folder || path.startsWith(folder.endsWith(sep) ? folder : folder + sep);
  }

  /** A workspace-relative path for messages. */
  label(key: string): string {
    const folder = this.folderOf(key);
    return folder ? relative(folder, key) : key;
  }

  uriOf(key: string): string {
    return this.files.get(key)?.uri ?? (key.startsWith('/') || /^[A-Za-z]:/.test(key) ? pathToFileURL(key).href : key);
  }

  /** What a file on disk is to the workspace: by its path inside its workspace folder. */
  diskKind(path: string): FileKind {
    const folder = this.folderOf(path);
    return folder ? this.kindUnder(folder, path) : 'other';
  }

  private kindUnder(folder: string, path: string): FileKind {
    const rel = relative(folder, path).split(sep).join('/');
    if (isWorkspaceTemplatePath(rel)) return 'template';
    return isWorkspaceTaskPath(rel) ? 'task' : 'other';
  }

  // ---- open documents

  /** The current version of an open document, parsed once for the lint and every request. */
  parsed(uri: string): JsonDocument | undefined {
    const document = this.documents.get(uri);
    if (!document) return undefined;
    const cached = this.parses.get(uri);
    if (cached?.version === document.version) return cached.document;
    const parsed = new JsonDocument(uri, document.getText());
    this.parses.set(uri, { version: document.version, document: parsed });
    return parsed;
  }

  documentChanged(uri: string): void {
    clearTimeout(this.pending.get(uri));
    this.pending.delete(uri);
    const run = () => {
      this.pending.delete(uri);
      this.lintOpen(uri).catch((error: Error) => this.host.log(`lint ${uri}: ${error.stack ?? error.message}`));
    };
    if (this.options.debounceMs <= 0) run();
    else this.pending.set(uri, setTimeout(run, this.options.debounceMs));
  }

  documentClosed(uri: string): void {
    clearTimeout(this.pending.get(uri));
    this.pending.delete(uri);
    this.parses.delete(uri);
    const key = fileKey(uri);
    const file = this.files.get(key);
    if (!file) return;
    file.open = false;
    delete file.version;
    // A workspace file goes back to what is on disk; anything else (untitled, outside the folders) is forgotten.
    if (key.startsWith('/') && this.diskKind(key) !== 'other') {
      this.lintDisk(key);
    } else {
      this.remove(key);
    }
  }

  private async lintOpen(uri: string): Promise<void> {
    const document = this.documents.get(uri);
    const registry = this.registry;
    if (!document || !registry) return;
    const kind = documentKind(uri);
    const key = fileKey(uri);
    if (kind === 'other') {
      if (this.files.has(key)) this.remove(key);
      await this.host.publish({ uri, version: document.version, diagnostics: [] });
      return;
    }
    const version = document.version;
    const parsed = this.parsed(uri)!;
    const { diagnostics, index } = this.lint(kind, parsed, registry);
    if (this.documents.get(uri)?.version !== version) return; // a newer edit is on its way
    this.queue.delete(key);
    this.store({ key, uri, kind, open: true, version, diagnostics, index, published: this.files.get(key)?.published ?? false });
  }

  // ---- files on disk

  /** A watched change on disk. Open documents speak for themselves, not for their file. */
  diskChanged(path: string, deleted: boolean): void {
    if (this.files.get(path)?.open) return;
    if (deleted || this.diskKind(path) === 'other') {
      if (this.files.has(path)) this.remove(path);
      return;
    }
    this.queue.add(path);
    this.pump();
  }

  private lintDisk(path: string): void {
    const registry = this.registry;
    if (!registry) return;
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      if (this.files.has(path)) this.remove(path);
      return;
    }
    const kind = this.diskKind(path);
    if (kind === 'other') return;
    const uri = pathToFileURL(path).href;
    const { diagnostics, index } = this.lint(kind, new JsonDocument(uri, text), registry);
    this.store({ key: path, uri, kind, open: false, diagnostics, index, published: this.files.get(path)?.published ?? false });
  }

  /** Lints queued files a slice at a time, yielding between slices so requests are served meanwhile. */
  private pump(): void {
    if (this.pumping || !this.registry) return;
    this.pumping = true;
    const slice = () => {
      const until = Date.now() + (this.options.sliceMs ?? 20);
      for (const path of this.queue) {
        this.queue.delete(path);
        if (!this.files.get(path)?.open) {
          try {
            this.lintDisk(path);
          } catch (error) {
            this.host.log(`lint ${path}: ${(error as Error).stack ?? error}`);
          }
        }
        if (Date.now() >= until) break;
      }
      if (this.queue.size) {
        setImmediate(slice);
        return;
      }
      this.pumping = false;
      this.idleWaiters.splice(0).forEach((wake) => wake());
    };
    setImmediate(slice);
  }

  // ---- the record

  private lint(kind: 'task' | 'template', document: JsonDocument, registry: Registry): { diagnostics: LspDiagnostic[]; index: FileIndex } {
    const diagnostics = kind === 'task' ? lintTaskDocument(document, registry).diagnostics : lintTemplateDocument(document, registry).diagnostics;
    return { diagnostics: diagnostics.map(toLspDiagnostic), index: indexFile(kind, document) };
  }

  private store(file: WorkspaceFile): void {
    const previous = this.files.get(file.key);
    // The editor's URI of a file and ours may differ in encoding: what was published on the other goes.
    if (previous && previous.uri !== file.uri) {
      if (previous.published) void this.host.publish({ uri: previous.uri, diagnostics: [] });
      file.published = false;
    }
    this.files.set(file.key, file);
    const affected = file.kind === 'task' ? this.ids.set(file.key, file.index.id) : this.ids.delete(file.key);
    this.publish(file.key);
    for (const other of affected) if (other !== file.key) this.publish(other);
  }

  private remove(key: string): void {
    const file = this.files.get(key);
    this.files.delete(key);
    this.parses.delete(file?.uri ?? key);
    const affected = this.ids.delete(key);
    if (file?.published) void this.host.publish({ uri: file.uri, diagnostics: [] });
    for (const other of affected) if (other !== key) this.publish(other);
  }

  /** A file's findings as published: its own, and for a task the set-wide duplicate-id finding. */
  findings(file: WorkspaceFile): LspDiagnostic[] {
    return file.kind === 'task' ? [...file.diagnostics, ...this.duplicateIdDiagnostics(file)] : file.diagnostics;
  }

  private publish(key: string): void {
    const file = this.files.get(key);
    if (!file) return;
    const diagnostics = this.findings(file);
    if (!file.open && diagnostics.length === 0 && !file.published) return;
    file.published = diagnostics.length > 0;
    this.host.publish({ uri: file.uri, ...(file.open ? { version: file.version } : {}), diagnostics }).catch((error: Error) => this.host.log(`publish ${file.uri}: ${error.message}`));
  }

  private idRange(file: WorkspaceFile): Range | undefined {
    return file.index.occurrences.find((o) => o.definition)?.range;
  }

  private duplicateIdDiagnostics(file: WorkspaceFile): LspDiagnostic[] {
    const others = this.ids.others(file.key);
    const range = this.idRange(file);
    if (others.length === 0 || !range) return [];
    const message = `task id \`${file.index.id}\` is also used by ${others.map((o) => this.label(o)).join(', ')}: ids must be unique across the set`;
    const diagnostic = toLspDiagnostic({ ...finding('duplicate-id', { offset: 0, length: 0 }, message), uri: file.uri, start: range.start, end: range.end });
    diagnostic.relatedInformation = others.flatMap((other) => {
      const otherFile = this.files.get(other);
      const otherRange = otherFile && this.idRange(otherFile);
      return otherRange ? [{ location: { uri: otherFile.uri, range: otherRange }, message: 'the same task id' }] : [];
    });
    return [diagnostic];
  }

  // ---- queries

  file(uriOrKey: string): WorkspaceFile | undefined {
    return this.files.get(fileKey(uriOrKey));
  }

  all(): IterableIterator<WorkspaceFile> {
    return this.files.values();
  }

  /** The other task files with the same id as `key`. */
  sameId(key: string): string[] {
    return this.ids.others(key);
  }

  /** Task files with this id. */
  tasksWithId(id: string): WorkspaceFile[] {
    return [...this.files.values()].filter((f) => f.kind === 'task' && f.index.id === id);
  }

  /** Lints a file now if it is queued (a run pre-check cannot wait for the background pass). */
  ensureLinted(key: string): WorkspaceFile | undefined {
    if (this.queue.has(key)) {
      this.queue.delete(key);
      this.lintDisk(key);
    } else if (!this.files.has(key) && key.startsWith('/') && this.diskKind(key) !== 'other') {
      this.lintDisk(key);
    }
    return this.files.get(key);
  }
}
