/**
 * What each lint rule is for and how to fix what it finds: the text of SARIF's `fullDescription` and `help`,
 * the editor's link on a diagnostic's code, and docs/rules.md (`npm run rules:docs`). Driven by ALL_RULES, so a
 * rule added to the registry is documented (with its summary) before anyone writes its help here.
 */
import { ALL_RULES, RULES, type RuleCode } from './diagnostics.ts';

export const PROJECT_URL = 'https://github.com/mcpbench/mcpbench-studio';
/** The rules page: one `## <code>` section per rule, so `#<code>` is its anchor. */
export const RULES_DOC_PATH = 'docs/rules.md';

/** How to fix a finding of each rule (the summary says what it finds). */
const HELP: Partial<Record<RuleCode, string>> = {
  'json-syntax': 'Fix the JSON at the marked position: task and template files are strict JSON (no comments, no trailing commas, double-quoted keys).',
  'unknown-key': 'Remove the key or correct its spelling; the quick fix offers the closest key the format defines.',
  'missing-key': 'Add the required key; completion in the editor offers it with a placeholder value.',
  'invalid-type': 'Give the value the type the format asks for (hover on the key shows it).',
  'invalid-value': 'Use one of the allowed values (an enum, a pattern, a range); completion lists them.',
  'invalid-predicate': 'Write each predicate node as `{ "all": [...] }`, `{ "any": [...] }`, `{ "not": p }`, or an object with exactly one `<ns>.<predicate>` key whose value is its arguments.',
  'unknown-namespace': 'Use a namespace that has a file in schemas/servers/ (the message suggests the closest), or add the namespace as a plug-in.',
  'unknown-predicate': "Use a predicate the namespace declares (completion lists them with their arguments), or add it to the namespace's schema and code.",
  'predicate-arguments': "Give the predicate the arguments its schema asks for; the quick fix adds missing required ones, and hover shows each argument's type.",
  'predicate-namespace-not-in-task': "Add the namespace to `server` (quick fix), or check the state through one of the task's own namespaces.",
  'unknown-tool': 'Use a tool the namespace declares (the quick fix offers the closest name).',
  'duplicate-tool': 'Remove the second listing.',
  'tool-not-available': 'Add the tool to `available_tools` (quick fix), or change the solution to use a listed tool.',
  'tool-arguments': "Give the call the arguments the tool's input schema asks for; the quick fix adds missing required ones.",
  'max-steps-too-low': 'Raise `max_steps` to at least the number of tool calls of the longest reference solution.',
  'empty-combinator': 'Put at least one predicate in the `all` or `any`, or remove it.',
  'double-negation': 'Replace `not not p` with `p` (quick fix).',
  contradiction: 'Remove either the leaf or its negation: as written no end state can pass.',
  'initial-state-schema': "Make the initial state match the namespace's state schema (hover on the namespace key shows it).",
  'initial-state-namespace-not-in-task': 'Add the namespace to `server`, or remove its initial state.',
  'unused-namespace': 'Remove the namespace from `server`, or check its state in the predicate or give the agent its tools.',
  'answer-step-not-last': 'Move the `answer` step to the end of its solution: the final answer ends an episode.',
  'reference-missing-answer': 'End each reference solution with an `{ "answer": ... }` step the answer predicate accepts.',
  'missing-counterexample': 'Add a counterexample: a plausible wrong tool-call sequence that the predicate must reject.',
  'passes-initially': 'Tighten the predicate so the initial state fails it (check the change the goal asks for, not a fact that already holds).',
  'goal-value-unchecked': 'Check the named value in the predicate, or reword the goal if the value does not matter.',
  'missing-frame-condition': 'Say what must not change: add `<ns>.unchanged` on what the solution leaves alone, `<ns>.stateEquals` on the exact result, or `<ns>.matchesReference` (the quick fix adds one for the namespaces the solution writes). Shown as information until the dev set has frames everywhere.',
  'any-always-true': 'Remove the branch that already holds, or make it check the change the goal asks for; an `any` offers alternative ways to do the task, not a way out of it.',
  'pointer-resolves-to-nothing': 'Point at a value the initial state holds (hover the namespace key to see its state schema); to say that something must not appear, use `not` over an existence predicate.',
  'vacuous-leaf': 'Remove the leaf, or check the change the goal asks for: a leaf true at the start of a namespace no solution touches is always true.',
  todo: 'Replace the `TODO:` text with what the task needs (the message says what belongs there).',
  'duplicate-id': 'Give one of the tasks a new id (rename its id in the editor: the file name follows).',
  'template-unknown-parameter': 'Name a declared parameter (or one of its fields) in the placeholder; the quick fix offers the closest.',
  'template-placeholder-syntax': 'Write placeholders as `{{name}}` or `{{name.field}}`.',
  'template-unused-parameter': 'Use the parameter in the task or the grammar, or remove it.',
  'template-placeholder-type': 'Make the placeholder the whole string only where its type fits, or derive a string parameter with `format`.',
  'template-undefined-nonterminal': 'Define the production, or correct the reference (the quick fix offers the closest name).',
  'template-grammar-cycle': 'Break the cycle so every expansion ends in text.',
  'template-unreachable-production': 'Refer to the production from the start symbol, or remove it.',
  'template-goal': 'Give the goal either through `grammar` or through `task.goal`, not both and not neither.',
  'template-invalid-parameter': 'Fix the parameter so it can be sampled (a non-empty range, a valid pattern or date, no dependency loop).',
  'template-unsatisfiable': 'Loosen the constraint or widen the pools so a draw can meet it, or raise `max_tries`.',
  'template-namespaces': "Make `namespaces` list exactly the namespaces the task's `server` names.",
};

export interface RuleDoc {
  code: RuleCode;
  severity: 'error' | 'warning' | 'info';
  /** Which linter reports it. */
  linter: 'task' | 'template';
  summary: string;
  help: string;
  /** The rule's section of docs/rules.md. */
  helpUri: string;
}

export function ruleDoc(code: RuleCode): RuleDoc {
  const rule = ALL_RULES[code];
  const linter = code in RULES ? 'task' : 'template';
  return {
    code,
    severity: rule.severity,
    linter,
    summary: rule.summary,
    help: HELP[code] ?? `See the rule's description: ${rule.summary}`,
    helpUri: `${PROJECT_URL}/blob/main/${RULES_DOC_PATH}#${code}`,
  };
}

export function allRuleDocs(): RuleDoc[] {
  return (Object.keys(ALL_RULES) as RuleCode[]).map(ruleDoc);
}

/** docs/rules.md: every rule, its severity, what it finds and how to fix it. */
export function rulesMarkdown(): string {
  const lines = [
    '# Lint rules',
    '',
    '<!-- Written by `npm run rules:docs` from server/src/tasks/diagnostics.ts and rule-docs.ts; a test fails when it drifts. -->',
    '',
    'Every finding of `mcpbench lint` and of the editor carries one of these codes. Task rules apply to task files,',
    'template rules to template grammars (`*.template.json`); a template is also linted through one sample instance,',
    'whose task findings are placed back where the template wrote the value.',
    '',
  ];
  for (const doc of allRuleDocs()) {
    lines.push(`## ${doc.code}`, '', `*${doc.severity}, ${doc.linter} rule.* ${doc.summary}`, '', `**How to fix:** ${doc.help}`, '');
  }
  return lines.join('\n');
}
