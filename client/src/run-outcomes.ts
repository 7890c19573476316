/**
 * From a RunEvent stream to one outcome per task, which is what a test item shows. A task is done when all
 * its scored episodes have finished (trials × variants, from `run-started`): `errored` when an agent broke
 * in one of them (an agent error: its process or model endpoint, not a wrong answer), `failed` when one
 * failed, `passed` when all passed. An infrastructure error is retried by the runner, so it only makes a
 * task `errored` when the run ends without a scored episode. For `check`, the verdict per task comes from
 * the `run-finished` event's checks.
 */
import { expectedOutcome } from '../../server/src/record/check-variants.ts';
import type { RunEvent, RunFinished } from '../../server/src/engine/protocol.ts';
import { episodeMessage } from './verdict-text.ts';
import type { CheckRecord, EpisodeRecord } from '../../server/src/record/schema.ts';

export type OutcomeState = 'passed' | 'failed' | 'errored' | 'skipped';

export interface TaskOutcome {
  taskId: string;
  state: OutcomeState;
  message?: string;
  durationMs: number;
  results: EpisodeRecord[];
}

/** What check decided about a task (the run store's CheckRecord). */
export type CheckSummary = CheckRecord;

export function checksOf(event: RunFinished): CheckSummary[] {
  return event.kind === 'check' ? event.checks : [];
}

interface TaskState {
  expected: number;
  results: EpisodeRecord[];
  infra: EpisodeRecord[];
  started: boolean;
  done: boolean;
}

export interface TrackerUpdate {
  started: string[];
  finished: TaskOutcome[];
  checks: CheckSummary[];
}

export class RunOutcomeTracker {
  private readonly tasks = new Map<string, TaskState>();

  constructor(private readonly mode: 'run' | 'check') {}

  /** The tasks the run was asked for, so a run that dies before its first event still accounts for each. */
  expect(taskIds: string[]): void {
    for (const id of taskIds) this.state(id);
  }

  private state(taskId: string): TaskState {
    let state = this.tasks.get(taskId);
    if (!state) this.tasks.set(taskId, (state = { expected: 1, results: [], infra: [], started: false, done: false }));
    return state;
  }

  onEvent(event: RunEvent): TrackerUpdate {
    const update: TrackerUpdate = { started: [], finished: [], checks: [] };
    switch (event.type) {
      case 'run-started': {
        const perTask = event.tasks.length ? Math.max(1, Math.round(event.episodes / event.tasks.length)) : 1;
        for (const id of event.tasks) this.state(id).expected = perTask;
        break;
      }
      case 'episode-started': {
        const state = this.state(event.key.task_id);
        if (!state.started) {
          state.started = true;
          update.started.push(event.key.task_id);
        }
        break;
      }
      case 'episode-finished': {
        const result = event.result;
        const state = this.state(result.task_id);
        if (result.status === 'infra_error') state.infra.push(result);
        else state.results.push(result);
        if (this.mode === 'run' && !state.done && state.results.length >= state.expected) {
          state.done = true;
          update.finished.push(runOutcome(result.task_id, state));
        }
        break;
      }
      case 'run-finished': {
        if (this.mode !== 'check') break;
        for (const check of checksOf(event)) {
          update.checks.push(check);
          const state = this.state(check.task_id);
          if (state.done) continue;
          state.done = true;
          update.finished.push({
            taskId: check.task_id,
            state: check.ok ? 'passed' : 'failed',
            ...(check.ok ? {} : { message: checkMessage(check) }),
            durationMs: sumDurations(state.results),
            results: state.results,
          });
        }
        break;
      }
    }
    return update;
  }

  /**
   * The process ended: every task not yet decided gets its outcome from what did arrive. After a cancel, a task
   * not decided is `skipped` whatever arrived of it (some trials of pass^k say nothing about all of them).
   */
  finish(reason: string, how: { cancelled?: boolean } = {}): TaskOutcome[] {
    const outcomes: TaskOutcome[] = [];
    for (const [taskId, state] of this.tasks) {
      if (state.done) continue;
      state.done = true;
      if (how.cancelled) outcomes.push({ taskId, state: 'skipped', message: reason, durationMs: sumDurations(state.results), results: state.results });
      else if (state.results.length && this.mode === 'run') outcomes.push(runOutcome(taskId, state));
      else if (state.infra.length) {
        const last = state.infra[state.infra.length - 1]!;
        outcomes.push({ taskId, state: 'errored', message: episodeMessage(last), durationMs: sumDurations(state.infra), results: state.infra });
      } else if (state.started || state.results.length) outcomes.push({ taskId, state: 'errored', message: reason, durationMs: sumDurations(state.results), results: state.results });
      else outcomes.push({ taskId, state: 'skipped', message: reason, durationMs: 0, results: [] });
    }
    return outcomes;
  }
}

const sumDurations = (results: EpisodeRecord[]) => results.reduce((sum, r) => sum + (r.duration_ms ?? 0), 0);

/** Passed when every scored episode passed (pass^k: all k trials); errored when an agent broke; failed otherwise. */
function runOutcome(taskId: string, state: TaskState): TaskOutcome {
  const failed = state.results.filter((r) => !r.passed);
  return {
    taskId,
    state: failed.some((r) => r.status === 'agent_error') ? 'errored' : failed.length ? 'failed' : 'passed',
    ...(failed.length ? { message: failed.map(episodeMessage).join('\n\n') } : {}),
    durationMs: sumDurations(state.results),
    results: state.results,
  };
}

const STATE_WORDS: Record<OutcomeState, string> = { passed: 'passed', failed: 'failed', errored: 'errored', skipped: 'not run' };

/**
 * What became of a run, in the words both views use: the runner panel's closing line is made from the same
 * outcomes the Test Explorer shows, so they never disagree (a run cancelled after its last episode finished
 * says what its tasks came to, and that the cancel cut nothing short). An errored task says why: an agent or
 * infrastructure error is not a failure of the task.
 */
export function runSummary(outcomes: readonly TaskOutcome[], how: { cancelled?: boolean } = {}): string {
  const counts = (Object.keys(STATE_WORDS) as OutcomeState[])
    .map((state) => [state, outcomes.filter((o) => o.state === state).length] as const)
    .filter(([, n]) => n > 0)
    .map(([state, n]) => `${n} ${STATE_WORDS[state]}`);
  const tally = counts.length ? counts.join(', ') : 'no tasks';
  const cutShort = outcomes.some((o) => o.state === 'skipped');
  const lines = [how.cancelled ? (cutShort ? `Cancelled: ${tally}.` : `${tally} (cancelled after the last episode had finished: nothing was cut short).`) : `Finished: ${tally}.`];
  const errored = outcomes.filter((o) => o.state === 'errored');
  for (const o of errored.slice(0, 3)) lines.push(`${o.taskId} errored: ${(o.message ?? 'no reason given').split('\n')[0]}`);
  if (errored.length > 3) lines.push(`… and ${errored.length - 3} more errored (see the Test Results)`);
  return lines.join('\n');
}

export function checkMessage(check: CheckSummary): string {
  const lines = check.problems.map((p) => `- ${p}`);
  const { paths, leaves } = check.coverage;
  lines.push(`Coverage: ${paths.covered}/${paths.total} solution paths, ${leaves.covered}/${leaves.total} leaves witnessed`);
  return lines.join('\n');
}

export interface CheckedOutcome {
  /** `failed, as expected` (a noop or counterexample that failed), `passed, but must fail`, ... */
  label: string;
  asExpected: boolean;
}

/**
 * A check episode against the outcome its variant must have (the noop agent and counterexamples fail, reference
 * solutions pass); undefined for an episode with no such expectation (a run's, a fault probe's) or that did not
 * come to a verdict (an agent or infrastructure error: errored, neither as expected nor not).
 */
export function checkedOutcome(result: { variant: string; fault_profile: string; status: string; passed: boolean }): CheckedOutcome | undefined {
  const expected = result.fault_profile === 'none' ? expectedOutcome(result.variant) : undefined;
  if (expected === undefined || result.status === 'infra_error' || result.status === 'agent_error') return undefined;
  const asExpected = (expected === 'pass') === result.passed;
  const outcome = result.passed ? 'passed' : 'failed';
  return { label: asExpected ? `${outcome}, as expected` : `${outcome}, but must ${expected}`, asExpected };
}
