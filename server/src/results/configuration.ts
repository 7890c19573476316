/**
 * Like for like: the part of a run's configuration that changes its scores besides its agent, set and month
 * (fault profile and rate, perturbation levels, trials, the reference agent's retry). The leaderboard ranks and
 * `compare` compares only runs of one configuration; runs of several are never pooled.
 */
import { z } from 'zod';

const RunConfigShape = z.object({
  fault_profile: z.string().catch('unknown'),
  fault_rate: z.number().optional().catch(undefined),
  perturbations: z.array(z.string()).optional().catch(undefined),
  perturbation: z.string().optional().catch(undefined),
  trials: z.number().int().catch(1),
  agent_options: z.record(z.string(), z.unknown()).optional().catch(undefined),
});

export interface ScoringConfiguration {
  fault_profile: string;
  fault_rate: number | null;
  perturbation: string;
  trials: number;
  retry: boolean | null;
}

/** The configuration of a run.json (as read, or as stored in the database's config column). */
export function configurationOf(config: unknown): ScoringConfiguration {
  const parsed = RunConfigShape.safeParse(config);
  const c = parsed.success ? parsed.data : { fault_profile: 'unknown', trials: 1 };
  const levels = 'perturbations' in c && c.perturbations ? c.perturbations.join(',') : 'perturbation' in c && c.perturbation ? c.perturbation : 'none';
  const retry = 'agent_options' in c ? c.agent_options?.retry : undefined;
  return {
    fault_profile: c.fault_profile,
    fault_rate: 'fault_rate' in c && c.fault_rate !== undefined ? c.fault_rate : null,
    perturbation: levels,
    trials: c.trials,
    retry: typeof retry === 'boolean' ? retry : null,
  };
}

/** The configuration as canonical JSON text (fixed key order): what runs are grouped by. */
export function scoringConfiguration(config: unknown): string {
  const c = configurationOf(config);
  return JSON.stringify({ fault_profile: c.fault_profile, fault_rate: c.fault_rate, perturbation: c.perturbation, trials: c.trials, retry: c.retry });
}

const StoredSchema = z.object({ fault_profile: z.string(), fault_rate: z.number().nullable(), perturbation: z.string(), trials: z.number(), retry: z.boolean().nullable() });

/** The stored configuration text read back (undefined when it is not one: a run imported before configurations). */
export function parseConfiguration(text: string): ScoringConfiguration | undefined {
  try {
    const parsed = StoredSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The configuration in a few words, for tables and messages: `faults heavy, perturbation none, trials 2, retry`. */
export function configurationText(text: string): string {
  const c = parseConfiguration(text);
  if (!c) return 'unknown configuration';
  return [`faults ${c.fault_profile}${c.fault_rate !== null ? ` at ${c.fault_rate}` : ''}`, `perturbation ${c.perturbation}`, `trials ${c.trials}`, ...(c.retry ? ['retry'] : [])].join(', ');
}
