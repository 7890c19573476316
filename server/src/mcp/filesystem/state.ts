/**
 * The filesystem state as predicates read it: files and directories keyed by normalised relative paths.
 * Directories are explicit (`dir/`: null) or implied by any path below them, so a snapshot that lists only
 * empty directories and one that lists every directory mean the same tree.
 */
/** A file whose bytes are not UTF-8 text (an image, an archive): its bytes in base64. */
interface BinaryContent {
  base64: string;
}

export interface FilesystemState {
  files: Record<string, string | BinaryContent | null>;
}

function isBinary(content: string | BinaryContent | null | undefined): content is BinaryContent {
  return typeof content === 'object' && content !== null;
}

/** A file's bytes: UTF-8 text, or the decoded base64 of a binary file. */
export function contentBytes(content: string | BinaryContent): Buffer {
  return isBinary(content) ? Buffer.from(content.base64, 'base64') : Buffer.from(content, 'utf8');
}

/** How the state holds a file's bytes: text when they are UTF-8 without NUL (they read back the same), else base64. */
export function contentOf(bytes: Buffer): string | BinaryContent {
  const text = bytes.toString('utf8');
  return !text.includes('\0') && Buffer.from(text, 'utf8').equals(bytes) ? text : { base64: bytes.toString('base64') };
}

export interface FsView {
  /** Normalised file path → content (LF line breaks); a binary file's content is its base64 (see `binary`). */
  files: Map<string, string>;
  /** The paths of binary files (their `files` entry is base64, which text predicates never match as text). */
  binary: Set<string>;
  /** Every directory, normalised, without trailing `/`; the root is `.`. */
  directories: Set<string>;
}

/** `./a//b/` → `a/b`; `` and `/` → `.`. Keeps `..` (it then simply matches nothing). */
export function normalizePath(path: string): string {
  const segments = path
    .replace(/\\/g, '/')
    .split('/')
    .filter((s) => s !== '' && s !== '.');
  return segments.length === 0 ? '.' : segments.join('/');
}

export function parentOf(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash < 0 ? '.' : path.slice(0, slash);
}

export function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

export function toLf(text: string): string {
  return text.replace(/\r\n/g, '\n');
}

export function normalizeState(state: unknown): FilesystemState {
  const files = (state as Partial<FilesystemState> | undefined)?.files ?? {};
  return { files: Object.fromEntries(Object.entries(files).map(([path, content]) => [path, isBinary(content) ? { base64: content.base64 } : content])) };
}

export function view(state: FilesystemState): FsView {
  const files = new Map<string, string>();
  const binary = new Set<string>();
  const directories = new Set<string>(['.']);
  const addAncestors = (path: string): void => {
    for (let dir = parentOf(path); dir !== '.'; dir = parentOf(dir)) directories.add(dir);
  };
  for (const [key, content] of Object.entries(state.files)) {
    const path = normalizePath(key);
    if (path === '.') continue;
    if (key.endsWith('/') || content === null) {
      directories.add(path);
    } else if (isBinary(content)) {
      files.set(path, content.base64);
      binary.add(path);
    } else {
      files.set(path, toLf(content));
    }
    addAncestors(path);
  }
  return { files, binary, directories };
}

/** Direct children of `dir` as `{ name, kind }`, sorted by name. */
export function children(fs: FsView, dir: string): { name: string; kind: 'file' | 'directory' }[] {
  const out: { name: string; kind: 'file' | 'directory' }[] = [];
  for (const path of fs.files.keys()) if (parentOf(path) === dir) out.push({ name: baseName(path), kind: 'file' });
  for (const path of fs.directories) if (path !== '.' && parentOf(path) === dir) out.push({ name: baseName(path), kind: 'directory' });
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Files below `dir` (any depth), as [path relative to dir, content]. */
export function filesBelow(fs: FsView, dir: string): [string, string][] {
  const prefix = dir === '.' ? '' : `${dir}/`;
  return [...fs.files.entries()]
    .filter(([path]) => path.startsWith(prefix))
    .map(([path, content]): [string, string] => [path.slice(prefix.length), content])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

const REGEX_SPECIAL = /[.+^$()|[\]\\]/;

/**
 * Compiles a glob: `*` and `?` within one segment, `**` across segments (`**\/` also matches nothing),
 * `{a,b}` alternation, `[...]` classes. No-throw: an unbalanced `{` is taken literally.
 */
export function globToRegExp(glob: string): RegExp {
  let out = '';
  let depth = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') {
      if (glob[i + 1] === '*') {
        i++;
        if (glob[i + 1] === '/') {
          i++;
          out += '(?:.*/)?';
        } else {
          out += '.*';
        }
      } else {
        out += '[^/]*';
      }
    } else if (c === '?') {
      out += '[^/]';
    } else if (c === '{' && glob.indexOf('}', i) > i) {
      depth++;
      out += '(?:';
    } else if (c === '}' && depth > 0) {
      depth--;
      out += ')';
    } else if (c === ',' && depth > 0) {
      out += '|';
    } else if (c === '[' && glob.indexOf(']', i + 2) > i) {
      const end = glob.indexOf(']', i + 2);
      const body = glob.slice(i + 1, end).replace(/^!/, '^').replace(/\\/g, '\\\\');
      out += `[${body}]`;
      i = end;
    } else {
      out += REGEX_SPECIAL.test(c) ? `\\${c}` : c;
    }
  }
  while (depth-- > 0) out += ')';
  try {
    return new RegExp(`^${out}$`);
  } catch {
    return new RegExp(`^${glob.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
  }
}
