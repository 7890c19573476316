/**
 * Shortcut agents, the engine half (`mcpbench check --shortcuts`): plans one episode per shortcut of every
 * task (tasks/shortcuts.ts derives them; the reference agent replays each at no faults) and judges them. A
 * shortcut that passes with an end state or answer other than the reference's earns a verdict it should not:
 * an error `shortcut-passes` on the predicate, with the shortcut's trace, unless the task accepts it with a
 * reason in `accepted_shortcuts`.
 */
import type { Registry } from '../mcp/registry.ts';
import type { FaultProfile } from '../record/faults.ts';
import type { CheckFinding, EpisodeRecord } from '../record/schema.ts';
import type { LoadedTask } from '../tasks/load.ts';
import type { Task } from '../tasks/model.ts';
import { deriveShortcuts } from '../tasks/shortcuts.ts';
import type { EpisodeSpec } from './episode.ts';
import { mutantDiff, replayEpisodes } from './mutants.ts';

export const SHORTCUT_VARIANT_PREFIX = 'shortcut:';
const NONE: FaultProfile = { name: 'none', failure_rate: 0, fault_weights: {} };

export function planShortcuts(tasks: LoadedTask[], registry: Registry): EpisodeSpec[] {
  return replayEpisodes(tasks, SHORTCUT_VARIANT_PREFIX, (task) => deriveShortcuts(task, registry));
}

export interface ShortcutJudgement {
  tried: number;
  passed: string[];
  accepted: string[];
  notRun: string[];
  findings: CheckFinding[];
}

export function judgeShortcuts(task: Task, results: readonly EpisodeRecord[], registry: Registry): ShortcutJudgement {
  const latest = new Map<string, EpisodeRecord>();
  for (const r of results) if (r.task_id === task.id && r.fault_profile === NONE.name && r.status !== 'infra_error') latest.set(r.variant, r);
  const reference = latest.get('reference:0');
  const accepted = new Set((task.accepted_shortcuts ?? []).map((a) => a.shortcut));
  const judgement: ShortcutJudgement = { tried: 0, passed: [], accepted: [], notRun: [], findings: [] };
  for (const shortcut of deriveShortcuts(task, registry)) {
    judgement.tried++;
    const run = latest.get(`${SHORTCUT_VARIANT_PREFIX}${shortcut.id}`);
    if (!run) {
      judgement.notRun.push(shortcut.id);
      continue;
    }
    if (!run.passed) continue;
    // The reference's own end state and answer: the shortcut did the task after all.
    if (reference?.passed && reference.end_state !== undefined && reference.end_state === run.end_state && reference.answer === run.answer) continue;
    judgement.passed.push(shortcut.id);
    if (accepted.has(shortcut.id)) {
      judgement.accepted.push(shortcut.id);
      continue;
    }
    const trace = mutantDiff(task.reference_solutions[0] ?? [], shortcut.steps).join('\n');
    judgement.findings.push({
      code: 'shortcut-passes',
      severity: 'error',
      message: `shortcut ${shortcut.id} passes (${shortcut.description}): the predicate gives it the verdict without the task done. Tighten the predicate (a frame condition, the exact value), or list it in \`accepted_shortcuts\` with the reason it may pass. Its trace against reference solution 1:\n${trace}`,
      path: ['success_predicate'],
      shortcut: shortcut.id,
    });
  }
  return judgement;
}
