/**
 * One CLI process whose stdout is a RunEvent stream. Cancelling sends SIGINT first (the CLI then stops its
 * episodes, closes their servers and keeps what finished), and SIGKILL when it has not exited after a grace
 * period.
 */
import { spawn } from 'node:child_process';
import type { RunEvent } from '../../server/src/engine/protocol.ts';
import { JsonlEventReader } from './run-events.ts';

export interface CliRunOptions {
  command: string;
  args: string[];
  cwd: string;
  env?: NodeJS.ProcessEnv;
  onEvent: (event: RunEvent) => void;
  /** stderr text and stdout lines that are not events. */
  onLog?: (text: string) => void;
  /** How long SIGINT gets before SIGKILL. */
  killGraceMs?: number;
}

export interface CliExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the process could not be started at all. */
  error?: Error;
  cancelled: boolean;
}

export interface CliRun {
  pid: number | undefined;
  exited: Promise<CliExit>;
  cancel(): void;
}

export function startCli(options: CliRunOptions): CliRun {
  const child = spawn(options.command, options.args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log = options.onLog ?? (() => undefined);
  const reader = new JsonlEventReader(options.onEvent, (line) => log(line + '\n'));
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => reader.push(chunk));
  child.stderr.on('data', (chunk: string) => log(chunk));
  let cancelled = false;
  let killTimer: NodeJS.Timeout | undefined;
  const exited = new Promise<CliExit>((resolve) => {
    let startError: Error | undefined;
    child.on('error', (error) => {
      startError = error;
      // 'close' may never come when spawning failed.
      if (child.pid === undefined) resolve({ code: null, signal: null, error, cancelled });
    });
    child.on('close', (code, signal) => {
      clearTimeout(killTimer);
      reader.end();
      resolve({ code, signal, cancelled, ...(startError ? { error: startError } : {}) });
    });
  });
  return {
    pid: child.pid,
    exited,
    cancel() {
      if (cancelled || child.exitCode !== null || child.signalCode !== null) return;
      cancelled = true;
      child.kill('SIGINT');
      killTimer = setTimeout(() => child.kill('SIGKILL'), options.killGraceMs ?? 5000);
      killTimer.unref();
    },
  };
}

export interface CliExecOptions {
  command: string;
  args: string[];
  cwd: string;
  env?: NodeJS.ProcessEnv;
  /** stderr as it arrives (the output channel). */
  onStderr?: (text: string) => void;
}

export interface CliExecResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Set when the process could not be started at all. */
  error?: Error;
}

/** Runs one short CLI command (`review list --format json` ...) to its end and collects what it printed. */
export function execCli(options: CliExecOptions): Promise<CliExecResult> {
  return new Promise((resolve) => {
    const child = spawn(options.command, options.args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let startError: Error | undefined;
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => (stdout += chunk));
    child.stderr.on('data', (chunk: string) => {
      stderr += chunk;
      options.onStderr?.(chunk);
    });
    child.on('error', (error) => {
      startError = error;
      if (child.pid === undefined) resolve({ code: null, signal: null, stdout, stderr, error });
    });
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr, ...(startError ? { error: startError } : {}) }));
  });
}
