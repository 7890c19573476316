/**
 * `mcpbench api`: the submission service (service/) on this machine, its runs made by the engine's run session
 * (in process, or with `--queue redis://...` by `mcpbench worker`s), its store the results database (`--db`).
 * `mcpbench api token create --account NAME`: an account's API token (made with the account if new).
 */
import { resolve } from 'node:path';
import { EXIT_OK } from '../../errors.ts';
import { Command, InvalidArgumentError, Option } from 'commander';
import { runToEnd } from '../../engine/session.ts';
import { loadRegistry, type Registry } from '../../mcp/registry.ts';
import { queueExecutor } from '../../queue/coordinator.ts';
import { openResultsDb, type OpenedDb } from '../../results/db.ts';
import { defaultBackend, PROCESS_BACKEND_WARNING, SANDBOX_BACKENDS, type SandboxBackend } from '../../runner/sandbox.ts';
import { packageRoot } from '../../paths.ts';
import { buildApp } from '../../service/http.ts';
import { createToken, ensureAccount, TOKEN_SCOPES, type TokenScope } from '../../service/store.ts';
import { SubmissionService, type Launcher } from '../../service/submissions.ts';
import type { CommandContext } from '../context.ts';

export interface ApiServerOptions {
  db?: string;
  queue?: string;
  port: number;
  host: string;
  devSet: string;
  runsDir: string;
  concurrency: number;
  episodeConcurrency: number;
  sandbox?: SandboxBackend;
  allowPrivateEndpoints?: boolean;
  rateLimit?: number;
  version: string;
  cwd: string;
  log?: (line: string) => void;
}

/** The engine's run session as the service's launcher. */
export function engineLauncher(registry: Registry, options: Pick<ApiServerOptions, 'queue' | 'episodeConcurrency' | 'sandbox' | 'version' | 'cwd'>): Launcher {
  const backend = options.sandbox ?? defaultBackend();
  const executor = options.queue ? queueExecutor({ url: options.queue, version: options.version }) : undefined;
  return async (request, onEvent) => {
    const finished = await runToEnd(
      {
        mode: 'run',
        registry,
        cwd: options.cwd,
        backend,
        concurrency: options.episodeConcurrency,
        version: options.version,
        env: request.env,
        signal: request.signal,
        tasks: request.tasks,
        out: request.out,
        runId: request.runId,
        agent: request.agent,
        agentOptions: request.agentOptions,
        trials: request.trials,
        faults: request.faults,
        set: request.set,
        ...(executor ? { executor } : {}),
      },
      onEvent,
    );
    if (finished.kind !== 'run') throw new Error('a run session finished as a check');
    return { run_id: finished.run_id, directory: finished.directory, interrupted: finished.interrupted, scores: finished.scores };
  };
}

export interface RunningApi {
  url: string;
  service: SubmissionService;
  opened: OpenedDb;
  close(): Promise<void>;
}

/** Opens the database, starts the service and listens. */
export async function startApiServer(options: ApiServerOptions): Promise<RunningApi> {
  const registry = await loadRegistry();
  const opened = await openResultsDb(options.db, options.cwd);
  try {
    const service = await SubmissionService.start({
      db: opened.db,
      registry,
      launch: engineLauncher(registry, options),
      devSet: options.devSet,
      runsDir: options.runsDir,
      concurrency: options.concurrency,
      allowPrivateEndpoints: options.allowPrivateEndpoints ?? false,
      ...(options.log ? { log: options.log } : {}),
    });
    const app = await buildApp(service, { ...(options.rateLimit ? { rateLimit: options.rateLimit } : {}) });
    const address = await app.listen({ port: options.port, host: options.host });
    return {
      url: address,
      service,
      opened,
      close: async () => {
        await app.close();
        await service.stop();
        await opened.close();
      },
    };
  } catch (error) {
    await opened.close();
    throw error;
  }
}

const positive = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a whole number >= 1');
  return n;
};
const port = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('expected a port (0-65535)');
  return n;
};

export function register(program: Command, { io, version, setExitCode }: CommandContext): void {
  const api = program
    .command('api')
    .description('The submission service: the HTTP API of schemas/openapi.yaml (submissions, leaderboard, dev-set tasks, published runs), until SIGTERM or Ctrl-C.')
    .option('--port <n>', 'the port to listen on', port, 8787)
    .option('--host <address>', 'the address to listen on', '127.0.0.1')
    .option('--db <target>', 'the results database: a PGlite folder (default runs/results.pglite) or postgres://...')
    .option('--queue <url>', "run the episodes on `mcpbench worker`s through this Redis (redis://HOST:PORT) instead of in this process")
    .option('--tasks <dir>', 'the public dev set served and run', 'tasks')
    .option('--out <dir>', 'where run folders go', 'runs')
    .option('--concurrency <n>', 'submissions running at once', positive, 1)
    .option('--episode-concurrency <n>', "episodes at a time within a submission's run", positive, 2)
    .addOption(new Option('--sandbox <backend>', 'sandbox backend of the MCP servers (default: bwrap where it works)').choices([...SANDBOX_BACKENDS]))
    .option('--rate-limit <n>', 'requests a minute per account (per address for public reads)', positive, 600)
    .option('--allow-private-endpoints', 'let endpoint submissions point at this machine or a private network (one machine, tests)')
    .action(async (flags: { port: number; host: string; db?: string; queue?: string; tasks: string; out: string; concurrency: number; episodeConcurrency: number; sandbox?: SandboxBackend; rateLimit: number; allowPrivateEndpoints?: boolean }) => {
      const log = (line: string) => io.stdout(`${new Date().toISOString()} ${line}\n`);
      if ((flags.sandbox ?? defaultBackend()) === 'process') io.stderr(`warning: ${PROCESS_BACKEND_WARNING}\n`);
      const running = await startApiServer({
        ...flags,
        devSet: resolve(io.cwd, flags.tasks),
        runsDir: resolve(io.cwd, flags.out),
        version,
        cwd: io.cwd,
        log,
      });
      log(`listening on ${running.url} (database ${running.opened.location}${flags.queue ? `, queue ${flags.queue}` : ', runs in this process'})`);
      await new Promise<void>((done) => {
        const stop = () => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          log('stopping: running submissions are marked failed');
          void running.close().then(done);
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
      setExitCode(EXIT_OK);
    });

  api
    .command('token')
    .description("An account's API tokens.")
    .command('create')
    .description('A new API token for an account (made if it does not exist); prints the secret, which is shown this once.')
    .requiredOption('--account <name>', 'the account')
    .option('--name <name>', 'what the token is called', 'default')
    .addOption(new Option('--scope <scope>', 'a scope it carries (repeatable; default: submissions and tokens)').choices([...TOKEN_SCOPES]).argParser((v: string, prev: string[] | undefined) => [...(prev ?? []), v]))
    .option('--max-in-flight <n>', "the account's quota of submissions queued or running", positive)
    .option('--db <target>', 'the results database: a PGlite folder (default runs/results.pglite) or postgres://...')
    .action(async (_flags: unknown, command: Command) => {
      // --db may be given before `token` (an option of `api`) or after `create`.
      const flags = command.optsWithGlobals<{ account: string; name: string; scope?: TokenScope[]; maxInFlight?: number; db?: string }>();
      const opened = await openResultsDb(flags.db, io.cwd);
      try {
        const account = await ensureAccount(opened.db, flags.account, flags.maxInFlight);
        const token = await createToken(opened.db, account.account_id, flags.name, flags.scope ?? [...TOKEN_SCOPES]);
        io.stderr(`token ${token.id} of account ${account.name} (scopes ${token.scopes.join(', ')}); the secret is shown this once:\n`);
        io.stdout(`${token.secret}\n`);
      } finally {
        await opened.close();
      }
      setExitCode(EXIT_OK);
    });
}

