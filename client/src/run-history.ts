/**
 * Past runs in the workspace's `runs/` folder, newest first, as the language server reads them (through the
 * run record, their numbers derived as the CLI derives them; engine/history.ts): the line each shows.
 */
import type { RunSummary as RunData } from '../../server/src/engine/protocol.ts';

export interface RunSummary extends RunData {
  /** The line the runner panel's history shows under the run id. */
  label: string;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * What a past run came to, in one line. A check says what check decided (`check ok`, `check failing` and
 * which tasks), from its checks.json: its episodes are probes that must fail as often as pass, so a count of
 * passed episodes would say nothing. A run says its outcomes, the three kinds of not passing apart.
 */
export function historyLabel(run: RunData): string {
  if (run.error) return `unreadable: ${run.error}`;
  const damaged = run.damaged ? ` · ${plural(run.damaged, 'damaged line')}` : '';
  if (run.kind === 'check') {
    if (!run.checks) return `check not finished (interrupted, or still running)${damaged}`;
    const { tasks, failing } = run.checks;
    if (!failing.length) return `check ok · ${plural(tasks, 'task')}${damaged}`;
    const named = failing.slice(0, 3).join(', ') + (failing.length > 3 ? `, and ${failing.length - 3} more` : '');
    return `check failing · ${failing.length} of ${plural(tasks, 'task')}: ${named}${damaged}`;
  }
  const o = run.outcomes;
  return (
    `${run.agent} · faults ${run.fault_profile} · ${o.passed}/${run.episodes} passed` +
    (o.failed ? ` · ${o.failed} failed` : '') +
    (o.agent_error ? ` · ${plural(o.agent_error, 'agent error')}` : '') +
    (o.infra_error ? ` · ${plural(o.infra_error, 'infra error')}` : '') +
    damaged
  );
}

/** The runs the language server listed, each with its line. */
export function labelled(runs: readonly RunData[]): RunSummary[] {
  return runs.map((run) => ({ ...run, label: historyLabel(run) }));
}
