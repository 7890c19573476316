/**
 * Navigation across the set, as rust-analyzer and the TypeScript server do it for code: go to definition (a tool
 * or predicate name to its entry in schemas/servers/<ns>.json, a namespace to its file, a task's `template.id` to
 * the template, a template placeholder to its parameter), find references (a tool, predicate or template across
 * every task and template of the workspace, opened or not), rename a task id (the file follows its name), and
 * workspace symbols (task and template ids).
 */
import { readFileSync, existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  ResponseError,
  ErrorCodes,
  SymbolKind,
  type Location,
  type Range,
  type SymbolInformation,
  type TextDocumentEdit,
  type RenameFile,
  type WorkspaceEdit,
} from 'vscode-languageserver';
import { rawOffset } from '../generator/lint-template.ts';
import { findPlaceholders } from '../generator/placeholders.ts';
import { type Registry, splitQualified } from '../mcp/registry.ts';
import { JsonDocument } from '../tasks/document.ts';
import { classifyPath, rangeOf, stringNodeAt } from './json-context.ts';
import { indexFile, occurrenceAt, type Occurrence } from './symbol-index.ts';
import { fileKey, type Workspace, type WorkspaceFile } from './workspace.ts';
import { TASK_ID_PATTERN } from '../tasks/vocabulary.ts';

type Position = { line: number; character: number };

/** The namespace files, parsed once each (they do not change while the server runs). */
const namespaceDocuments = new Map<string, JsonDocument | undefined>();

function namespaceDocument(path: string): JsonDocument | undefined {
  if (!namespaceDocuments.has(path)) {
    let document: JsonDocument | undefined;
    try {
      document = new JsonDocument(pathToFileURL(path).href, readFileSync(path, 'utf8'));
    } catch {
      document = undefined;
    }
    namespaceDocuments.set(path, document);
  }
  return namespaceDocuments.get(path);
}

/** Where a tool or predicate is declared: its `name` in its namespace file. */
export function declarationOf(registry: Registry, category: 'tool' | 'predicate', qualified: string): Location | undefined {
  const [namespace, name] = splitQualified(qualified);
  const info = registry.get(namespace);
  if (!info || name === undefined) return undefined;
  const document = namespaceDocument(info.file);
  if (!document) return undefined;
  const list = category === 'tool' ? info.server.tools : info.server.predicates;
  const index = list.findIndex((entry) => entry.name === name);
  const node = index >= 0 ? document.nodeAt([category === 'tool' ? 'tools' : 'predicates', index, 'name']) : undefined;
  return node ? { uri: document.uri, range: rangeOf(document, node) } : undefined;
}

/** A namespace's file, at its `namespace` key. */
function namespaceFileLocation(registry: Registry, namespace: string): Location | undefined {
  const info = registry.get(namespace);
  const document = info && namespaceDocument(info.file);
  const node = document?.nodeAt(['namespace']);
  return document && node ? { uri: document.uri, range: rangeOf(document, node) } : undefined;
}

function templateDefinitions(workspace: Workspace, id: string): Location[] {
  return [...workspace.all()].flatMap((file) =>
    file.kind === 'template' && file.index.id === id ? file.index.occurrences.filter((o) => o.definition).map((o) => ({ uri: file.uri, range: o.range })) : [],
  );
}

/** The occurrence under the cursor in an open document (indexed from its current parse). */
function occurrenceUnder(kind: 'task' | 'template', document: JsonDocument, position: Position): Occurrence | undefined {
  return occurrenceAt(indexFile(kind, document), position);
}

export function findDefinition(kind: 'task' | 'template', document: JsonDocument, position: Position, registry: Registry, workspace: Workspace): Location[] {
  const offset = document.offsetAt(position);
  if (kind === 'template') {
    const placeholder = placeholderAt(document, offset);
    if (placeholder) {
      const key = document.keyNodeAt(['parameters', placeholder]);
      return key ? [{ uri: document.uri, range: rangeOf(document, key) }] : [];
    }
  }
  const occurrence = occurrenceUnder(kind, document, position);
  if (occurrence?.category === 'tool' || occurrence?.category === 'predicate') {
    const location = declarationOf(registry, occurrence.category, occurrence.name);
    return location ? [location] : [];
  }
  if (occurrence?.category === 'template' && !occurrence.definition) return templateDefinitions(workspace, occurrence.name);
  // A namespace in `server` or a key of `initial_state`: its file.
  const at = stringNodeAt(document, offset);
  if (at) {
    const path = kind === 'template' && at.path[0] === 'task' ? at.path.slice(1) : at.path;
    const context = classifyPath(path);
    const namespace =
      context.kind === 'task' && path[0] === 'server' && !at.isKey ? String(at.node.value)
      : context.kind === 'task' && path[0] === 'initial_state' && path.length === 2 && at.isKey ? String(at.node.value)
      : undefined;
    const location = namespace ? namespaceFileLocation(registry, namespace) : undefined;
    if (location) return [location];
  }
  return [];
}

/** The parameter a `{{name}}` placeholder under `offset` names, in a template. */
function placeholderAt(document: JsonDocument, offset: number): string | undefined {
  const at = stringNodeAt(document, offset);
  if (!at) return undefined;
  const value = String(at.node.value);
  for (const ref of findPlaceholders(value)) {
    if (ref.malformed) continue;
    const start = rawOffset(document.text, at.node, ref.index);
    const end = rawOffset(document.text, at.node, ref.index + ref.length);
    if (offset >= start && offset <= end) return ref.name;
  }
  return undefined;
}

export function findReferences(kind: 'task' | 'template', document: JsonDocument, position: Position, includeDeclaration: boolean, registry: Registry, workspace: Workspace): Location[] {
  const occurrence = occurrenceUnder(kind, document, position);
  if (!occurrence) return [];
  const { category, name } = occurrence;
  const locations: Location[] = [];
  if (includeDeclaration && (category === 'tool' || category === 'predicate')) {
    const declaration = declarationOf(registry, category, name);
    if (declaration) locations.push(declaration);
  }
  const current = fileKey(document.uri);
  const add = (uri: string, occurrences: Occurrence[]) => {
    for (const o of occurrences) if (o.category === category && o.name === name && (includeDeclaration || !o.definition)) locations.push({ uri, range: o.range });
  };
  // The document asked about speaks for itself (its current parse, not the index of its last lint).
  add(document.uri, indexFile(kind, document).occurrences);
  for (const file of workspace.all()) if (file.key !== current) add(file.uri, file.index.occurrences);
  return locations;
}

/** The inside of a string token (without its quotes). */
function innerRange(range: Range): Range {
  return { start: { line: range.start.line, character: range.start.character + 1 }, end: { line: range.end.line, character: range.end.character - 1 } };
}

/** Renaming works on a task's own id: the range and the current id, or undefined elsewhere. */
export function prepareRename(kind: 'task' | 'template', document: JsonDocument, position: Position): { range: Range; placeholder: string } | undefined {
  if (kind !== 'task') return undefined;
  const occurrence = occurrenceUnder(kind, document, position);
  if (occurrence?.category !== 'task' || !occurrence.definition) return undefined;
  return { range: innerRange(occurrence.range), placeholder: occurrence.name };
}

export interface RenameOptions {
  /** The open document's version, for a versioned edit. */
  version: number | null;
  /** Whether the client applies file renames (`workspace.workspaceEdit.resourceOperations` has `rename`). */
  canRenameFiles: boolean;
}

/** A task id renamed: the id, and the file when its name is `<id>.json`. Refused with a message the editor shows. */
export function renameTask(document: JsonDocument, position: Position, newId: string, workspace: Workspace, options: RenameOptions): WorkspaceEdit {
  const prepared = prepareRename('task', document, position);
  if (!prepared) throw new ResponseError(ErrorCodes.InvalidRequest, 'Only a task id can be renamed here: put the cursor on the value of `id`.');
  const oldId = prepared.placeholder;
  if (!TASK_ID_PATTERN.test(newId)) {
    throw new ResponseError(ErrorCodes.InvalidParams, `\`${newId}\` is not a task id: lower-case letters, digits, \`.\`, \`_\` and \`-\`, starting with a letter or digit.`);
  }
  const key = fileKey(document.uri);
  const taken = workspace.tasksWithId(newId).filter((f: WorkspaceFile) => f.key !== key);
  if (taken.length) throw new ResponseError(ErrorCodes.InvalidParams, `task id \`${newId}\` is already used by ${taken.map((f) => workspace.label(f.key)).join(', ')}`);
  const edits = [{ range: prepared.range, newText: newId }];
  if (options.canRenameFiles && document.uri.startsWith('file:') && basename(key) === `${oldId}.json`) {
    const target = join(dirname(key), `${newId}.json`);
    if (existsSync(target)) throw new ResponseError(ErrorCodes.InvalidParams, `${workspace.label(target)} exists already: the file cannot take the new id's name`);
    const newUri = pathToFileURL(target).href;
    // The file first, then the id in the renamed file: the edit holds whichever order a client applies it in.
    const rename: RenameFile = { kind: 'rename', oldUri: document.uri, newUri };
    const edit: TextDocumentEdit = { textDocument: { uri: newUri, version: null }, edits };
    return { documentChanges: [rename, edit] };
  }
  const changes: TextDocumentEdit[] = [{ textDocument: { uri: document.uri, version: options.version }, edits }];
  return { documentChanges: changes };
}

/** Task and template ids of the workspace whose name holds the query's characters in order (case-insensitive). */
export function workspaceSymbols(query: string, workspace: Workspace): SymbolInformation[] {
  const wanted = query.toLowerCase();
  const matches = (name: string) => {
    let at = 0;
    for (const c of name.toLowerCase()) if (c === wanted[at]) at++;
    return at === wanted.length;
  };
  const symbols: SymbolInformation[] = [];
  for (const file of workspace.all()) {
    for (const o of file.index.occurrences) {
      if (!o.definition || !matches(o.name)) continue;
      symbols.push({
        name: o.name,
        kind: o.category === 'template' ? SymbolKind.Class : SymbolKind.Object,
        location: { uri: file.uri, range: o.range },
        containerName: `${o.category} · ${workspace.label(file.key)}`,
      });
    }
  }
  return symbols.sort((a, b) => a.name.localeCompare(b.name));
}
