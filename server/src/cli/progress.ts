/**
 * A run's or check's events onto the terminal: progress on stderr (a bar on a terminal, a line per episode
 * otherwise), or with `--reporter jsonl` one RunEvent per line on stdout for the editor.
 */
import { SingleBar } from 'cli-progress';
import { startRun, type RunEvent, type RunFinished, type SessionOptions } from '../engine/index.ts';
import { outcomeReason } from '../record/work-units.ts';
import type { CliIo } from './context.ts';

export type ReporterKind = 'progress' | 'jsonl' | 'none';

/** A progress reporter for a run or check, made when the session says how many episodes there are. */
interface Reporter {
  onEvent(event: RunEvent): void;
  finish(): void;
}

function progressReporter(io: CliIo, kind: ReporterKind, started: Extract<RunEvent, { type: 'run-started' }>): Reporter {
  const total = started.episodes;
  if (kind === 'none') return { onEvent: () => undefined, finish: () => undefined };
  const counts = { passed: 0, failed: 0, agent: 0, infra: 0 };
  const count = (status: string) => {
    if (status === 'passed') counts.passed++;
    else if (status === 'failed') counts.failed++;
    else if (status === 'agent_error') counts.agent++;
    else counts.infra++;
  };
  if (io.isTTY) {
    const bar = new SingleBar({ format: 'episodes [{bar}] {value}/{total} | passed {passed} | failed {failed} | agent errors {agent} | infra {infra} | {eta_formatted} left', hideCursor: true, stream: process.stderr });
    bar.start(total, started.recorded, counts);
    return {
      onEvent: (event) => {
        if (event.type !== 'episode-finished') return;
        count(event.result.status);
        if (event.result.status === 'infra_error') bar.update(counts);
        else bar.increment(counts);
      },
      finish: () => bar.stop(),
    };
  }
  let n = started.recorded;
  return {
    onEvent: (event) => {
      if (event.type !== 'episode-finished') return;
      const r = event.result;
      if (r.status !== 'infra_error') n++;
      const detail = r.error || r.failure ? ` (${r.status === 'infra_error' ? `attempt ${r.attempt}: ` : ''}${outcomeReason(r)})` : '';
      const perturbation = r.perturbation === 'none' ? '' : ` perturb=${r.perturbation}`;
      io.stderr(`[${n}/${total}] ${r.status.padEnd(11)} ${r.task_id} ${r.variant} faults=${r.fault_profile}${perturbation} trial=${r.trial}${detail}\n`);
    },
    finish: () => undefined,
  };
}

/** Ctrl-C and SIGTERM abort the run: in-flight episodes stop, their servers are closed, nothing half-written. */
function interruptSignal(io: CliIo): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const onSignal = (name: string) => () => {
    if (controller.signal.aborted) return;
    io.stderr(`\n${name}: stopping; finished episodes are saved, resume with --resume\n`);
    controller.abort(new Error(name));
  };
  const sigint = onSignal('SIGINT');
  const sigterm = onSignal('SIGTERM');
  process.on('SIGINT', sigint);
  process.on('SIGTERM', sigterm);
  return { signal: controller.signal, dispose: () => (process.off('SIGINT', sigint), process.off('SIGTERM', sigterm)) };
}

/**
 * Runs a session with a reporter: jsonl events on stdout, or progress and notices on stderr. Returns how
 * the session finished.
 */
export async function runWithReporter(options: SessionOptions, io: CliIo, kind: ReporterKind): Promise<RunFinished> {
  const interrupt = interruptSignal(io);
  let reporter: Reporter | undefined;
  let finished: RunFinished | undefined;
  try {
    for await (const event of startRun({ ...options, signal: interrupt.signal })) {
      if (kind === 'jsonl') io.stdout(`${JSON.stringify(event)}\n`);
      if (event.type === 'run-started') {
        reporter = progressReporter(io, kind, event);
        if (event.recorded && kind !== 'jsonl') io.stderr(`resuming ${event.run_id}: ${event.recorded} of ${event.episodes} episodes already recorded\n`);
      } else if (event.type === 'notice') {
        if (kind !== 'jsonl') io.stderr(`${event.level === 'warning' ? 'warning: ' : ''}${event.message}\n`);
      } else if (event.type === 'run-finished') finished = event;
      else reporter?.onEvent(event);
    }
  } finally {
    reporter?.finish();
    interrupt.dispose();
  }
  if (!finished) throw new Error('the run ended without run-finished');
  return finished;
}
