/**
 * Lint output formats: `text` (`file:line:col severity code message`, which editors and CI problem matchers
 * turn into links), `json`, and SARIF 2.1.0 for code-scanning tools.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ArtifactLocation, Log, ReportingDescriptor, Result } from 'sarif';
import type { Diagnostic } from '../tasks/diagnostics.ts';
import { allRuleDocs, PROJECT_URL } from '../tasks/rule-docs.ts';

export interface FileReport {
  /** Absolute path. */
  path: string;
  diagnostics: Diagnostic[];
  /** The file's text, when SARIF fingerprints are wanted (they hash the marked text, not line numbers). */
  text?: string;
}

export interface Totals {
  errors: number;
  warnings: number;
  infos: number;
  files: number;
}

export function totals(reports: FileReport[]): Totals {
  const all = reports.flatMap((r) => r.diagnostics);
  return {
    errors: all.filter((d) => d.severity === 'error').length,
    warnings: all.filter((d) => d.severity === 'warning').length,
    infos: all.filter((d) => d.severity === 'info').length,
    files: reports.length,
  };
}

export function formatText(reports: FileReport[], cwd: string): string {
  const lines: string[] = [];
  for (const report of reports) {
    const file = relative(cwd, report.path) || report.path;
    for (const d of report.diagnostics) {
      lines.push(`${file}:${d.start.line + 1}:${d.start.character + 1} ${d.severity} ${d.code} ${d.message}`);
    }
  }
  const t = totals(reports);
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  lines.push(
    t.errors + t.warnings + t.infos === 0
      ? `${plural(t.files, 'file')} checked: no problems`
      : `${plural(t.files, 'file')} checked: ${plural(t.errors, 'error')}, ${plural(t.warnings, 'warning')}`,
  );
  return lines.join('\n') + '\n';
}

export function formatJson(reports: FileReport[], cwd: string): string {
  const files = reports.map((r) => ({
    file: relative(cwd, r.path) || r.path,
    diagnostics: r.diagnostics.map((d) => ({
      code: d.code,
      severity: d.severity,
      message: d.message,
      line: d.start.line + 1,
      column: d.start.character + 1,
      endLine: d.end.line + 1,
      endColumn: d.end.character + 1,
      offset: d.offset,
      length: d.length,
      fixes: d.fixes ?? [],
    })),
  }));
  return JSON.stringify({ files, totals: totals(reports) }, null, 2) + '\n';
}

const SARIF_LEVEL = { error: 'error', warning: 'warning', info: 'note' } as const;

/** The official schema of SARIF 2.1.0 (OASIS, errata 01). */
export const SARIF_SCHEMA_URI = 'https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json';
/** The uriBaseId results are relative to. */
export const SARIF_ROOT_ID = 'PROJECTROOT';

export interface SarifOptions {
  /** Absolute path of the folder artifact URIs are relative to (`--sarif-root`; default the repository root). */
  root: string;
  /** The tool's version. */
  version: string;
}

/** A folder as a `file:` URI that ends in exactly one `/` (the root `/` is `file:///`). */
function folderUri(folder: string): string {
  const href = pathToFileURL(folder).href;
  return href.endsWith('/') ? href : `${href}/`;
}

/**
 * Where a file is, for SARIF: a relative reference from the root (each segment percent-encoded, so a space,
 * `#` or `%` in a name stays a valid URI) with the root's uriBaseId; a file outside the root is an absolute
 * `file:` URI of its own.
 */
export function sarifArtifactLocation(file: string, root: string): ArtifactLocation {
  const rel = relative(root, file);
  if (!rel || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return { uri: pathToFileURL(file).href };
  return { uri: rel.split(sep).map(encodeURIComponent).join('/'), uriBaseId: SARIF_ROOT_ID };
}

/**
 * A fingerprint that survives edits elsewhere in the file (no line numbers): the rule, the file, the text the
 * finding marks, and which occurrence of that text it is. Code scanning keys alerts on it, so a repeated upload
 * updates alerts instead of adding new ones.
 */
function fingerprints(report: FileReport, root: string): Map<Diagnostic, string> {
  const file = relative(root, report.path).split(sep).join('/');
  const seen = new Map<string, number>();
  const out = new Map<Diagnostic, string>();
  for (const d of report.diagnostics) {
    const marked = report.text?.slice(d.offset, d.offset + d.length) ?? d.message;
    const key = `${d.code}\0${marked}`;
    const occurrence = seen.get(key) ?? 0;
    seen.set(key, occurrence + 1);
    out.set(d, createHash('sha256').update(`${d.code}\0${file}\0${marked}\0${occurrence}`).digest('hex').slice(0, 32));
  }
  return out;
}

export function formatSarif(reports: FileReport[], options: SarifOptions): string {
  const docs = allRuleDocs();
  const index = new Map(docs.map((doc, i) => [doc.code, i]));
  const rules: ReportingDescriptor[] = docs.map((doc) => ({
    id: doc.code,
    name: doc.code.replace(/(^|-)([a-z])/g, (_, _dash: string, c: string) => c.toUpperCase()),
    shortDescription: { text: doc.summary },
    fullDescription: { text: `${doc.summary} (${doc.linter} rule, ${doc.severity} by default.)` },
    help: { text: doc.help, markdown: `${doc.help}\n\n[${doc.code} in the rules reference](${doc.helpUri})` },
    helpUri: doc.helpUri,
    defaultConfiguration: { level: SARIF_LEVEL[doc.severity] },
    properties: { tags: [doc.linter === 'task' ? 'task' : 'template'] },
  }));
  const results: Result[] = reports.flatMap((report) => {
    const artifactLocation = sarifArtifactLocation(report.path, options.root);
    const prints = fingerprints(report, options.root);
    return report.diagnostics.map((d): Result => {
      const region = {
        startLine: d.start.line + 1,
        startColumn: d.start.character + 1,
        endLine: d.end.line + 1,
        endColumn: d.end.character + 1,
        charOffset: d.offset,
        charLength: d.length,
      };
      const result: Result = {
        ruleId: d.code,
        ruleIndex: index.get(d.code) ?? -1,
        level: SARIF_LEVEL[d.severity],
        message: { text: d.message },
        locations: [{ physicalLocation: { artifactLocation, region } }],
        partialFingerprints: { 'mcpbench/v1': prints.get(d)! },
      };
      if (d.fixes?.length) {
        result.fixes = d.fixes.map((fix) => ({
          description: { text: fix.title },
          artifactChanges: [
            {
              artifactLocation,
              replacements: fix.edits.map((e) => ({ deletedRegion: { charOffset: e.offset, charLength: e.length }, insertedContent: { text: e.newText } })),
            },
          ],
        }));
      }
      return result;
    });
  });
  const log: Log = {
    $schema: SARIF_SCHEMA_URI,
    version: '2.1.0',
    runs: [
      {
        tool: { driver: { name: 'mcpbench', informationUri: PROJECT_URL, version: options.version, rules } },
        originalUriBaseIds: { [SARIF_ROOT_ID]: { uri: folderUri(options.root) } },
        columnKind: 'utf16CodeUnits',
        results,
      },
    ],
  };
  return JSON.stringify(log, null, 2) + '\n';
}

/** The default `--sarif-root`: the repository holding `from` (the nearest folder with `.git`), else `from`. */
export function repositoryRoot(from: string): string {
  for (let dir = resolve(from); ; dir = dirname(dir)) {
    if (existsSync(join(dir, '.git'))) return dir;
    if (dirname(dir) === dir) return resolve(from);
  }
}
