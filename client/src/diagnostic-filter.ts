/**
 * One problem, one report. Task and template files get two validators: VS Code's own JSON support (through
 * the `jsonValidation` contribution, for completion and hover from the schema) and our language server. Both
 * report JSON syntax errors and violations of the schema's structure. The rule, chosen here in the client:
 *
 *   where VS Code validates JSON (`json.validate.enable`, on by default), our diagnostics with the codes in
 *   SCHEMA_CODES are hidden, because VS Code's JSON validation reports the same problem on the same range;
 *   everything else our linter finds (names, predicates, solutions, state, ...) is ours alone and shown.
 *
 * Hidden diagnostics are kept, not discarded: their quick fixes ("did you mean `goal`?") still appear on
 * VS Code's diagnostic, because the code-action middleware hands the hidden diagnostics under the cursor to
 * the server (see `hiddenInRange`). With `json.validate.enable` off, ours are the only ones and all are shown.
 *
 * The alternative (turning VS Code's validation off) would have changed a user setting for every JSON file.
 */

/** Codes of findings VS Code's JSON validation also reports: syntax, and the structure task.schema.json encodes. */
export const SCHEMA_CODES: ReadonlySet<string> = new Set(['json-syntax', 'unknown-key', 'missing-key', 'invalid-type', 'invalid-value']);

export const OUR_SOURCE = 'mcpbench';

export interface DiagnosticLike {
  source?: string;
  code?: string | number | { value: string | number };
}

export function diagnosticCode(diagnostic: DiagnosticLike): string | undefined {
  const code = diagnostic.code;
  if (code === undefined) return undefined;
  return String(typeof code === 'object' ? code.value : code);
}

/** Whether VS Code's JSON validation reports this finding too (and so ours should be hidden). */
export function isDuplicatedByJsonValidation(diagnostic: DiagnosticLike, vscodeValidatesJson: boolean): boolean {
  if (!vscodeValidatesJson || diagnostic.source !== OUR_SOURCE) return false;
  const code = diagnosticCode(diagnostic);
  return code !== undefined && SCHEMA_CODES.has(code);
}

export function partitionDiagnostics<T extends DiagnosticLike>(diagnostics: readonly T[], vscodeValidatesJson: boolean): { shown: T[]; hidden: T[] } {
  const shown: T[] = [];
  const hidden: T[] = [];
  for (const d of diagnostics) (isDuplicatedByJsonValidation(d, vscodeValidatesJson) ? hidden : shown).push(d);
  return { shown, hidden };
}

interface Pos {
  line: number;
  character: number;
}
interface RangeLike {
  start: Pos;
  end: Pos;
}

const before = (a: Pos, b: Pos) => a.line < b.line || (a.line === b.line && a.character < b.character);

/** Ranges touch (an empty cursor range at either end counts), as VS Code decides which fixes apply. */
export function rangesTouch(a: RangeLike, b: RangeLike): boolean {
  return !before(a.end, b.start) && !before(b.end, a.start);
}

export function hiddenInRange<T extends DiagnosticLike & { range: RangeLike }>(hidden: readonly T[], range: RangeLike): T[] {
  return hidden.filter((d) => rangesTouch(d.range, range));
}
