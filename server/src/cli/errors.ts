/**
 * How the `mcpbench` command ends on an error: the one place its exit status is chosen and its error printed.
 * Every user-facing error derives from McpbenchError (server/src/errors.ts) and carries its code and exit
 * status; anything else is an internal error (exit 2, with its stack, since it is a bug of ours). With
 * `--format json` the error is also printed on stdout as `{"error": {"code", "message", "exit_status", ...}}`.
 */
import { CommanderError } from 'commander';
import { EXIT_OK, EXIT_USAGE, McpbenchError, type ErrorJson, type McpbenchErrorOptions } from '../errors.ts';
import { AgentOptionsError } from '../runner/agents/agent.ts';
import { TaskLoadError } from '../tasks/load.ts';
import { agentOptionFlag } from './agent-settings.ts';

/** A usage problem of the command line itself (a flag that makes no sense with another ...). */
export class UsageError extends McpbenchError {
  static override readonly code: string = 'usage';
}

/** An error a command raises itself, with a code of its own (`no-task-files`, `invalid-json` ...). */
export class CommandError extends McpbenchError {
  static override readonly code: string = 'command';
  constructor(code: string, message: string, options: Omit<McpbenchErrorOptions, 'code'> = {}) {
    super(message, { ...options, code });
  }
}

export interface ErrorIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/** The exit status of a command that threw `error`. */
export function exitStatusOf(error: unknown): number {
  // Help and version are successes; everything else commander rejects is a usage error.
  if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
  if (error instanceof McpbenchError) return error.exitStatus;
  return EXIT_USAGE;
}

/** The error as text on stderr, `mcpbench: message` and any detail lines. */
function errorText(error: unknown): string {
  if (error instanceof TaskLoadError) {
    return `mcpbench: ${error.message}; nothing was run:\n` + error.diagnostics.map((d) => `${d.uri}:${d.start.line + 1}:${d.start.character + 1} ${d.severity} ${d.code} ${d.message}\n`).join('');
  }
  if (error instanceof AgentOptionsError) {
    const flag = error.option ? agentOptionFlag(error.option) : undefined;
    return `mcpbench: ${error.message}${flag ? ` (set it with ${flag})` : ''}\n`;
  }
  if (error instanceof McpbenchError) return `mcpbench: ${error.message}\n`;
  return `mcpbench: internal error: ${(error as Error).stack ?? error}\n`;
}

/** The error as JSON: its fields, the lint findings of a task that did not load. */
export function errorJson(error: unknown): ErrorJson & { diagnostics?: unknown[] } {
  if (error instanceof TaskLoadError) return { ...error.toJson(), diagnostics: error.diagnostics.map(({ uri, start, end, severity, code, message }) => ({ uri, start, end, severity, code, message })) };
  if (error instanceof McpbenchError) return error.toJson();
  return { code: 'internal', message: error instanceof Error ? error.message : String(error), exit_status: EXIT_USAGE };
}

/**
 * Reports a command's error (commander has printed its own already) and returns the exit status. `format`
 * is the command's `--format`, when it has one and got that far.
 */
export function reportError(error: unknown, io: ErrorIo, format?: string): number {
  const status = exitStatusOf(error);
  if (error instanceof CommanderError) return status;
  io.stderr(errorText(error));
  if (format === 'json') io.stdout(JSON.stringify({ error: errorJson(error) }, null, 2) + '\n');
  return status;
}
