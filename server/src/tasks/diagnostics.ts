/**
 * Lint findings and the catalog of rules that produce them. Codes are stable: tools filter on them, SARIF
 * lists them as rules, and the fixture corpus asserts them.
 */
import type { JsonDocument, Position, Span } from './document.ts';

export type Severity = 'error' | 'warning' | 'info';

export interface TextEdit extends Span {
  newText: string;
}

/** A suggested fix: applied by the editor as a quick fix; described in text output. */
export interface Fix {
  title: string;
  edits: TextEdit[];
}

export interface Finding extends Span {
  code: RuleCode;
  severity: Severity;
  message: string;
  fixes?: Fix[];
}

/** A finding placed in its file, with line/character positions (0-based). */
export interface Diagnostic extends Finding {
  uri: string;
  start: Position;
  end: Position;
}

export interface RuleInfo {
  severity: Severity;
  summary: string;
}

export const RULES = {
  'json-syntax': { severity: 'error', summary: 'The file is not valid JSON.' },
  'unknown-key': { severity: 'error', summary: 'A key the task format does not define.' },
  'missing-key': { severity: 'error', summary: 'A required key is missing.' },
  'invalid-type': { severity: 'error', summary: 'A value has the wrong JSON type.' },
  'invalid-value': { severity: 'error', summary: 'A value is outside what the task format allows.' },
  'invalid-predicate': { severity: 'error', summary: 'A predicate node is not `all`, `any`, `not` or a single `<ns>.<predicate>` leaf.' },
  'unknown-namespace': { severity: 'error', summary: 'A namespace with no file in schemas/servers/.' },
  'unknown-predicate': { severity: 'error', summary: 'A predicate its namespace does not declare.' },
  'predicate-arguments': { severity: 'error', summary: "A predicate's arguments do not match its argument schema." },
  'predicate-namespace-not-in-task': { severity: 'error', summary: "A predicate of a namespace the task's `server` does not list." },
  'unknown-tool': { severity: 'error', summary: 'A tool its namespace does not declare.' },
  'duplicate-tool': { severity: 'warning', summary: 'A tool listed twice in `available_tools`.' },
  'tool-not-available': { severity: 'error', summary: 'A solution calls a tool that is not in `available_tools`.' },
  'tool-arguments': { severity: 'error', summary: "A solution's call has arguments that fail the tool's input schema." },
  'max-steps-too-low': { severity: 'error', summary: '`max_steps` is below the tool calls a reference solution needs.' },
  'empty-combinator': { severity: 'error', summary: 'An empty `all` or `any`.' },
  'double-negation': { severity: 'warning', summary: '`not` directly inside `not`.' },
  contradiction: { severity: 'error', summary: 'A leaf asserted and negated in the same `all`: the predicate can never be true.' },
  'initial-state-schema': { severity: 'error', summary: "An initial state that fails its namespace's state schema." },
  'initial-state-namespace-not-in-task': { severity: 'warning', summary: "Initial state for a namespace the task's `server` does not list." },
  'unused-namespace': { severity: 'warning', summary: 'A namespace in `server` that no predicate checks and no available tool uses.' },
  'answer-step-not-last': { severity: 'error', summary: 'A final-answer step that is not the last step of its solution.' },
  'reference-missing-answer': { severity: 'warning', summary: 'The predicate checks the final answer but a reference solution gives none.' },
  'missing-counterexample': { severity: 'warning', summary: 'No counterexample shows the predicate is specific enough.' },
  'passes-initially': { severity: 'error', summary: 'The predicate is already true on the initial state: an agent that does nothing passes.' },
  'answer-without-data': { severity: 'error', summary: 'An information task whose predicate passes with every tool call refused and an answer made of no data: the answer does not depend on the data.' },
  'unknown-mutant': { severity: 'error', summary: '`equivalent_mutants` names a mutant the reference solutions no longer have (see `mcpbench check --mutants`).' },
  'goal-value-unchecked': { severity: 'warning', summary: 'The goal names a file, id or quoted value that no predicate checks (quoted values already in the initial state are references and exempt).' },
  todo: { severity: 'warning', summary: 'A `TODO:` left in a value outside the initial state: the task is not finished (a skeleton from `mcpbench new` holds them).' },
  'duplicate-id': { severity: 'error', summary: 'Two task files in the set share an id.' },
  'missing-frame-condition': { severity: 'info', summary: 'A task whose reference solutions write to a namespace, with no `unchanged`, `stateEquals` or `matchesReference` of that namespace in the predicate: nothing says what must not change, so an extra destructive write passes.' },
  'any-always-true': { severity: 'error', summary: 'An `any` with a branch already true on the initial state, or a leaf next to its own negation: the `any` holds without the agent doing anything.' },
  'pointer-resolves-to-nothing': { severity: 'error', summary: 'An `unchanged`, `stateEquals` or `matchesReference` pointer that names nothing in the initial state or the state schema: it checks nothing (or only that nothing appears there).' },
  'vacuous-leaf': { severity: 'error', summary: 'A leaf already true on the initial state, of a namespace that no reference solution and no available tool writes: it holds whatever the agent does.' },
} as const satisfies Record<string, RuleInfo>;

/** The template linter's rules (generator/lint-template.ts): codes as stable as the task rules'. */
export const TEMPLATE_RULES = {
  'template-unknown-parameter': { severity: 'error', summary: 'A placeholder names no parameter, or a field its parameter does not have.' },
  'template-placeholder-syntax': { severity: 'error', summary: '`{{...}}` that is not `{{name}}` or `{{name.field}}`.' },
  'template-unused-parameter': { severity: 'warning', summary: 'A parameter that no placeholder in the task or the grammar uses, directly or through derived parameters.' },
  'template-placeholder-type': { severity: 'error', summary: "A placeholder whose parameter's type cannot fit where it is placed (a whole-string placeholder keeps its type; text takes scalars only)." },
  'template-undefined-nonterminal': { severity: 'error', summary: 'A grammar reference `<name>`, or the start symbol, that names no production.' },
  'template-grammar-cycle': { severity: 'error', summary: 'Grammar productions that refer to themselves, directly or not.' },
  'template-unreachable-production': { severity: 'warning', summary: 'A grammar production the start symbol never reaches.' },
  'template-goal': { severity: 'error', summary: 'The goal must come from exactly one of `grammar` and `task.goal`.' },
  'template-invalid-parameter': { severity: 'error', summary: 'A parameter that cannot be sampled: empty range, bad pattern or date, misused function, dependency loop.' },
  'template-unsatisfiable': { severity: 'error', summary: 'A constraint that no draw met within `max_tries`.' },
  'template-namespaces': { severity: 'warning', summary: "`namespaces` differs from the namespaces the task's `server` names." },
} as const satisfies Record<`template-${string}`, RuleInfo>;

/** Every rule a linter can report, task and template alike: what SARIF lists and the docs describe. */
export const ALL_RULES: Readonly<Record<RuleCode, RuleInfo>> = { ...RULES, ...TEMPLATE_RULES };

export type TaskRuleCode = keyof typeof RULES;
export type TemplateRuleCode = keyof typeof TEMPLATE_RULES;
export type RuleCode = TaskRuleCode | TemplateRuleCode;

/** Builds findings with the rule's default severity. */
export function finding(code: RuleCode, span: Span, message: string, fixes?: Fix[]): Finding {
  const result: Finding = { code, severity: ALL_RULES[code].severity, message, offset: span.offset, length: span.length };
  if (fixes?.length) result.fixes = fixes;
  return result;
}

export function toDiagnostic(document: JsonDocument, f: Finding): Diagnostic {
  return { ...f, uri: document.uri, start: document.positionAt(f.offset), end: document.positionAt(f.offset + f.length) };
}

export function compareDiagnostics(a: Diagnostic, b: Diagnostic): number {
  return a.uri.localeCompare(b.uri) || a.offset - b.offset || a.code.localeCompare(b.code);
}
