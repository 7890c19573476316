/**
 * Lint output formats: `text` (`file:line:col severity code message`, which editors and CI problem matchers
 * turn into links), `json`, and SARIF 2.1.0 for code-scanning tools.
 */
import { relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Log, ReportingDescriptor, Result } from 'sarif';
import { RULES, type Diagnostic, type RuleCode } from '../tasks/diagnostics.ts';

export interface FileReport {
  /** Absolute path. */
  path: string;
  diagnostics: Diagnostic[];
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

export function formatSarif(reports: FileReport[], cwd: string, version: string): string {
  const codes = Object.keys(RULES) as RuleCode[];
  const rules: ReportingDescriptor[] = codes.map((code) => ({
    id: code,
    shortDescription: { text: RULES[code].summary },
    defaultConfiguration: { level: SARIF_LEVEL[RULES[code].severity] },
  }));
  const results: Result[] = reports.flatMap((r) =>
    r.diagnostics.map((d): Result => {
      const uri = relative(cwd, r.path).split('\\').join('/');
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
        ruleIndex: codes.indexOf(d.code),
        level: SARIF_LEVEL[d.severity],
        message: { text: d.message },
        locations: [{ physicalLocation: { artifactLocation: { uri, uriBaseId: 'SRCROOT' }, region } }],
      };
      if (d.fixes?.length) {
        result.fixes = d.fixes.map((fix) => ({
          description: { text: fix.title },
          artifactChanges: [
            {
              artifactLocation: { uri, uriBaseId: 'SRCROOT' },
              replacements: fix.edits.map((e) => ({ deletedRegion: { charOffset: e.offset, charLength: e.length }, insertedContent: { text: e.newText } })),
            },
          ],
        }));
      }
      return result;
    }),
  );
  const log: Log = {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: { driver: { name: 'mcpbench', informationUri: 'https://github.com/mcpbench/mcpbench-studio', version, rules } },
        originalUriBaseIds: { SRCROOT: { uri: pathToFileURL(cwd).href + '/' } },
        columnKind: 'utf16CodeUnits',
        results,
      },
    ],
  };
  return JSON.stringify(log, null, 2) + '\n';
}
