/**
 * The `command` agent: a user's agent as a local process, one process per episode.
 *
 * Contract (what a user's agent can rely on):
 * - Environment (added to the runner's own environment and `env`):
 *     MCPBENCH_GATEWAY_URL   the gateway's MCP endpoint (streamable HTTP), e.g. http://127.0.0.1:41234/mcp
 *     MCPBENCH_TASK_ID       the task id
 *     MCPBENCH_GOAL          the goal, as shown to the agent
 *     MCPBENCH_MAX_STEPS     the tool-call budget (decimal integer)
 *     MCPBENCH_TOOLS         JSON array of the exposed tools: [{ name, description?, inputSchema }]
 *     MCPBENCH_DEADLINE_MS   milliseconds the process has before it is killed
 * - stdin: the same JSON document the `endpoint` agent POSTs (schemas/endpoint-request.schema.json),
 *   followed by a newline and end of input. Reading it is optional.
 * - Final answer: the last stdout line of the form `MCPBENCH_ANSWER: <text>` (text up to the end of that
 *   line); without one, the episode has no answer. Other stdout is ignored, so the agent may log freely.
 * - Exit status 0 ends the episode normally; a non-zero status (or death by a signal) fails it, with the
 *   tail of stderr in the message.
 * - The process runs in its own process group. On timeout or abort (Ctrl-C, episode timeout) the whole
 *   group gets SIGTERM, then SIGKILL after a grace period; when the process exits, any children it left
 *   behind are killed too, so nothing keeps calling the gateway after the episode.
 */
import { spawn } from 'node:child_process';
import { AgentError, type Agent, type AgentContext, type AgentOutcome } from './agent.ts';
import { agentDeadlineMs, buildAgentRequest, tail } from './endpoint.ts';

export interface CommandAgentOptions {
  /** argv (no shell), or one string run by `/bin/sh -c`. */
  command: string[] | string;
  cwd?: string;
  /** Added to the runner's environment (and overridden by the MCPBENCH_* variables). */
  env?: Record<string, string>;
  /** Wall-clock limit for the process; default 300 s, lowered to the task's `timeout_s` when set. */
  timeoutMs?: number;
  /** Time between SIGTERM and SIGKILL on abort or timeout. */
  killGraceMs?: number;
}

const ANSWER_PREFIX = 'MCPBENCH_ANSWER:';
const STDERR_TAIL_CHARS = 4000;
/** A stdout line longer than this is not an answer line; bounding it bounds memory. */
const MAX_LINE_CHARS = 1_000_000;

export function createCommandAgent(options: CommandAgentOptions): Agent {
  const argv = typeof options.command === 'string' ? ['/bin/sh', '-c', options.command] : options.command;
  if (argv.length === 0 || !argv[0]) throw new Error('command agent: the command is empty');
  const killGraceMs = options.killGraceMs ?? 2000;
  return {
    name: 'command',
    async run(context: AgentContext): Promise<AgentOutcome> {
      context.signal.throwIfAborted();
      const deadlineMs = agentDeadlineMs(context, options.timeoutMs);
      const request = buildAgentRequest(context, deadlineMs);
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        ...options.env,
        MCPBENCH_GATEWAY_URL: request.gateway.url,
        MCPBENCH_TASK_ID: request.task_id,
        MCPBENCH_GOAL: request.goal,
        MCPBENCH_MAX_STEPS: String(request.max_steps),
        MCPBENCH_TOOLS: JSON.stringify(request.available_tools),
        MCPBENCH_DEADLINE_MS: String(deadlineMs),
      };
      return new Promise<AgentOutcome>((resolve, reject) => {
        const child = spawn(argv[0]!, argv.slice(1), {
          cwd: options.cwd,
          env,
          stdio: ['pipe', 'pipe', 'pipe'],
          // Its own process group, so that a kill reaches whatever the agent spawned.
          detached: true,
        });
        let answer: string | undefined;
        let pending = '';
        let stderr = '';
        let stopping: 'abort' | 'timeout' | undefined;
        let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
        let spawnError: Error | undefined;
        let graceTimer: NodeJS.Timeout | undefined;

        const takeLine = (line: string) => {
          const clean = line.endsWith('\r') ? line.slice(0, -1) : line;
          if (clean.startsWith(ANSWER_PREFIX)) answer = clean.slice(ANSWER_PREFIX.length).trim();
        };
        child.stdout.setEncoding('utf8');
        child.stdout.on('data', (chunk: string) => {
          pending += chunk;
          const lines = pending.split('\n');
          pending = lines.pop() ?? '';
          for (const line of lines) takeLine(line);
          if (pending.length > MAX_LINE_CHARS) pending = '';
        });
        child.stderr.setEncoding('utf8');
        child.stderr.on('data', (chunk: string) => {
          stderr = (stderr + chunk).slice(-STDERR_TAIL_CHARS);
        });
        // The agent need not read its stdin; a closed pipe is not an error.
        child.stdin.on('error', () => {});
        child.stdin.end(`${JSON.stringify(request)}\n`);

        const killGroup = (signal: NodeJS.Signals) => {
          if (child.pid === undefined) return;
          try {
            process.kill(-child.pid, signal);
          } catch {
            // ESRCH: the group is already gone. Elsewhere (no process groups) fall back to the child alone.
            if (exit === undefined) child.kill(signal);
          }
        };
        const stop = (why: 'abort' | 'timeout') => {
          if (stopping || exit) return;
          stopping = why;
          killGroup('SIGTERM');
          graceTimer = setTimeout(() => killGroup('SIGKILL'), killGraceMs);
        };
        const onAbort = () => stop('abort');
        context.signal.addEventListener('abort', onAbort, { once: true });
        const deadline = setTimeout(() => stop('timeout'), deadlineMs);

        child.on('error', (error) => {
          spawnError = error;
        });
        child.on('exit', (code, signal) => {
          exit = { code, signal };
          // Children the agent left behind (same group) must not outlive the episode.
          killGroup('SIGKILL');
        });
        child.on('close', (code, signal) => {
          clearTimeout(deadline);
          if (graceTimer) clearTimeout(graceTimer);
          context.signal.removeEventListener('abort', onAbort);
          if (pending) takeLine(pending);
          const status = exit ?? { code, signal };
          if (stopping === 'abort') return reject(context.signal.reason);
          const process = { exited: true, exit_code: status.code, signal: status.signal, ...(stderr.trim() ? { stderr_tail: tail(stderr) } : {}) };
          if (stopping === 'timeout') {
            const reason = `command agent: timed out after ${deadlineMs} ms and was killed`;
            return reject(new AgentError('agent-timeout', reason, process, reason + stderrNote(stderr)));
          }
          if (spawnError) {
            const reason = `command agent: could not start ${argv[0]}: ${spawnError.message}`;
            return reject(new AgentError('agent-spawn', reason, { exited: true }));
          }
          if (status.code !== 0) {
            const how = status.code === null ? `was killed by ${status.signal ?? 'a signal'}` : `exited with code ${status.code}`;
            return reject(new AgentError('agent-exit', `command agent ${how}`, process, `command agent ${how}${stderrNote(stderr)}`));
          }
          resolve(answer !== undefined ? { answer } : {});
        });
      });
    },
  };
}

function stderrNote(stderr: string): string {
  return stderr.trim() ? `; stderr:\n${tail(stderr)}` : ' (no stderr)';
}
