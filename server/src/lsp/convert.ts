/** Engine findings ↔ LSP shapes. */
import { CodeAction, CodeActionKind, DiagnosticSeverity, type Diagnostic as LspDiagnostic, type TextEdit } from 'vscode-languageserver';
import type { Diagnostic, Fix } from '../tasks/diagnostics.ts';
import type { JsonDocument } from '../tasks/document.ts';
import { ruleDoc } from '../tasks/rule-docs.ts';

const SEVERITY = { error: DiagnosticSeverity.Error, warning: DiagnosticSeverity.Warning, info: DiagnosticSeverity.Information } as const;

export const SOURCE = 'mcpbench';

/** The fixes ride along in `data`, so a code action request needs no second lint. */
export function toLspDiagnostic(d: Diagnostic): LspDiagnostic {
  return {
    range: { start: d.start, end: d.end },
    severity: SEVERITY[d.severity],
    code: d.code,
    source: SOURCE,
    message: d.message,
    // The code links to the rule's page (what it finds, how to fix it), as ESLint's rules do.
    codeDescription: { href: ruleDoc(d.code).helpUri },
    data: d.fixes ? { fixes: d.fixes } : undefined,
  };
}

export function toCodeActions(uri: string, document: JsonDocument, diagnostic: LspDiagnostic): CodeAction[] {
  const fixes = (diagnostic.data as { fixes?: Fix[] } | undefined)?.fixes ?? [];
  return fixes.map((fix, i) => fixToCodeAction(uri, document, fix, [diagnostic], i === 0));
}

/** An engine fix (offset edits) as a quick fix on `uri`, resolving the diagnostics it answers. */
export function fixToCodeAction(uri: string, document: JsonDocument, fix: Fix, diagnostics: LspDiagnostic[], preferred: boolean): CodeAction {
  const edits: TextEdit[] = fix.edits.map((e) => ({
    range: { start: document.positionAt(e.offset), end: document.positionAt(e.offset + e.length) },
    newText: e.newText,
  }));
  const action = CodeAction.create(fix.title, { changes: { [uri]: edits } }, CodeActionKind.QuickFix);
  if (diagnostics.length) action.diagnostics = diagnostics;
  action.isPreferred = preferred;
  return action;
}
