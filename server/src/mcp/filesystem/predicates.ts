import { deepEqual, resolvePointer } from '../../json-values.ts';
import type { PredicateFunction, Verdict } from '../namespace.ts';
import { baseName, children, filesBelow, globToRegExp, normalizePath, parentOf, toLf, view, type FilesystemState, type FsView } from './state.ts';

type P = PredicateFunction<FilesystemState>;

interface Bounds {
  equals?: number;
  min?: number;
  max?: number;
}

function withinBounds(n: number, b: Bounds): boolean {
  return (b.equals === undefined || n === b.equals) && (b.min === undefined || n >= b.min) && (b.max === undefined || n <= b.max);
}

const EXCERPT = 200;
function excerpt(text: string): string {
  return text.length <= EXCERPT ? text : `${text.slice(0, EXCERPT)}… (${text.length} chars)`;
}

/** When a file is missing, the reports show what is there instead: the directory's entries and same-named files. */
function missingFile(fs: FsView, path: string): Verdict {
  const isDirectory = fs.directories.has(path);
  const name = baseName(path);
  const sameName = [...fs.files.keys()].filter((p) => baseName(p) === name).slice(0, 10);
  const parent = parentOf(path);
  return {
    value: false,
    evidence: {
      path,
      exists: false,
      ...(isDirectory ? { isDirectory: true } : {}),
      parentExists: fs.directories.has(parent),
      siblings: fs.directories.has(parent) ? children(fs, parent).slice(0, 20).map((c) => c.name) : [],
      ...(sameName.length ? { sameNameElsewhere: sameName } : {}),
    },
  };
}

/** Runs `check` on the file's content, or answers false with the missing-file evidence. */
function onFile(state: FilesystemState, rawPath: string, check: (content: string, path: string) => Verdict): Verdict {
  const fs = view(state);
  const path = normalizePath(rawPath);
  const content = fs.files.get(path);
  return content === undefined ? missingFile(fs, path) : check(content, path);
}

function lines(content: string): string[] {
  if (content === '') return [];
  const all = content.split('\n');
  if (all[all.length - 1] === '') all.pop();
  return all;
}


export const predicates: Record<string, P> = {
  fileExists: ({ path }, { state }) => onFile(state, path, (content, p) => ({ value: true, evidence: { path: p, size: content.length } })),

  directoryExists: ({ path: raw }, { state }) => {
    const fs = view(state);
    const path = normalizePath(raw);
    if (fs.directories.has(path)) return { value: true, evidence: { path, entries: children(fs, path).length } };
    return { value: false, evidence: { path, ...(fs.files.has(path) ? { isFile: true } : {}), parentExists: fs.directories.has(parentOf(path)) } };
  },

  directoryEmpty: ({ path: raw }, { state }) => {
    const fs = view(state);
    const path = normalizePath(raw);
    if (!fs.directories.has(path)) return { value: false, evidence: { path, exists: false } };
    const entries = children(fs, path);
    return { value: entries.length === 0, evidence: { path, entries: entries.slice(0, 20).map((e) => e.name), count: entries.length } };
  },

  directoryContains: ({ path: raw, name, kind }, { state }) => {
    const fs = view(state);
    const path = normalizePath(raw);
    if (!fs.directories.has(path)) return { value: false, evidence: { path, exists: false } };
    const entries = children(fs, path);
    const hit = entries.find((e) => e.name === name && (kind === undefined || e.kind === kind));
    if (hit) return { value: true, evidence: { path, entry: hit } };
    const wrongKind = entries.find((e) => e.name === name);
    return { value: false, evidence: { path, name, ...(wrongKind ? { foundAs: wrongKind.kind } : {}), entries: entries.slice(0, 20).map((e) => e.name) } };
  },

  fileContains: ({ path, text, case_insensitive }, { state }) =>
    onFile(state, path, (content, p) => {
      const haystack = case_insensitive ? content.toLowerCase() : content;
      const needle = toLf(case_insensitive ? String(text).toLowerCase() : String(text));
      const at = haystack.indexOf(needle);
      return { value: at >= 0, evidence: { path: p, ...(at >= 0 ? { at } : { content: excerpt(content) }) } };
    }),

  fileEquals: ({ path, content: expected, trim }, { state }) =>
    onFile(state, path, (content, p) => {
      const a = trim ? content.trim() : content;
      const b = trim ? toLf(String(expected)).trim() : toLf(String(expected));
      return { value: a === b, evidence: { path: p, ...(a === b ? {} : { content: excerpt(content) }) } };
    }),

  fileMatches: ({ path, pattern, flags }, { state }) =>
    onFile(state, path, (content, p) => {
      let re: RegExp;
      try {
        re = new RegExp(pattern, flags ?? '');
      } catch (error) {
        return { value: false, evidence: { path: p, error: `invalid pattern: ${(error as Error).message}` } };
      }
      const m = re.exec(content);
      return { value: m !== null, evidence: { path: p, ...(m ? { match: excerpt(m[0]), at: m.index } : { content: excerpt(content) }) } };
    }),

  fileHasLine: ({ path, line, trim }, { state }) =>
    onFile(state, path, (content, p) => {
      const want = trim ? String(line).trim() : String(line);
      const all = lines(content);
      const index = all.findIndex((l) => (trim ? l.trim() : l) === want);
      return { value: index >= 0, evidence: { path: p, ...(index >= 0 ? { line: index + 1 } : { lines: all.slice(0, 20) }) } };
    }),

  fileLineCount: (args, { state }) =>
    onFile(state, args.path, (content, p) => {
      const n = lines(content).length;
      return { value: withinBounds(n, args), evidence: { path: p, lines: n } };
    }),

  fileCount: (args, { state }) => {
    const fs = view(state);
    const dir = normalizePath(args.path ?? '.');
    if (!fs.directories.has(dir)) return { value: withinBounds(0, args), evidence: { path: dir, exists: false, count: 0 } };
    const glob: string | undefined = args.glob;
    const re = glob === undefined ? undefined : globToRegExp(glob);
    const matched = filesBelow(fs, dir)
      .map(([rel]) => rel)
      .filter((rel) => args.recursive !== false || !rel.includes('/'))
      .filter((rel) => re === undefined || re.test(glob!.includes('/') ? rel : baseName(rel)));
    return { value: withinBounds(matched.length, args), evidence: { path: dir, count: matched.length, files: matched.slice(0, 20) } };
  },

  filesIdentical: ({ path, other }, { state }) =>
    onFile(state, path, (a, p) =>
      onFile(state, other, (b, q) => ({
        value: a === b,
        evidence: { path: p, other: q, ...(a === b ? { size: a.length } : { content: excerpt(a), otherContent: excerpt(b) }) },
      })),
    ),

  jsonFileValid: ({ path }, { state }) =>
    onFile(state, path, (content, p) => {
      try {
        JSON.parse(content);
        return { value: true, evidence: { path: p } };
      } catch (error) {
        return { value: false, evidence: { path: p, error: (error as Error).message } };
      }
    }),

  jsonFileFieldEquals: ({ path, pointer, value }, { state }) =>
    onFile(state, path, (content, p) => {
      let doc: unknown;
      try {
        doc = JSON.parse(content);
      } catch (error) {
        return { value: false, evidence: { path: p, error: `not JSON: ${(error as Error).message}` } };
      }
      const at = resolvePointer(doc, pointer);
      if (!at.found) return { value: false, evidence: { path: p, pointer, found: false } };
      return { value: deepEqual(at.value, value), evidence: { path: p, pointer, actual: at.value } };
    }),
};
