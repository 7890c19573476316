/**
 * `mcpbench worker --queue redis://HOST:PORT`: argv onto a queue worker (queue/worker.ts). One log line per
 * event on stdout. SIGTERM or Ctrl-C: take no new job, hand back the episodes running, exit 0; a second
 * signal exits at once (the jobs running come back to the queue when their lease lapses).
 */
import type { Command } from 'commander';
import { EXIT_OK, loadRegistry, startQueueWorker } from '../../engine/index.ts';
import { DEFAULT_LEASE_MS, DEFAULT_MAX_STALLS, DEFAULT_STALL_CHECK_MS } from '../../queue/worker.ts';
import { defaultBackend, PROCESS_BACKEND_WARNING, type SandboxBackend } from '../../runner/sandbox.ts';
import type { CommandContext } from '../context.ts';
import { positiveInteger as positive, sandboxOption } from '../options.ts';

interface WorkerFlags {
  queue: string;
  concurrency: number;
  sandbox?: SandboxBackend;
  leaseMs: number;
  stallCheckMs: number;
  maxStalls: number;
  name?: string;
}

export function register(program: Command, { io, version, setExitCode }: CommandContext): void {
  program
    .command('worker')
    .description('Run episodes of queued runs (mcpbench run --queue) on this machine, until SIGTERM or Ctrl-C.')
    .requiredOption('--queue <url>', 'the Redis of the queue: redis://HOST:PORT')
    .option('--concurrency <n>', 'episodes at a time (per agent endpoint)', positive, 1)
    .addOption(sandboxOption())
    .option('--lease-ms <ms>', "a job's lease: renewed every half of it while its episode runs; a dead worker's jobs come back after it lapses", positive, DEFAULT_LEASE_MS)
    .option('--stall-check-ms <ms>', 'how often lapsed leases are looked for', positive, DEFAULT_STALL_CHECK_MS)
    .option('--max-stalls <n>', "how many times a job may lose its worker before it fails (the coordinator then records an infrastructure error and retries it)", positive, DEFAULT_MAX_STALLS)
    .option('--name <name>', 'the name this worker gives in records and logs (default: the host name)')
    .action(async (flags: WorkerFlags) => {
      const backend = flags.sandbox ?? defaultBackend();
      if (backend === 'process') io.stderr(`warning: ${PROCESS_BACKEND_WARNING}\n`);
      const log = (line: string) => io.stdout(`${new Date().toISOString()} ${line}\n`);
      const worker = await startQueueWorker({
        url: flags.queue,
        version,
        registry: await loadRegistry(),
        backend,
        concurrency: flags.concurrency,
        leaseMs: flags.leaseMs,
        stallCheckMs: flags.stallCheckMs,
        maxStalls: flags.maxStalls,
        ...(flags.name ? { host: flags.name } : {}),
        log,
      });
      await new Promise<void>((resolve) => {
        let signals = 0;
        const onSignal = (name: string) => {
          if (++signals > 1) process.exit(130);
          log(`${name}: taking no new job; finishing the episodes running (again to quit at once)`);
          void worker.stop().then(() => {
            log('stopped');
            process.off('SIGINT', sigint);
            process.off('SIGTERM', sigterm);
            resolve();
          });
        };
        const sigint = () => onSignal('SIGINT');
        const sigterm = () => onSignal('SIGTERM');
        process.on('SIGINT', sigint);
        process.on('SIGTERM', sigterm);
      });
      setExitCode(EXIT_OK);
    });
}
