/**
 * The language service: one facade over the feature modules beside it, as vscode-json-languageservice puts
 * `doComplete`, `doHover`, `findDocumentSymbols`... behind `getLanguageService`. Every feature takes the open
 * document the workspace parsed once for its current version (`OpenFile`); none parses the text again. JSON
 * editing that has nothing to do with tasks (formatting, folding) is vscode-json-languageservice's own, the same
 * VS Code gives plain JSON files.
 */
import { getLanguageService as getJsonLanguageService } from 'vscode-json-languageservice';
import type {
  CodeAction,
  CodeLens,
  CompletionItem,
  Diagnostic as LspDiagnostic,
  DocumentSymbol,
  FoldingRange,
  FormattingOptions,
  Hover,
  Location,
  Position,
  Range,
  SymbolInformation,
  TextEdit,
  WorkspaceEdit,
} from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { FileStatus } from '../engine/protocol.ts';
import type { Registry } from '../mcp/registry.ts';
import type { JsonDocument } from '../tasks/document.ts';
import { lintTask } from '../tasks/lint.ts';
import { readText } from '../tasks/files.ts';
import { addReferenceToolsFix, missingArgumentsFix } from './actions.ts';
import type { CheckRuns } from './check-coverage.ts';
import { completionsAt } from './completion.ts';
import { fixToCodeAction, SOURCE, toCodeActions } from './convert.ts';
import { hoverAt } from './hover.ts';
import { lensCoverage, taskLenses, templateLenses } from './lenses.ts';
import { findDefinition, findReferences, prepareRename, renameTask, workspaceSymbols, type RenameOptions } from './navigation.ts';
import { taskOutline } from './outline.ts';
import { documentKind, fileKey, type Workspace } from './workspace.ts';

/** An open task or template document and its one parse. */
export interface OpenFile {
  kind: 'task' | 'template';
  /** The parse of the current version, shared by the lint and every feature. */
  document: JsonDocument;
  /** The editor's text document (for the JSON editing features). */
  textDocument: TextDocument;
}

export interface LanguageService {
  doComplete(file: OpenFile, position: Position): CompletionItem[];
  doHover(file: OpenFile, position: Position): Hover | null;
  getCodeActions(file: OpenFile, range: Range, diagnostics: LspDiagnostic[]): CodeAction[];
  getCodeLenses(file: OpenFile): CodeLens[];
  findDocumentSymbols(file: OpenFile): DocumentSymbol[];
  findDefinition(file: OpenFile, position: Position): Location[];
  findReferences(file: OpenFile, position: Position, includeDeclaration: boolean): Location[];
  prepareRename(file: OpenFile, position: Position): { range: Range; placeholder: string } | null;
  doRename(file: OpenFile, position: Position, newName: string, options: RenameOptions): WorkspaceEdit;
  findWorkspaceSymbols(query: string): SymbolInformation[];
  format(file: OpenFile, range: Range | undefined, options: FormattingOptions): TextEdit[];
  getFoldingRanges(file: OpenFile): FoldingRange[];
  fileStatus(uri: string): FileStatus;
}

export function getLanguageService(registry: Registry, workspace: Workspace, checkRuns: CheckRuns): LanguageService {
  const json = getJsonLanguageService({});
  const folderFor = (uri: string) => (uri.startsWith('file:') ? workspace.folderOf(fileKey(uri)) : undefined) ?? workspace.workspaceFolders[0];

  return {
    doComplete: (file, position) => (file.kind === 'task' ? completionsAt(file.document, file.document.offsetAt(position), registry) : []),

    doHover(file, position) {
      if (file.kind !== 'task') return null;
      const key = fileKey(file.document.uri);
      return hoverAt(file.document, file.document.offsetAt(position), registry, { fileLabel: workspace.label(key), sameId: workspace.sameId(key).map((k) => workspace.label(k)) });
    },

    getCodeActions(file, range, diagnostics) {
      const { document } = file;
      const uri = document.uri;
      const ours = diagnostics.filter((d) => d.source === SOURCE);
      const actions: CodeAction[] = ours.flatMap((d) => toCodeActions(uri, document, d));
      if (file.kind === 'task') {
        for (const diagnostic of ours) {
          if (diagnostic.code !== 'predicate-arguments' && diagnostic.code !== 'tool-arguments') continue;
          const fix = missingArgumentsFix(document, document.offsetAt(diagnostic.range.start), registry);
          if (fix) actions.push(fixToCodeAction(uri, document, fix, [diagnostic], false));
        }
        const notAvailable = ours.filter((d) => d.code === 'tool-not-available');
        const offset = document.offsetAt(range.start);
        const inside = (key: string) => {
          const node = document.nodeAt([key]);
          return node !== undefined && offset >= node.offset && offset <= node.offset + node.length;
        };
        if (notAvailable.length || inside('available_tools') || inside('reference_solutions')) {
          const fix = addReferenceToolsFix(document, registry);
          if (fix) actions.push(fixToCodeAction(uri, document, fix, notAvailable, false));
        }
      }
      return distinctEdits(actions);
    },

    getCodeLenses(file) {
      const folder = folderFor(file.document.uri);
      return file.kind === 'task' ? taskLenses(file.document, lensCoverage(file.document, folder, checkRuns)) : templateLenses(file.document, folder);
    },

    findDocumentSymbols: (file) => (file.kind === 'task' ? taskOutline(file.document) : []),
    findDefinition: (file, position) => findDefinition(file.kind, file.document, position, registry, workspace),
    findReferences: (file, position, includeDeclaration) => findReferences(file.kind, file.document, position, includeDeclaration, registry, workspace),
    prepareRename: (file, position) => prepareRename(file.kind, file.document, position) ?? null,
    doRename: (file, position, newName, options) => renameTask(file.document, position, newName, workspace, options),
    findWorkspaceSymbols: (query) => workspaceSymbols(query, workspace),
    format: (file, range, options) => json.format(file.textDocument, range, options),
    getFoldingRanges: (file) => json.getFoldingRanges(file.textDocument),

    fileStatus(uri) {
      const key = fileKey(uri);
      const label = workspace.label(key);
      const file = workspace.ensureLinted(key);
      if (file) {
        const errors = workspace.findings(file).filter((d) => d.severity === 1).map((d) => ({ line: d.range.start.line + 1, code: String(d.code), message: typeof d.message === 'string' ? d.message : d.message.value }));
        return { kind: file.kind, label, errors, ...(file.index.id !== undefined ? { id: file.index.id } : {}) };
      }
      // Inside a workspace folder, what the workspace does not count is no task; outside, a file is judged by its name.
      if (workspace.folderOf(key) || documentKind(uri) !== 'task' || !key.startsWith('/')) return { kind: 'other', label, errors: [] };
      let text: string;
      try {
        text = readText(key);
      } catch (error) {
        return { kind: 'other', label, errors: [{ line: 1, code: 'io', message: (error as Error).message }] };
      }
      const result = lintTask(uri, text, registry);
      const errors = result.diagnostics.filter((d) => d.severity === 'error').map((d) => ({ line: d.start.line + 1, code: d.code, message: d.message }));
      return { kind: 'task', label, errors, ...(result.id !== undefined ? { id: result.id } : {}) };
    },
  };
}

/** One action per distinct change: the same edit offered twice (a finding's fix and a wider fix that happens to equal it) is offered once. */
function distinctEdits(actions: CodeAction[]): CodeAction[] {
  const seen = new Set<string>();
  return actions.filter((action) => {
    const key = JSON.stringify(action.edit ?? action.command ?? action.title);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
