/**
 * Failure modes from traces: every failed episode gets one primary mode with the evidence that shows it (a
 * call of the trace, or a leaf of the verdict), decided deterministically from the trace, the task and the
 * namespace schemas. The modes follow MCP-Atlas's diagnostic taxonomy (Appendix E), restricted to what a
 * trace and a state-based verdict can decide without a judge:
 *
 * | mode | decided when (first match wins) |
 * | --- | --- |
 * | no_tool_use | no call at all, while the reference solutions make calls |
 * | budget_exhausted | the agent tried to go past max_steps, or spent its token budget (`failure.code` token-budget) |
 * | hallucinated_tool | a call to a tool the task does not list |
 * | constraint_violated | a `not` node, or a goal leaf, held on the initial state and is false at the end (the agent did what the task forbids, or undid what was right) |
 * | malformed_parameters | a call rejected for invalid arguments (the tool's input schema, or the server's invalid-params answer), and that tool never accepted a call afterwards |
 * | failed_error_recovery | an error the agent saw (injected fault or tool error) after which nothing succeeded, or after which a required tool never succeeded |
 * | wrong_final_answer | an `answer.*` leaf is false although every required tool was called successfully (the data was read) |
 * | wrong_tool_selection | a required tool (one every reference solution calls) never succeeded and the agent called a listed tool no reference solution uses; or every required tool succeeded, the agent also called such a tool, and a goal leaf is false |
 * | premature_stop | budget left, and either a required tool was never called (the agent stopped on the way) or some goal leaves hold and others not after fewer calls than the shortest reference solution, or no final answer where one is checked |
 * | wrong_arguments | every required tool succeeded, a goal leaf is false, and a call's arguments match none of the reference solutions' calls of that tool (MCP-Atlas's "right tool, wrong values") |
 * | unknown | none of the above |
 *
 * `also` lists every other mode that applies, in the same order. The classification is a pure function of
 * (episode, task, registry): the report, the results database, the runner panel and the Test Explorer
 * message all call it.
 */
import type { Registry } from '../mcp/registry.ts';
import { evaluate, stateLeafEvaluator } from '../predicates/evaluate.ts';
import { parsePredicate } from '../predicates/tree.ts';
import { canonicalJson } from '../canonical-json.ts';
import type { Task } from '../tasks/model.ts';
import type { CallRecord, EpisodeRecord, NodeVerdict } from '../record/schema.ts';
import type { JsonPath } from '../json-values.ts';

/**
 * The version of the classification rules: raised with every change to them, so the results database
 * re-imports (re-classifies) runs imported under older rules.
 */
export const FAILURE_RULES_VERSION = 2;

export const FAILURE_MODES = [
  'no_tool_use',
  'budget_exhausted',
  'hallucinated_tool',
  'constraint_violated',
  'malformed_parameters',
  'failed_error_recovery',
  'wrong_final_answer',
  'wrong_tool_selection',
  'premature_stop',
  'wrong_arguments',
  'unknown',
] as const;
export type FailureMode = (typeof FAILURE_MODES)[number];

/** A label and one line of explanation per mode, for reports and the editor. */
export const FAILURE_MODE_INFO: Record<FailureMode, { label: string; family: 'tool-call' | 'cognitive' | 'unknown'; description: string }> = {
  no_tool_use: { label: 'No tool use', family: 'tool-call', description: 'The agent made no tool call although the task needs them.' },
  budget_exhausted: { label: 'Budget exhausted', family: 'tool-call', description: 'The agent ran out of its step budget (max_steps) or its token budget.' },
  hallucinated_tool: { label: 'Hallucinated tool', family: 'tool-call', description: 'The agent called a tool the task does not offer.' },
  constraint_violated: { label: 'Constraint violated', family: 'cognitive', description: 'The agent broke something the task says must not happen (a `not` leaf).' },
  malformed_parameters: { label: 'Malformed parameters', family: 'tool-call', description: 'Calls were rejected for invalid arguments and never corrected.' },
  failed_error_recovery: { label: 'Failed error recovery', family: 'tool-call', description: 'The agent met an error and never recovered from it.' },
  wrong_final_answer: { label: 'Wrong final answer', family: 'cognitive', description: 'The data was read but the final answer is wrong.' },
  wrong_tool_selection: { label: 'Wrong tool selection', family: 'tool-call', description: 'A required tool was never used; the agent used another tool instead.' },
  premature_stop: { label: 'Premature stop', family: 'cognitive', description: 'The agent stopped with budget left before finishing the task.' },
  wrong_arguments: { label: 'Wrong arguments', family: 'cognitive', description: 'The right tools, called with values that do not achieve the goal.' },
  unknown: { label: 'Unknown', family: 'unknown', description: 'No rule explains the failure.' },
};

export interface FailureEvidence {
  /** One sentence saying what shows the mode. */
  detail: string;
  /** The call that shows it (index in the trace). */
  call_index?: number;
  tool?: string;
  /** The predicate node that shows it. */
  leaf_path?: JsonPath;
  leaf?: string;
}

export interface FailureDiagnosis {
  mode: FailureMode;
  evidence: FailureEvidence;
  /** Other modes that apply, in priority order. */
  also: FailureMode[];
}

/** What the classifier reads of an episode: the journal's record (any version). */
export type ClassifiableEpisode = Pick<EpisodeRecord, 'calls' | 'budget_exceeded' | 'passed' | 'max_steps' | 'tool_calls'> & {
  status: string;
  verdict?: NodeVerdict | undefined;
  answer?: string | undefined;
  /** Why a failed episode was stopped before it finished (a model agent's `token-budget`). */
  failure?: { code: string; message: string } | undefined;
};

// ---------------------------------------------------------------------------------------------------------
// Reading calls

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The text an error result carries (MCP content text, or a protocol error's message). */
function resultText(result: unknown): string {
  if (!isRecord(result)) return '';
  if (isRecord(result.error) && typeof result.error.message === 'string') return result.error.message;
  const content = Array.isArray(result.content) ? result.content : [];
  return content.map((c) => (isRecord(c) && typeof c.text === 'string' ? c.text : '')).join(' ').trim();
}

/** Whether the agent saw this call's result as an error. */
export function callIsError(call: CallRecord): boolean {
  if (call.status === 'tool-error' || call.status === 'infra-error' || call.status === 'unlisted' || call.status === 'over-budget') return true;
  if (!isRecord(call.result)) return false;
  return call.result.isError === true || isRecord(call.result.error);
}

const INVALID_PARAMS = -32602;
const INVALID_TEXT = /\binvalid (arguments|params|parameters|input)\b|\bvalidation error\b|\brequired (property|argument)\b/i;

/**
 * Why a call was rejected for invalid arguments, or undefined: its arguments fail the tool's input schema, or
 * the server answered with JSON-RPC invalid params or an "invalid arguments" error.
 */
export function invalidArguments(call: CallRecord, registry: Registry | undefined): string | undefined {
  if (!call.qualified || call.status === 'unlisted' || call.status === 'over-budget') return undefined;
  const tool = registry?.tool(call.qualified);
  if (tool && !tool.validateInput(call.arguments ?? {})) {
    const first = tool.validateInput.errors?.[0];
    return first ? `${first.instancePath || '(arguments)'} ${first.message ?? 'is invalid'}` : 'the arguments fail the input schema';
  }
  if (!callIsError(call)) return undefined;
  const result = call.result;
  if (isRecord(result) && isRecord(result.error) && result.error.code === INVALID_PARAMS) return resultText(result) || 'invalid params';
  const text = resultText(result);
  return INVALID_TEXT.test(text) ? text.slice(0, 200) : undefined;
}

const succeeded = (call: CallRecord) => !callIsError(call) && call.status !== 'unlisted' && call.status !== 'over-budget';

// ---------------------------------------------------------------------------------------------------------
// Reading the task

/** Tools every reference solution calls. */
export function requiredTools(task: Task): string[] {
  const sets = task.reference_solutions.map((s) => new Set(s.flatMap((step) => ('tool' in step ? [step.tool] : []))));
  if (sets.length === 0) return [];
  return [...sets[0]!].filter((tool) => sets.every((set) => set.has(tool))).sort();
}

function referenceCalls(task: Task): Map<string, string[]> {
  const byTool = new Map<string, string[]>();
  for (const solution of task.reference_solutions) {
    for (const step of solution) {
      if (!('tool' in step)) continue;
      const list = byTool.get(step.tool) ?? [];
      list.push(canonicalJson(step.arguments ?? {}));
      byTool.set(step.tool, list);
    }
  }
  return byTool;
}

function* nodes(verdict: NodeVerdict, underNot = false): Generator<{ node: NodeVerdict; underNot: boolean }> {
  yield { node: verdict, underNot };
  for (const child of verdict.children ?? []) yield* nodes(child, underNot !== (verdict.kind === 'not'));
}

const pathKey = (path: JsonPath) => JSON.stringify(path);
const compact = (value: unknown, max = 160) => {
  const text = typeof value === 'string' ? value : JSON.stringify(value) ?? '';
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
};

const initialCache = new WeakMap<Task, Map<string, NodeVerdict> | null>();

/** The initial-state verdict of the task's predicate, by node path (null when it cannot be evaluated); once per task. */
function initialVerdicts(task: Task, registry: Registry): Map<string, NodeVerdict> | null {
  if (initialCache.has(task)) return initialCache.get(task)!;
  let verdicts: Map<string, NodeVerdict> | null;
  try {
    const root = evaluate(parsePredicate(task.success_predicate, ['success_predicate']), stateLeafEvaluator(registry, task.initial_state, undefined));
    verdicts = new Map([...nodes(root)].map(({ node }) => [pathKey(node.path), node]));
  } catch {
    verdicts = null;
  }
  initialCache.set(task, verdicts);
  return verdicts;
}

const leafLabel = (node: NodeVerdict) => node.name ?? node.kind;

// ---------------------------------------------------------------------------------------------------------

/**
 * The failure diagnosis of one episode, or null when it did not fail (passed, or an agent or infrastructure
 * error, which are not the agent's failure to solve the task). `task` and `registry` sharpen it; without the
 * task only the trace-only modes can be decided.
 */
export function classifyFailure(episode: ClassifiableEpisode, task: Task | undefined, registry: Registry | undefined): FailureDiagnosis | null {
  if (episode.passed || episode.status !== 'failed') return null;
  const calls = episode.calls ?? [];
  const found: { mode: FailureMode; evidence: FailureEvidence }[] = [];
  const add = (mode: FailureMode, evidence: FailureEvidence) => found.push({ mode, evidence });
  const callEvidence = (call: CallRecord, detail: string): FailureEvidence => ({ detail, call_index: call.index, tool: call.qualified ?? call.tool });

  const required = task ? requiredTools(task) : [];
  const referenceTools = new Set(task ? task.reference_solutions.flatMap((s) => s.flatMap((step) => ('tool' in step ? [step.tool] : []))) : []);
  const referenceLengths = task ? task.reference_solutions.map((s) => s.filter((step) => 'tool' in step).length) : [];
  const shortest = referenceLengths.length ? Math.min(...referenceLengths) : 0;
  const succeededTools = new Set(calls.filter(succeeded).flatMap((c) => (c.qualified ? [c.qualified] : [])));
  const missing = required.filter((tool) => !succeededTools.has(tool));
  const budgetLeft = !episode.budget_exceeded && episode.tool_calls < episode.max_steps;

  const all = episode.verdict ? [...nodes(episode.verdict)] : [];
  const leaves = all.filter(({ node }) => node.kind === 'leaf');
  const goalLeaves = leaves.filter(({ underNot }) => !underNot);
  const falseGoal = goalLeaves.filter(({ node }) => node.value !== true);
  const trueGoal = goalLeaves.filter(({ node }) => node.value === true);
  const answerLeaves = goalLeaves.filter(({ node }) => node.name?.startsWith('answer.'));
  const wrongAnswer = answerLeaves.find(({ node }) => node.value !== true);
  const falseStateLeaf = falseGoal.find(({ node }) => !node.name?.startsWith('answer.'));

  // 1. No tool use.
  if (calls.length === 0 && (!task || shortest > 0)) {
    add('no_tool_use', { detail: task ? `no tool call; the shortest reference solution makes ${shortest}` : 'no tool call' });
  }
  // 2. Budget exhausted: the step budget, or a model agent's token budget (`--max-tokens-per-episode`).
  if (episode.failure?.code === 'token-budget') add('budget_exhausted', { detail: `token budget spent: ${episode.failure.message}` });
  if (episode.budget_exceeded) {
    const over = calls.find((c) => c.status === 'over-budget');
    const detail = `${episode.tool_calls} calls against max_steps ${episode.max_steps}`;
    add('budget_exhausted', over ? callEvidence(over, `${detail}; call #${over.index} was refused`) : { detail });
  }
  // 3. Hallucinated tool.
  const unlisted = calls.find((c) => c.status === 'unlisted');
  if (unlisted) add('hallucinated_tool', callEvidence(unlisted, `called ${unlisted.tool}, which the task does not list`));
  // 4. Constraint violated: a `not` node, or a goal leaf, that held on the initial state and is false at the end
  // (the agent broke what the task says must stay, or undid what was already right).
  if (task && registry && episode.verdict) {
    const initial = initialVerdicts(task, registry);
    const held = (node: NodeVerdict) => initial?.get(pathKey(node.path))?.value === true;
    const broken =
      all.find(({ node }) => node.kind === 'not' && node.value === false && held(node)) ??
      all.find(({ node, underNot }) => node.kind === 'leaf' && !underNot && node.value === false && !node.name?.startsWith('answer.') && held(node));
    if (broken) {
      const node = broken.node;
      const inner = node.kind === 'not' ? node.children?.[0] : node;
      add('constraint_violated', {
        detail: node.kind === 'not' ? `not ${inner ? leafLabel(inner) : ''} held on the initial state and is false at the end` : `${leafLabel(node)} held on the initial state and is false at the end`,
        leaf_path: node.path,
        ...(inner?.name ? { leaf: inner.name } : {}),
      });
    }
  }
  // 5. Malformed parameters: the last rejected call of a tool that never accepted one afterwards.
  let malformed: { call: CallRecord; why: string } | undefined;
  calls.forEach((call, i) => {
    const why = invalidArguments(call, registry);
    if (!why) return;
    const fixedLater = calls.slice(i + 1).some((c) => c.qualified === call.qualified && succeeded(c) && !invalidArguments(c, registry));
    if (!fixedLater) malformed = { call, why };
  });
  if (malformed) add('malformed_parameters', callEvidence(malformed.call, `call #${malformed.call.index} ${malformed.call.tool} rejected: ${malformed.why}`));
  // 6. Failed error recovery.
  for (let i = 0; i < calls.length; i++) {
    const call = calls[i]!;
    if (!callIsError(call) || call.status === 'unlisted' || call.status === 'over-budget' || invalidArguments(call, registry)) continue;
    const after = calls.slice(i + 1);
    const nothingAfter = !after.some(succeeded);
    const requiredNeverAfter = call.qualified !== undefined && required.includes(call.qualified) && !after.some((c) => c.qualified === call.qualified && succeeded(c));
    if (!nothingAfter && !requiredNeverAfter) continue;
    const what = call.fault ? `${call.fault.type} fault` : `error: ${compact(resultText(call.result), 120)}`;
    add('failed_error_recovery', callEvidence(call, `call #${call.index} ${call.tool} failed (${what}) and ${nothingAfter ? 'no call succeeded after it' : 'the tool never succeeded afterwards'}`));
    break;
  }
  // 7. Wrong final answer: the data was read.
  const dataRead = task ? missing.length === 0 && succeededTools.size > 0 : succeededTools.size > 0;
  if (wrongAnswer && episode.answer !== undefined && dataRead) {
    add('wrong_final_answer', {
      detail: `${leafLabel(wrongAnswer.node)} is ${wrongAnswer.node.value === false ? 'false' : 'undecided'} for the answer ${compact(episode.answer, 120)}`,
      leaf_path: wrongAnswer.node.path,
      ...(wrongAnswer.node.name ? { leaf: wrongAnswer.node.name } : {}),
    });
  }
  // 8. Wrong tool selection / 9. premature stop.
  const offReference = task ? calls.find((c) => c.qualified !== undefined && !referenceTools.has(c.qualified) && c.status !== 'over-budget') : undefined;
  if (task && missing.length === 0 && offReference && succeeded(offReference) && falseStateLeaf) {
    // Every required tool was used, but also one no reference solution uses, and the end state is wrong.
    add('wrong_tool_selection', { ...callEvidence(offReference, `called ${offReference.qualified}, which no reference solution uses, and ${leafLabel(falseStateLeaf.node)} is false`), leaf_path: falseStateLeaf.node.path });
  }
  if (task && missing.length > 0) {
    const other = offReference;
    if (other) {
      add('wrong_tool_selection', callEvidence(other, `${missing.join(', ')} never succeeded (every reference solution calls ${missing.length > 1 ? 'them' : 'it'}); called ${other.qualified} instead`));
    }
    if (budgetLeft) {
      add('premature_stop', { detail: `stopped after ${calls.length} call(s) with ${episode.max_steps - episode.tool_calls} steps left; ${missing.join(', ')} never succeeded` });
    }
  }
  if (budgetLeft && trueGoal.length > 0 && falseGoal.length > 0 && (!task || episode.tool_calls < shortest)) {
    const leaf = falseGoal[0]!.node;
    add('premature_stop', { detail: `${trueGoal.length} goal leaves hold, ${falseGoal.length} not, after ${episode.tool_calls} call(s) with budget left`, leaf_path: leaf.path, ...(leaf.name ? { leaf: leaf.name } : {}) });
  }
  if (budgetLeft && wrongAnswer && episode.answer === undefined) {
    add('premature_stop', { detail: `stopped without a final answer; ${leafLabel(wrongAnswer.node)} checks one`, leaf_path: wrongAnswer.node.path });
  }
  // 10. Wrong arguments.
  if (task && missing.length === 0 && falseStateLeaf) {
    const reference = referenceCalls(task);
    const differing = calls.find((c) => c.qualified !== undefined && succeeded(c) && reference.has(c.qualified) && !reference.get(c.qualified)!.includes(canonicalJson(c.arguments ?? {})));
    if (differing) {
      add('wrong_arguments', {
        ...callEvidence(differing, `${leafLabel(falseStateLeaf.node)} is false; call #${differing.index} ${differing.qualified} ${compact(differing.arguments)} matches no reference call of that tool`),
        leaf_path: falseStateLeaf.node.path,
        ...(falseStateLeaf.node.name ? { leaf: falseStateLeaf.node.name } : {}),
      });
    }
  }

  const seen = new Set<FailureMode>();
  const unique = found.filter(({ mode }) => !seen.has(mode) && seen.add(mode));
  if (unique.length === 0) {
    const leaf = falseGoal[0]?.node;
    return {
      mode: 'unknown',
      evidence: leaf ? { detail: `${leafLabel(leaf)} is ${leaf.value === false ? 'false' : 'undecided'}; no rule explains why`, leaf_path: leaf.path, ...(leaf.name ? { leaf: leaf.name } : {}) } : { detail: task ? 'no rule explains the failure' : 'no rule explains the failure (the task file was not available)' },
      also: [],
    };
  }
  return { mode: unique[0]!.mode, evidence: unique[0]!.evidence, also: unique.slice(1).map((f) => f.mode) };
}

/** One line for a test message or a terminal: `Wrong tool selection: ...`. */
export function failureText(diagnosis: FailureDiagnosis): string {
  return `${FAILURE_MODE_INFO[diagnosis.mode].label}: ${diagnosis.evidence.detail}`;
}

/** Counts per mode, every mode present (zeros included), in taxonomy order. */
export function countModes(modes: Iterable<FailureMode | null | undefined>): Record<FailureMode, number> {
  const counts = Object.fromEntries(FAILURE_MODES.map((m) => [m, 0])) as Record<FailureMode, number>;
  for (const mode of modes) if (mode) counts[mode]++;
  return counts;
}
