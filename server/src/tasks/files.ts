import { isUtf8 } from 'node:buffer';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative, resolve, sep } from 'node:path';
import { McpbenchError } from '../errors.ts';
/** JSON files that live beside tasks but are not tasks. */
const NOT_TASKS = new Set(['package.json', 'package-lock.json', 'tsconfig.json', 'jsconfig.json']);
const SKIPPED_FOLDERS = new Set(['node_modules', 'dist', 'runs', 'out']);

export function isTaskFileName(name: string): boolean {
  return name.endsWith('.json') && !name.endsWith('.template.json') && !name.endsWith('.schema.json') && !NOT_TASKS.has(name);
}

export class PathError extends McpbenchError {
  static override readonly code: string = 'path';
}

export function isTemplateFileName(name: string): boolean {
  return name.endsWith('.template.json');
}

/**
 * The files named by `paths`: files as given, folders searched recursively for names `accept` takes (skipping
 * hidden folders, node_modules, dist and runs). Sorted within each folder so output is stable.
 */
function collectFiles(paths: string[], accept: (name: string) => boolean): string[] {
  const out: string[] = [];
  const visit = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.name.startsWith('.')) continue;
      const full = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED_FOLDERS.has(entry.name)) visit(full);
      } else if (entry.isFile() && accept(entry.name)) out.push(full);
    }
  };
  for (const path of paths) {
    let stat;
    try {
      stat = statSync(path);
    } catch {
      throw new PathError(`${path}: no such file or folder`);
    }
    if (stat.isDirectory()) visit(path);
    else out.push(path);
  }
  return [...new Set(out.map((p) => resolve(p)))];
}

/** The task files named by `paths` (a file named explicitly is taken whatever its name). */
export function collectTaskFiles(paths: string[]): string[] {
  return collectFiles(paths, isTaskFileName);
}

/** Task files and template grammars (`*.template.json`) named by `paths`, for the linter. */
export function collectLintableFiles(paths: string[]): { tasks: string[]; templates: string[] } {
  const files = collectFiles(paths, (name) => isTaskFileName(name) || isTemplateFileName(name));
  return { tasks: files.filter((f) => !isTemplateFileName(f)), templates: files.filter(isTemplateFileName) };
}

/** Folders a workspace scan never enters (besides hidden ones). */
export const SKIPPED_FOLDER_NAMES: ReadonlySet<string> = SKIPPED_FOLDERS;

/** The folder segments of a `/`-separated path, less its file name. */
function folderSegments(path: string): string[] {
  return path.replace(/\\/g, '/').split('/').slice(0, -1);
}

function inSkippedFolder(path: string): boolean {
  return folderSegments(path).some((part) => (part.startsWith('.') && part !== '.' && part !== '..') || SKIPPED_FOLDERS.has(part));
}

/**
 * Whether a path relative to its workspace folder is a task file as the editor sees a workspace: a
 * JSON file under a `tasks/` folder, or a `*.task.json` anywhere, outside hidden folders, node_modules, dist,
 * out and runs. (The CLI lints whatever files and folders it is given; a workspace holds other JSON too.)
 */
export function isWorkspaceTaskPath(path: string): boolean {
  const name = path.replace(/\\/g, '/').split('/').pop() ?? '';
  if (!isTaskFileName(name) || inSkippedFolder(path)) return false;
  return name.endsWith('.task.json') || folderSegments(path).includes('tasks');
}

/** Whether a path relative to its workspace folder is a template grammar: `*.template.json` outside skipped folders. */
export function isWorkspaceTemplatePath(path: string): boolean {
  return isTemplateFileName(path) && !inSkippedFolder(path);
}

/**
 * A task or template file's text. UTF-8 only: a byte-order mark is accepted (and dropped); bytes that are
 * not UTF-8 (a Latin-1 file) are an error naming their offset, never silently replaced.
 */
export function readText(path: string): string {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw new PathError(`${path}: cannot read: ${(error as Error).message}`);
  }
  return decodeUtf8(path, bytes);
}

const BOM = [0xef, 0xbb, 0xbf];

/** UTF-8 bytes as text, without a leading byte-order mark; a PathError at the first byte that is not UTF-8. */
export function decodeUtf8(path: string, bytes: Buffer): string {
  const start = bytes.length >= 3 && BOM.every((b, i) => bytes[i] === b) ? 3 : 0;
  const body = bytes.subarray(start);
  if (isUtf8(body)) return body.toString('utf8');
  const offset = start + firstInvalidUtf8(body);
  const line = bytes.subarray(0, offset).filter((b) => b === 0x0a).length + 1;
  throw new PathError(
    `${path}:${line}: not UTF-8: byte 0x${bytes[offset]!.toString(16).padStart(2, '0')} at byte offset ${offset} is not valid UTF-8 (save the file as UTF-8; Latin-1 and other encodings are not read)`,
  );
}

/** The offset of the first byte that does not begin or continue a well-formed UTF-8 sequence. */
function firstInvalidUtf8(bytes: Buffer): number {
  for (let i = 0; i < bytes.length; ) {
    const b = bytes[i]!;
    const length = b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    if (length === 0 || i + length > bytes.length) return i;
    if (length > 1 && !isUtf8(bytes.subarray(i, i + length))) return i;
    i += length;
  }
  return bytes.length;
}

/** Files beside tasks in a set, batch or history folder that are not tasks. */
export function isSetMetadataFile(name: string): boolean {
  return name === 'set.json' || name === 'batch.json' || name.endsWith('.batch.json') || /^Historical-\d{4}-\d{2}\.json$/.test(name) || name.endsWith('.sealed.json');
}

/** The task files under `dir` (recursively), without the set, batch and history manifests. */
export function taskFilesIn(dir: string): string[] {
  return collectTaskFiles([dir]).filter((file) => !isSetMetadataFile(basename(file)));
}

/** Every file under `dir`, as paths relative to it with `/` separators, sorted. */
export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const visit = (current: string) => {
    for (const name of readdirSync(current).sort()) {
      const full = join(current, name);
      if (statSync(full).isDirectory()) visit(full);
      else out.push(relative(dir, full).split(sep).join('/'));
    }
  };
  visit(dir);
  return out;
}

