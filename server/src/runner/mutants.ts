/**
 * Mutation testing of predicates, the engine half (`mcpbench check --mutants`): plans one episode per mutant of
 * every reference solution (tasks/mutants.ts derives them; the reference agent replays each at no faults) and
 * judges them against the reference episodes.
 *
 * A mutant is
 * - killed when the predicate fails on it;
 * - equivalent when it passes leaving exactly the end state and answer its reference solution leaves (no
 *   predicate over the end state could ever tell them apart);
 * - declared equivalent when it passes and the task lists it in `equivalent_mutants` with a reason;
 * - a survivor otherwise: the predicate accepts a different end state. That is a gap in the predicate, and
 *   the check fails the task (finding `surviving-mutant`).
 * The mutation score is killed / (killed + survivors).
 */
import { diffArrays } from 'diff';
import type { Registry } from '../mcp/registry.ts';
import { coversMutant, deriveMutants, type Mutant } from '../tasks/mutants.ts';
import type { SolutionStep, Task } from '../tasks/model.ts';
import { createReferenceAgent } from './agents/reference.ts';
import type { EpisodeSpec } from './episode.ts';
import type { z } from 'zod';
import type { FaultProfile } from '../record/faults.ts';
import type { EpisodeRecord, MUTANT_OUTCOMES, MutantVerdictSchema, MutationReportSchema } from '../record/schema.ts';
import type { JsonPath } from '../json-values.ts';
import type { LoadedTask } from '../tasks/load.ts';

export const MUTANT_VARIANT_PREFIX = 'mutant:';

const NONE: FaultProfile = { name: 'none', failure_rate: 0, fault_weights: {} };

export type MutantOutcome = (typeof MUTANT_OUTCOMES)[number];
export type MutantVerdict = z.infer<typeof MutantVerdictSchema>;
export type MutationReport = z.infer<typeof MutationReportSchema>;

/**
 * Episodes that replay derived sequences (mutants, shortcuts): the reference agent replaying each at no
 * faults, under the variant `<prefix><id>`.
 */
export function replayEpisodes(tasks: LoadedTask[], prefix: string, derive: (task: LoadedTask['task']) => { id: string; steps: SolutionStep[] }[]): EpisodeSpec[] {
  const agent = createReferenceAgent();
  return tasks.flatMap(({ task, hash }) =>
    derive(task).map(
      (replay): EpisodeSpec => ({
        task,
        taskHash: hash,
        agent,
        profile: NONE,
        goal: task.goal,
        steps: replay.steps,
        key: { task_id: task.id, trial: 0, variant: `${prefix}${replay.id}`, fault_profile: NONE.name, perturbation: 'none' },
      }),
    ),
  );
}

/** The episodes of every mutant of every task. */
export function planMutants(tasks: LoadedTask[], registry: Registry): EpisodeSpec[] {
  return replayEpisodes(tasks, MUTANT_VARIANT_PREFIX, (task) => deriveMutants(task, registry));
}

function stepLine(step: SolutionStep): string {
  return 'tool' in step ? `${step.tool} ${JSON.stringify(step.arguments ?? {})}` : `answer ${JSON.stringify(step.answer)}`;
}

/** A mutant as a diff against its reference solution: one line per step, `-` only in the reference, `+` only in the mutant. */
export function mutantDiff(reference: SolutionStep[], mutant: SolutionStep[]): string[] {
  const lines: string[] = [];
  let [r, m] = [0, 0];
  for (const part of diffArrays(reference.map(stepLine), mutant.map(stepLine))) {
    for (const line of part.value) {
      if (part.added) lines.push(`+ ${++m}. ${line}`);
      else if (part.removed) lines.push(`- ${++r}. ${line}`);
      else {
        m++;
        lines.push(`  ${++r}. ${line}`);
      }
    }
  }
  return lines;
}

/**
 * Judges the mutants of one task from the check's episodes (the latest scored record per variant): each
 * mutant's outcome, and the score.
 */
export function judgeMutants(task: Task, results: readonly EpisodeRecord[], registry: Registry): MutationReport {
  const latest = new Map<string, EpisodeRecord>();
  for (const r of results) if (r.task_id === task.id && r.fault_profile === NONE.name && r.status !== 'infra_error') latest.set(r.variant, r);
  const declared = task.equivalent_mutants ?? [];
  const verdicts = deriveMutants(task, registry).map((mutant: Mutant): MutantVerdict => {
    const base = { id: mutant.id, description: mutant.description, solution: mutant.solution, path: mutant.path };
    const run = latest.get(`${MUTANT_VARIANT_PREFIX}${mutant.id}`);
    if (!run) return { ...base, outcome: 'not-run' };
    if (!run.passed) return { ...base, outcome: 'killed' };
    const reference = latest.get(`reference:${mutant.solution}`);
    if (reference?.passed && reference.end_state !== undefined && reference.end_state === run.end_state && reference.answer === run.answer) {
      return { ...base, outcome: 'equivalent' };
    }
    const entry = declared.find((e) => coversMutant(e.mutant, mutant.id));
    if (entry) return { ...base, outcome: 'declared-equivalent', reason: entry.reason };
    return { ...base, outcome: 'survived', diff: mutantDiff(task.reference_solutions[mutant.solution] ?? [], mutant.steps) };
  });
  const count = (outcome: MutantOutcome) => verdicts.filter((v) => v.outcome === outcome).length;
  const killed = count('killed');
  const survived = count('survived');
  return {
    total: verdicts.length,
    killed,
    equivalent: count('equivalent'),
    declared: count('declared-equivalent'),
    survived,
    notRun: count('not-run'),
    score: killed + survived === 0 ? null : killed / (killed + survived),
    mutants: verdicts,
  };
}

/** The set's mutation score: every task's killed over every task's killed and survivors. */
export function setMutationScore(reports: readonly MutationReport[]): { killed: number; survived: number; equivalent: number; declared: number; total: number; score: number | null } {
  const sum = (f: (r: MutationReport) => number) => reports.reduce((n, r) => n + f(r), 0);
  const killed = sum((r) => r.killed);
  const survived = sum((r) => r.survived);
  return { killed, survived, equivalent: sum((r) => r.equivalent), declared: sum((r) => r.declared), total: sum((r) => r.total), score: killed + survived === 0 ? null : killed / (killed + survived) };
}
