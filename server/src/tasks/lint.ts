/**
 * The task linter: syntax (jsonc-parser, tolerant), structure (ajv against task.schema.json) and the
 * semantic rules over the namespace registry. `lintTask` checks one document; `lintTaskSet` adds the rules
 * that span files (duplicate ids). Pure: text in, findings out; the CLI and the language server place them.
 */
import type { Node } from 'jsonc-parser';
import canonicalize from 'canonicalize';
import { compareDiagnostics, finding, toDiagnostic, type Diagnostic, type Finding, type Fix, type RuleCode, type TextEdit } from './diagnostics.ts';
import { JsonDocument, type Span } from './document.ts';
import { appendToArray } from './edits.ts';
import { goalValues, isValueChecked, scalarStrings } from './goal-values.ts';
import { TaskSchema } from './model.ts';
import { checkTaskStructure, isObject, mapAjvErrors } from './schema-check.ts';
import { closest } from './suggest.ts';
import type { Registry } from '../mcp/registry.ts';
import { namespacesOf, qualifyAll, splitQualified } from '../mcp/names.ts';
import { evaluate, stateLeafEvaluator } from '../predicates/evaluate.ts';
import { firstAnswerLeaf, passingBlindAnswers } from './guesses.ts';
import { argumentExists, deriveMutants } from './mutants.ts';
import { FRAME_PREDICATES, framedNamespaces, pointerInSchema, writtenNamespaces } from './frames.ts';
import { resolvePointer } from '../json-values.ts';
import { leaves, parsePredicate, walk, type LeafNode, type PredicateNode, type StructureProblem } from '../predicates/tree.ts';
import type { JsonPath } from '../json-values.ts';
import { NAMESPACE_PATTERN, QUALIFIED_NAME_PATTERN } from '../mcp/names.ts';
import { taskNamespaces } from './vocabulary.ts';

/** `TODO:` as authors leave them (`TODO.md` is a file name, not a marker). */
const TODO = /\bTODO:/;

export interface LintResult {
  document: JsonDocument;
  diagnostics: Diagnostic[];
  /** The task id, when the file has a string `id` (for set-wide rules). */
  id?: string;
}

export function lintTask(uri: string, text: string, registry: Registry): LintResult {
  return lintTaskDocument(new JsonDocument(uri, text), registry);
}

/** `lintTask` on a document already parsed (the language server parses each version once for every feature). */
export function lintTaskDocument(document: JsonDocument, registry: Registry): LintResult {
  const findings: Finding[] = syntaxFindings(document);
  const value = document.value();
  let id: LintResult['id'];
  // With syntax errors the tree is a guess (a truncated file misses half its keys): structural and semantic
  // findings on it would be noise, so the syntax errors come alone until they are fixed.
  if (findings.length === 0 && isObject(value)) {
    findings.push(...checkTaskStructure(document, value));
    findings.push(...new SemanticChecker(document, value, registry).run());
    if (typeof value.id === 'string') id = value.id;
  } else if (findings.length === 0 && document.hasValue) {
    const top = document.root;
    findings.push(finding('invalid-type', top ? spanOf(top) : { offset: 0, length: document.text.length }, 'a task file must hold one JSON object'));
  } else if (findings.length === 0) {
    findings.push(finding('json-syntax', { offset: 0, length: 0 }, 'empty file: a task file must hold one JSON object'));
  }
  const diagnostics = dedupe(findings).map((f) => toDiagnostic(document, f)).sort(compareDiagnostics);
  return id ? { document, diagnostics, id } : { document, diagnostics };
}

/** Lints every file and adds the set-wide rules. Results keep the input order. */
export function lintTaskSet(files: { uri: string; text: string }[], registry: Registry): LintResult[] {
  const results = files.map((f) => lintTask(f.uri, f.text, registry));
  const byId = new Map<string, LintResult[]>();
  for (const result of results) {
    if (result.id) byId.set(result.id, [...(byId.get(result.id) ?? []), result]);
  }
  for (const [taskId, owners] of byId) {
    if (owners.length < 2) continue;
    for (const owner of owners) {
      const others = owners.filter((o) => o !== owner).map((o) => o.document.uri);
      const idNode = owner.document.nodeAt(['id']);
      const f = finding('duplicate-id', idNode ? spanOf(idNode) : { offset: 0, length: 1 }, `task id \`${taskId}\` is also used by ${others.join(', ')}: ids must be unique across the set`);
      owner.diagnostics.push(toDiagnostic(owner.document, f));
      owner.diagnostics.sort(compareDiagnostics);
    }
  }
  return results;
}

/** One finding per syntax problem, leaving out the follow-on errors that start where an earlier one ends. */
function syntaxFindings(document: JsonDocument): Finding[] {
  const findings: Finding[] = [];
  let coveredUntil = -1;
  for (const problem of document.syntaxProblems) {
    if (problem.offset <= coveredUntil) continue;
    findings.push(finding('json-syntax', problem, problem.message));
    coveredUntil = problem.offset + problem.length;
  }
  return findings;
}

function spanOf(node: Node): Span {
  return { offset: node.offset, length: node.length };
}

function dedupe(findings: Finding[]): Finding[] {
  const seen = new Set<string>();
  return findings.filter((f) => {
    const key = `${f.code}:${f.offset}:${f.length}:${f.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

class SemanticChecker {
  private readonly findings: Finding[] = [];
  private readonly taskNamespaces: string[];
  private readonly serverIsKnown: boolean;
  private readonly availableTools: Set<string>;
  private readonly predicate: PredicateNode | undefined;
  private readonly predicateLeaves: LeafNode[];

  constructor(
    private readonly document: JsonDocument,
    private readonly task: Record<string, unknown>,
    private readonly registry: Registry,
  ) {
    this.taskNamespaces = taskNamespaces(task);
    // While `server` names an unknown namespace, "not listed in server" findings would only echo that typo.
    this.serverIsKnown = this.taskNamespaces.length > 0 && this.taskNamespaces.every((n) => registry.get(n));
    const tools = Array.isArray(task.available_tools) ? task.available_tools : [];
    this.availableTools = new Set(tools.filter((t): t is string => typeof t === 'string'));
    if ('success_predicate' in task) {
      const problems: StructureProblem[] = [];
      this.predicate = parsePredicate(task.success_predicate, ['success_predicate'], problems);
      for (const p of problems) this.report(p.code, this.spanAt(p.path, p.target), p.message);
    }
    this.predicateLeaves = this.predicate ? leaves(this.predicate) : [];
  }

  run(): Finding[] {
    this.checkServer();
    this.checkInitialState();
    this.checkAvailableTools();
    this.checkSolutions();
    if (this.predicate) {
      this.checkLeaves();
      this.checkCombinators(this.predicate);
      if (!this.checkPassesInitially(this.predicate)) this.checkAnswerWithoutData(this.predicate);
      this.checkGoalValues();
      this.checkAlwaysTrueAny(this.predicate);
      this.checkFramePointers();
      this.checkVacuousLeaves();
      this.checkFrameCondition(this.predicate);
    }
    this.checkUnusedNamespaces();
    this.checkTodos();
    this.checkEquivalentMutants();
    return this.findings;
  }

  // ---- helpers

  private report(code: RuleCode, span: Span, message: string, fixes?: Fix[]): void {
    this.findings.push(finding(code, span, message, fixes));
  }

  private spanAt(path: JsonPath, target: 'key' | 'value' = 'value'): Span {
    const node = target === 'key' ? this.document.keyNodeAt(path) : this.document.nodeAt(path);
    if (node) return spanOf(node);
    const parent = path.length ? this.document.nodeAt(path.slice(0, -1)) : undefined;
    return parent ? spanOf(parent) : { offset: 0, length: 1 };
  }

  /** The span of the `<ns>` part of a `"<ns>.<name>"` string node. */
  private namespacePart(span: Span, namespace: string): Span {
    return { offset: span.offset + 1, length: namespace.length };
  }

  private replaceWith(span: Span, value: string): TextEdit {
    return { ...span, newText: JSON.stringify(value) };
  }

  /** An edit that appends `value` to the array at `path`, in the array's layout. */
  private appendToArray(path: JsonPath, value: string): TextEdit | undefined {
    const array = this.document.nodeAt(path);
    return array?.type === 'array' ? appendToArray(this.document.text, array, [JSON.stringify(value)]) : undefined;
  }

  private isKnownNamespace(namespace: string): boolean {
    return this.registry.get(namespace) !== undefined;
  }

  private unknownNamespace(span: Span, namespace: string, replaceSpan?: Span, rest = ''): void {
    const suggestion = closest(namespace, this.registry.names());
    const fixes = suggestion && replaceSpan ? [{ title: `Change to \`${suggestion}${rest}\``, edits: [this.replaceWith(replaceSpan, suggestion + rest)] }] : [];
    const hint = suggestion ? `did you mean \`${suggestion}\`?` : `known namespaces: ${this.registry.names().join(', ')}`;
    this.report('unknown-namespace', span, `unknown namespace \`${namespace}\`: ${hint}`, fixes);
  }

  // ---- rules

  private checkServer(): void {
    const server = this.task.server;
    const entries: [string, JsonPath][] =
      typeof server === 'string' ? [[server, ['server']]] : Array.isArray(server) ? server.map((s, i) => [s, ['server', i]]) : [];
    const seen = new Set<string>();
    for (const [namespace, path] of entries) {
      if (typeof namespace !== 'string' || !NAMESPACE_PATTERN.test(namespace)) continue; // the schema reported it
      if (!this.isKnownNamespace(namespace)) this.unknownNamespace(this.spanAt(path), namespace, this.spanAt(path));
      else if (seen.has(namespace)) this.report('invalid-value', this.spanAt(path), `\`${namespace}\` is listed twice in \`server\``);
      seen.add(namespace);
    }
  }

  private checkInitialState(): void {
    const states = this.task.initial_state;
    if (!isObject(states)) return;
    for (const [namespace, state] of Object.entries(states)) {
      if (!NAMESPACE_PATTERN.test(namespace)) continue; // the schema reported it
      const keySpan = () => this.spanAt(['initial_state', namespace], 'key');
      const info = this.registry.get(namespace);
      if (!info) {
        this.unknownNamespace(keySpan(), namespace, keySpan());
        continue;
      }
      if (this.serverIsKnown && !this.taskNamespaces.includes(namespace)) {
        this.report('initial-state-namespace-not-in-task', keySpan(),
          `initial state for \`${namespace}\`, which \`server\` does not list: add it to \`server\` or remove this state`);
      }
      if (isObject(state) && !info.validateState(state)) {
        this.findings.push(...mapAjvErrors(this.document, info.validateState.errors ?? [], ['initial_state', namespace], 'initial-state-schema', `${namespace} state`));
      }
    }
  }

  private checkAvailableTools(): void {
    const tools = this.task.available_tools;
    if (!Array.isArray(tools)) return;
    const seen = new Set<string>();
    tools.forEach((tool, i) => {
      if (typeof tool !== 'string' || !QUALIFIED_NAME_PATTERN.test(tool)) return;
      const span = () => this.spanAt(['available_tools', i]);
      if (seen.has(tool)) {
        const previous = this.document.nodeAt(['available_tools', i - 1])!;
        const start = previous.offset + previous.length;
        const here = span();
        this.report('duplicate-tool', here, `\`${tool}\` is listed twice in \`available_tools\``, [
          { title: `Remove the duplicate \`${tool}\``, edits: [{ offset: start, length: here.offset + here.length - start, newText: '' }] },
        ]);
      }
      seen.add(tool);
      this.checkToolName(tool, span);
    });
  }

  /** Reports an unknown namespace or tool in a qualified tool name; true when the tool exists. */
  private checkToolName(tool: string, lazySpan: () => Span): boolean {
    const [namespace, name = ''] = splitQualified(tool);
    const info = this.registry.get(namespace);
    if (!info) {
      const span = lazySpan();
      this.unknownNamespace(this.namespacePart(span, namespace), namespace, span, `.${name}`);
      return false;
    }
    if (!info.tools.has(name)) {
      const span = lazySpan();
      const suggestion = closest(name, info.tools.keys());
      const fixes = suggestion ? [{ title: `Change to \`${namespace}.${suggestion}\``, edits: [this.replaceWith(span, `${namespace}.${suggestion}`)] }] : [];
      const hint = suggestion ? `did you mean \`${namespace}.${suggestion}\`?` : `its tools: ${[...info.tools.keys()].join(', ')}`;
      this.report('unknown-tool', span, `\`${namespace}\` has no tool \`${name}\`: ${hint}`, fixes);
      return false;
    }
    return true;
  }

  private checkSolutions(): void {
    let longest: { calls: number; index: number } | undefined;
    // A predicate that reads the final answer (its declaration says so: `reads: ["answer"]`).
    const answerChecked = this.predicateLeaves.some((l) => this.registry.predicate(l.name)?.declaration.reads.includes('answer') && !this.isNegated(l));
    for (const key of ['reference_solutions', 'counterexamples'] as const) {
      const sequences = this.task[key];
      if (!Array.isArray(sequences)) continue;
      const label = key === 'reference_solutions' ? 'reference solution' : 'counterexample';
      sequences.forEach((sequence, i) => {
        if (!Array.isArray(sequence)) return;
        let calls = 0;
        let answered = false;
        sequence.forEach((step, j) => {
          if (!isObject(step)) return;
          if ('answer' in step && !('tool' in step)) {
            answered = true;
            if (j !== sequence.length - 1) {
              this.report('answer-step-not-last', this.spanAt([key, i, j]), `the final answer must be the last step of ${label} ${i + 1}: steps after it never run`);
            }
            return;
          }
          calls++;
          const tool = step.tool;
          if (typeof tool !== 'string' || !QUALIFIED_NAME_PATTERN.test(tool)) return;
          const toolSpan = () => this.spanAt([key, i, j, 'tool']);
          if (!this.checkToolName(tool, toolSpan)) return;
          if (!this.availableTools.has(tool)) {
            const edit = this.appendToArray(['available_tools'], tool);
            const fixes = edit ? [{ title: `Add \`${tool}\` to available_tools`, edits: [edit] }] : [];
            if (key === 'reference_solutions') {
              this.report('tool-not-available', toolSpan(),
                `${label} ${i + 1} calls \`${tool}\`, which is not in \`available_tools\`: the gateway would refuse the call. Add it to \`available_tools\``, fixes);
            } else {
              // A counterexample must fail because the predicate rejects its end state, not because the gateway refused a call.
              this.report('tool-not-available', toolSpan(),
                `${label} ${i + 1} calls \`${tool}\`, which is not in \`available_tools\`: it fails because the gateway refuses the call, which says nothing about the predicate. Add the tool or change the counterexample`, fixes);
              this.findings.at(-1)!.severity = 'warning';
            }
          }
          const info = this.registry.tool(tool)!;
          const args = step.arguments ?? {};
          if (isObject(args) && !info.validateInput(args)) {
            const base: JsonPath = 'arguments' in step ? [key, i, j, 'arguments'] : [key, i, j];
            const found = mapAjvErrors(this.document, info.validateInput.errors ?? [], base, 'tool-arguments', `arguments of \`${tool}\``);
            if (!('arguments' in step)) for (const f of found) Object.assign(f, toolSpan());
            this.findings.push(...found);
          }
        });
        if (key === 'reference_solutions') {
          if (!longest || calls > longest.calls) longest = { calls, index: i };
          if (answerChecked && !answered) {
            this.report('reference-missing-answer', this.spanAt([key, i]),
              `the predicate checks the final answer, but reference solution ${i + 1} ends without one: end it with \`{ "answer": "..." }\``);
          }
        }
      });
    }
    if (!Array.isArray(this.task.counterexamples) || this.task.counterexamples.length === 0) {
      const path: JsonPath = Array.isArray(this.task.counterexamples) ? ['counterexamples'] : ['reference_solutions'];
      this.report('missing-counterexample', this.spanAt(path, 'key'),
        'no counterexample: add a sequence that must fail (a plausible wrong solution) to show the predicate is specific enough');
    }
    const maxSteps = this.task.max_steps;
    if (longest && typeof maxSteps === 'number' && Number.isInteger(maxSteps) && longest.calls > maxSteps) {
      this.report('max-steps-too-low', this.spanAt(['max_steps']),
        `\`max_steps\` is ${maxSteps} but reference solution ${longest.index + 1} makes ${longest.calls} tool calls: raise \`max_steps\` to at least ${longest.calls}`,
        [{ title: `Set max_steps to ${longest.calls}`, edits: [{ ...this.spanAt(['max_steps']), newText: String(longest.calls) }] }]);
    }
  }

  private isNegated(leaf: LeafNode): boolean {
    let negations = 0;
    for (let i = 1; i <= leaf.path.length; i++) if (leaf.path[i - 1] === 'not') negations++;
    return negations % 2 === 1;
  }

  private checkLeaves(): void {
    const reportedMissing = new Set<string>();
    for (const leaf of this.predicateLeaves) {
      const keySpan = () => this.spanAt([...leaf.path, leaf.name], 'key');
      const info = this.registry.get(leaf.namespace);
      if (!info) {
        this.unknownNamespace(this.namespacePart(keySpan(), leaf.namespace), leaf.namespace, keySpan(), `.${leaf.predicate}`);
        continue;
      }
      const predicate = info.predicates.get(leaf.predicate);
      if (!predicate) {
        // A predicate written under the wrong namespace (`fs.fileExists`) or misspelled (`filesystem.fileExist`).
        const allNames = [...this.registry.namespaces.values()].flatMap((n) => qualifyAll(n.namespace, n.predicates.keys()));
        const suggestion = closest(leaf.predicate, info.predicates.keys()) ? `${leaf.namespace}.${closest(leaf.predicate, info.predicates.keys())}` : closest(leaf.name, allNames);
        const fixes = suggestion ? [{ title: `Change to \`${suggestion}\``, edits: [this.replaceWith(keySpan(), suggestion)] }] : [];
        const hint = suggestion ? `did you mean \`${suggestion}\`?` : `its predicates: ${[...info.predicates.keys()].join(', ')}`;
        this.report('unknown-predicate', keySpan(), `\`${leaf.namespace}\` has no predicate \`${leaf.predicate}\`: ${hint}`, fixes);
        continue;
      }
      if (isObject(leaf.args) && !predicate.validateArguments(leaf.args)) {
        this.findings.push(...mapAjvErrors(this.document, predicate.validateArguments.errors ?? [], [...leaf.path, leaf.name], 'predicate-arguments', `arguments of \`${leaf.name}\``));
      }
      // A virtual namespace (no server: the answer checks) need not be listed in `server`.
      if (!this.registry.isVirtual(leaf.namespace) && this.serverIsKnown && !this.taskNamespaces.includes(leaf.namespace) && !reportedMissing.has(leaf.namespace)) {
        reportedMissing.add(leaf.namespace);
        this.report('predicate-namespace-not-in-task', keySpan(),
          `\`${leaf.name}\` checks \`${leaf.namespace}\`, which \`server\` does not list: its server would not run. Add \`${leaf.namespace}\` to \`server\``,
          this.addToServerFix(leaf.namespace));
      }
    }
  }

  private addToServerFix(namespace: string): Fix[] {
    const server = this.task.server;
    if (typeof server === 'string') {
      return [{ title: `Add \`${namespace}\` to server`, edits: [{ ...this.spanAt(['server']), newText: JSON.stringify([server, namespace]) }] }];
    }
    const edit = this.appendToArray(['server'], namespace);
    return edit ? [{ title: `Add \`${namespace}\` to server`, edits: [edit] }] : [];
  }

  private checkCombinators(root: PredicateNode): void {
    const insideReportedNegation = new Set<PredicateNode>();
    for (const node of walk(root)) {
      if (node.kind === 'not' && node.child.kind === 'not' && !insideReportedNegation.has(node)) {
        insideReportedNegation.add(node.child); // `not not not p`: one finding for the chain
        const inner = this.document.nodeAt(node.child.path.concat('not'));
        const fixes = inner ? [{ title: 'Remove the double negation', edits: [{ ...this.spanAt(node.path), newText: this.document.text.slice(inner.offset, inner.offset + inner.length) }] }] : [];
        this.report('double-negation', this.spanAt([...node.path, 'not'], 'key'), '`not` inside `not` cancels out: use the inner predicate itself', fixes);
      }
      if (node.kind === 'all') {
        const asserted = new Map<string, LeafNode>();
        for (const child of node.children) if (child.kind === 'leaf') asserted.set(canonicalLeaf(child), child);
        for (const child of node.children) {
          if (child.kind !== 'not' || child.child.kind !== 'leaf') continue;
          const twin = asserted.get(canonicalLeaf(child.child));
          if (twin) {
            this.report('contradiction', this.spanAt(child.path),
              `this \`all\` both asserts and negates \`${twin.name}\` with the same arguments: the predicate can never be true`);
          }
        }
      }
    }
  }

  /** Reports `passes-initially`; true when it did. */
  private checkPassesInitially(root: PredicateNode): boolean {
    const states = isObject(this.task.initial_state) ? this.task.initial_state : {};
    // The end state of an agent that does nothing is the initial state (`unchanged` holds; `matchesReference` is undecided).
    const evaluateLeaf = stateLeafEvaluator(this.registry, states, undefined, { initial: states });
    if (evaluate(root, evaluateLeaf).value !== true) return false;
    const trueLeaves = this.predicateLeaves
      .filter((leaf) => evaluateLeaf(leaf).value === true)
      .map((leaf) => `\`${leaf.name}\``);
    const detail = trueLeaves.length ? ` (already true: ${[...new Set(trueLeaves)].join(', ')})` : '';
    this.report('passes-initially', this.spanAt(['success_predicate'], 'key'),
      `the predicate is already true on the initial state${detail}: an agent that does nothing passes. Change the initial state or the predicate`);
    return true;
  }

  /** An information task must fail when no call gets through and the answer holds no data. */
  private checkAnswerWithoutData(root: PredicateNode): void {
    const goal = this.task.goal;
    if (typeof goal !== 'string') return;
    const initial_state = isObject(this.task.initial_state) ? (this.task.initial_state as Record<string, Record<string, unknown>>) : {};
    const passing = passingBlindAnswers({ goal, initial_state }, this.registry, root);
    if (!passing.length) return;
    const at = firstAnswerLeaf(root, this.registry);
    this.report('answer-without-data', at ? this.spanAt(at, 'key') : this.spanAt(['success_predicate'], 'key'),
      `the predicate passes when every tool call is refused and the agent answers with ${passing.map((p) => p.source).join(', ')}: the answer does not depend on the data. Check the values the data gives, not the goal's words`);
  }

  /** Every id in `equivalent_mutants` must name a mutant the reference solutions still have. */
  private checkEquivalentMutants(): void {
    const declared = this.task.equivalent_mutants;
    if (!Array.isArray(declared) || declared.length === 0 || this.findings.some((f) => f.severity === 'error')) return;
    const task = TaskSchema.safeParse(this.task);
    if (!task.success) return;
    const ids = deriveMutants(task.data, this.registry).map((m) => m.id);
    declared.forEach((entry, i) => {
      if (!isObject(entry) || typeof entry.mutant !== 'string' || ids.includes(entry.mutant)) return;
      // `<argument>=*`: every replacement of an argument the reference solution has (some may not be derived).
      if (entry.mutant.endsWith('=*') && argumentExists(task.data, entry.mutant)) return;
      const suggestion = closest(entry.mutant, ids);
      const span = this.spanAt(['equivalent_mutants', i, 'mutant']);
      const fixes = suggestion ? [{ title: `Change to \`${suggestion}\``, edits: [this.replaceWith(span, suggestion)] }] : [];
      this.report('unknown-mutant', span,
        `no mutant \`${entry.mutant}\` of the reference solutions${suggestion ? `: did you mean \`${suggestion}\`?` : ''} (\`mcpbench check --mutants\` prints the ids). Remove the entry if the mutant is gone`, fixes);
    });
  }

  /**
   * Every string value that still holds a `TODO:` (what `mcpbench new` leaves for the author to write). The
   * initial state is the world the agent finds, where a file may well say `TODO:`; it is left out.
   */
  private checkTodos(): void {
    const visit = (value: unknown, path: JsonPath) => {
      if (typeof value === 'string') {
        const marker = TODO.exec(value);
        if (marker) {
          const what = value.slice(marker.index + marker[0].length).trim() || value;
          this.report('todo', this.spanAt(path), `left to do: ${what.length > 120 ? `${what.slice(0, 119)}…` : what}`);
        }
      } else if (Array.isArray(value)) {
        value.forEach((item, i) => visit(item, [...path, i]));
      } else if (isObject(value)) {
        for (const [key, item] of Object.entries(value)) if (path.length > 0 || key !== 'initial_state') visit(item, [...path, key]);
      }
    };
    visit(this.task, []);
  }

  private checkGoalValues(): void {
    const goal = this.task.goal;
    if (typeof goal !== 'string') return;
    const checked = this.predicateLeaves.flatMap((leaf) => scalarStrings(leaf.args));
    // A quoted phrase already in the initial state names something that exists (a PR's title, a label, the
    // wrong date to replace): it identifies, it is not asked for. Files and ids are checked regardless.
    let existing: string[] | undefined; // read only when a quoted value needs it: states can be large
    const unchecked = goalValues(goal).filter(
      (value) => !isValueChecked(value, checked) && !(value.kind === 'quoted' && isValueChecked(value, (existing ??= scalarStrings(this.task.initial_state)))),
    );
    const goalNode = unchecked.length ? this.document.nodeAt(['goal']) : undefined;
    if (!goalNode) return;
    const raw = this.document.text.slice(goalNode.offset + 1, goalNode.offset + goalNode.length - 1);
    for (const value of unchecked) {
      // Exact range inside the string when the raw JSON has no escapes before the value; else the whole goal.
      const rawIndex = raw === goal ? value.index : raw.indexOf(value.text);
      const span = rawIndex >= 0 ? { offset: goalNode.offset + 1 + rawIndex, length: value.text.length } : spanOf(goalNode);
      const what = value.kind === 'file' ? 'file' : value.kind === 'id' ? 'id' : 'value';
      this.report('goal-value-unchecked', span, `the goal names the ${what} \`${value.text}\` but no predicate checks it: an agent could ignore it and still pass`);
    }
  }

  /** Each namespace's initial state as the predicates read it (normalised), or undefined when it cannot be read. */
  private normalizedInitial(namespace: string): unknown {
    const info = this.registry.get(namespace);
    const states = isObject(this.task.initial_state) ? this.task.initial_state : {};
    const raw = states[namespace];
    if (!info?.plugin || (raw !== undefined && !info.validateState(raw))) return undefined;
    try {
      return info.plugin.normalizeState(raw);
    } catch {
      return undefined;
    }
  }

  private initialEvaluator() {
    const states = isObject(this.task.initial_state) ? this.task.initial_state : {};
    return stateLeafEvaluator(this.registry, states, undefined, { initial: states });
  }

  /** An `any` that holds before the agent acts: a branch true on the initial state, or a leaf next to its negation. */
  private checkAlwaysTrueAny(root: PredicateNode): void {
    if (this.findings.some((f) => f.code === 'passes-initially')) return;
    const evaluateLeaf = this.initialEvaluator();
    for (const node of walk(root)) {
      if (node.kind !== 'any') continue;
      const positive = new Map<string, LeafNode>();
      for (const child of node.children) if (child.kind === 'leaf') positive.set(canonicalLeaf(child), child);
      let reported = false;
      for (const child of node.children) {
        if (child.kind === 'not' && child.child.kind === 'leaf' && positive.has(canonicalLeaf(child.child))) {
          this.report('any-always-true', this.spanAt(child.path), `this \`any\` holds both \`${child.child.name}\` and its negation: it is always true and checks nothing`);
          reported = true;
          break;
        }
      }
      if (reported) continue;
      const branch = node.children.find((child) => evaluate(child, evaluateLeaf).value === true);
      if (branch) {
        this.report('any-always-true', this.spanAt(branch.path),
          'this branch of `any` is already true on the initial state: an agent that leaves it alone satisfies the `any` without doing the task. Check the change this path makes, or remove the branch');
      }
    }
  }

  /** Pointers of the generic state predicates that name nothing: not in the initial state (unchanged), nor possible in the state schema. */
  private checkFramePointers(): void {
    for (const leaf of this.predicateLeaves) {
      if (!FRAME_PREDICATES.includes(leaf.predicate) || !isObject(leaf.args)) continue;
      const info = this.registry.get(leaf.namespace);
      if (!info?.predicates.get(leaf.predicate)?.validateArguments(leaf.args)) continue;
      const initial = this.normalizedInitial(leaf.namespace);
      if (initial === undefined) continue;
      const pointers: [string, JsonPath][] = typeof leaf.args.pointer === 'string'
        ? [[leaf.args.pointer, [...leaf.path, leaf.name, 'pointer']]]
        : Array.isArray(leaf.args.pointers) ? leaf.args.pointers.flatMap((p, i): [string, JsonPath][] => (typeof p === 'string' ? [[p, [...leaf.path, leaf.name, 'pointers', i]]] : [])) : [];
      for (const [pointer, path] of pointers) {
        if (resolvePointer(initial, pointer).found) continue;
        if (leaf.predicate === 'unchanged') {
          this.report('pointer-resolves-to-nothing', this.spanAt(path),
            `\`${pointer}\` names nothing in the initial ${leaf.namespace} state: \`unchanged\` there only checks that nothing appears. Point at a value the state holds, or say it with \`not\` over an existence predicate`);
        } else if (!pointerInSchema(info.server.state_schema, pointer)) {
          this.report('pointer-resolves-to-nothing', this.spanAt(path),
            `\`${pointer}\` names nothing the ${leaf.namespace} state schema allows: \`${leaf.predicate}\` there can never see a value. Point at a place of the state`);
        }
      }
    }
  }

  /** A positive leaf already true at the start, of a namespace no reference solution writes: always true. */
  private checkVacuousLeaves(): void {
    if (this.findings.some((f) => f.code === 'passes-initially')) return;
    // A namespace some available tool writes to can change, and a leaf true at the start there is a frame.
    const written = writtenNamespaces([...this.referenceCalls(), ...[...this.availableTools].map((tool) => ({ tool }))], this.registry);
    const evaluateLeaf = this.initialEvaluator();
    // A leaf that names a file, id or quoted value of the goal is what `goal-value-unchecked` asks for: an anchor
    // of the goal's value, left to that rule (a follow-up: let answer checks count as checking it).
    const goalNamed = typeof this.task.goal === 'string' ? goalValues(this.task.goal) : [];
    for (const leaf of this.predicateLeaves) {
      if (FRAME_PREDICATES.includes(leaf.predicate) || this.isNegated(leaf) || written.has(leaf.namespace)) continue;
      if (!this.taskNamespaces.includes(leaf.namespace)) continue; // predicate-namespace-not-in-task says it
      if (goalNamed.some((value) => isValueChecked(value, scalarStrings(leaf.args)))) continue;
      if (this.registry.isVirtual(leaf.namespace) || this.registry.predicate(leaf.name)?.declaration.reads.includes('answer')) continue;
      if (evaluateLeaf(leaf).value !== true) continue;
      this.report('vacuous-leaf', this.spanAt([...leaf.path, leaf.name], 'key'),
        `\`${leaf.name}\` is already true on the initial state and no reference solution nor available tool writes to \`${leaf.namespace}\`: it holds whatever the agent does. Check what the task changes, or remove it`);
    }
  }

  /** The tool calls of the reference solutions, as written (`{ tool }` steps only). */
  private referenceCalls(): { tool: string }[] {
    const solutions = Array.isArray(this.task.reference_solutions) ? this.task.reference_solutions : [];
    return solutions.flatMap((s) => (Array.isArray(s) ? s : [])).filter((step): step is { tool: string } => isObject(step) && typeof step.tool === 'string');
  }

  /** A task that writes must say what must not change in each namespace it writes to. */
  private checkFrameCondition(root: PredicateNode): void {
    // A predicate that passes before the agent acts, or an empty combinator, is its own error: a frame would hide it.
    if (this.findings.some((f) => f.code === 'empty-combinator' || f.code === 'passes-initially')) return;
    const written = writtenNamespaces(this.referenceCalls(), this.registry);
    const framed = framedNamespaces(this.predicateLeaves.filter((leaf) => !this.isNegated(leaf)));
    const missing = [...written].filter((ns) => !framed.has(ns) && this.registry.get(ns)?.predicates.has('matchesReference'));
    if (!missing.length) return;
    const leavesText = missing.map((ns) => `{ ${JSON.stringify(`${ns}.matchesReference`)}: { "pointers": [""] } }`);
    let edit: TextEdit | undefined;
    const allNode = root.kind === 'all' ? this.document.nodeAt(['success_predicate', 'all']) : undefined;
    if (allNode?.type === 'array') edit = appendToArray(this.document.text, allNode, leavesText);
    else {
      const node = this.document.nodeAt(['success_predicate']);
      if (node) edit = { offset: node.offset, length: node.length, newText: `{ "all": [${[this.document.text.slice(node.offset, node.offset + node.length), ...leavesText].join(', ')}] }` };
    }
    const fixes = edit ? [{ title: `Add a frame: ${missing.map((ns) => `\`${ns}.matchesReference\``).join(', ')} (the end state equals the first reference solution's there)`, edits: [edit] }] : [];
    this.report('missing-frame-condition', this.spanAt(['success_predicate'], 'key'),
      `the reference solutions write to ${missing.map((ns) => `\`${ns}\``).join(', ')} but the predicate says nothing about what must not change there: one extra destructive write (another record deleted, a file overwritten) passes. Add \`unchanged\` on what the task leaves alone, \`stateEquals\` on the result, or \`matchesReference\``,
      fixes);
  }

  private checkUnusedNamespaces(): void {
    const usedByPredicate = new Set(this.predicateLeaves.map((l) => l.namespace));
    const usedByTools = new Set(namespacesOf(this.availableTools));
    const server = this.task.server;
    this.taskNamespaces.forEach((namespace, i) => {
      if (!this.isKnownNamespace(namespace) || this.registry.isVirtual(namespace)) return;
      if (usedByPredicate.has(namespace) || usedByTools.has(namespace)) return;
      const path: JsonPath = typeof server === 'string' ? ['server'] : ['server', i];
      this.report('unused-namespace', this.spanAt(path), `\`${namespace}\` is in \`server\` but no predicate checks it and no available tool uses it`);
    });
  }
}

function canonicalLeaf(leaf: LeafNode): string {
  try {
    return canonicalize({ [leaf.name]: leaf.args }) ?? leaf.name;
  } catch {
    // A number JSON can write but RFC 8785 cannot (1e999 parses to Infinity): compare by plain JSON instead.
    return JSON.stringify({ [leaf.name]: leaf.args });
  }
}

