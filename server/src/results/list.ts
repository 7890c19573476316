/** The runs the results database holds, with their success rate and failure modes (`mcpbench results list`). */
import type { ResultsDb } from './db.ts';

export interface ListedRun {
  run_id: string;
  agent_label: string;
  set_name: string | null;
  month: string;
  fault_profile: string;
  trials: number;
  episode_records: number;
  /** complete, incomplete (planned units missing) or unresolved (infrastructure errors left). */
  completeness: 'complete' | 'incomplete' | 'unresolved';
  planned_units: number | null;
  units: number;
  unresolved_units: number;
  /** The configuration that changes scores, as stored (JSON; configurationText says it). */
  configuration: string;
  success_rate: number | null;
  /** Episodes per failure mode, most frequent first. */
  failure_modes: Record<string, number>;
}

export async function listRuns(db: ResultsDb): Promise<ListedRun[]> {
  const runs = await db
    .selectFrom('runs as r')
    .leftJoin('run_scores as s', (j) => j.onRef('s.run_id', '=', 'r.run_id').on('s.metric', '=', 'success_rate'))
    .select(['r.run_id', 'r.agent_label', 'r.set_name', 'r.month', 'r.fault_profile', 'r.trials', 'r.episode_records', 'r.completeness', 'r.planned_units', 'r.units', 'r.unresolved_units', 'r.configuration', 's.value as success_rate'])
    .orderBy('r.month')
    .orderBy('r.run_id')
    .execute();
  // Failure modes counted per run.
  const modes = await db
    .selectFrom('episodes')
    .select(['run_id', 'failure_mode', (eb) => eb.fn.countAll<number>().as('episodes')])
    .where('failure_mode', 'is not', null)
    .groupBy(['run_id', 'failure_mode'])
    .orderBy('run_id')
    .orderBy('failure_mode')
    .execute();
  const modesOf = (run: string) => Object.fromEntries(modes.filter((m) => m.run_id === run).sort((a, b) => Number(b.episodes) - Number(a.episodes)).map((m) => [m.failure_mode, Number(m.episodes)]));
  return runs.map((r) => ({ ...r, failure_modes: modesOf(r.run_id) }));
}
