/**
 * A real `redis-server` (Debian's package) for a test: on a free loopback port, its data in a temporary
 * folder, stopped by the test. `restart` kills it (SIGKILL, as a crash would) and starts it again on the same
 * port: with `persistence` (append-only file, fsync always) it comes back with its data, without it empty.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.ts';

export interface RedisServer {
  url: string;
  port: number;
  /** SIGKILL and start again on the same port (with or without its data, as `persistence` says). */
  restart(): Promise<void>;
  /** SIGKILL (no restart). */
  kill(): Promise<void>;
  start(): Promise<void>;
  /** Stops it and removes its folder. */
  stop(): Promise<void>;
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let answer = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('error', () => done(false));
    socket.on('data', (chunk) => {
      answer += chunk.toString();
      if (answer.includes('\r\n')) done(answer.startsWith('+PONG'));
    });
    socket.once('connect', () => socket.write('PING\r\n'));
  });
}

export async function startRedis(options: { persistence?: boolean } = {}): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'mcpbench-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--daemonize', 'no', '--logfile', join(dir, 'redis.log')];
  if (options.persistence) args.push('--appendonly', 'yes', '--appendfsync', 'always');
  else args.push('--appendonly', 'no');

  const start = async () => {
    const proc = spawn('redis-server', args, { stdio: 'ignore' });
    child = proc;
    exited = new Promise((resolve) => proc.once('exit', () => resolve()));
    const spawned = await new Promise<Error | undefined>((resolve) => {
      proc.once('spawn', () => resolve(undefined));
      proc.once('error', (error) => resolve(error));
    });
    if (spawned) throw new Error(`cannot start redis-server (apt-get install redis-server): ${spawned.message}`);
    for (let i = 0; i < 200; i++) {
      if (await ping(port)) return;
      if (proc.exitCode !== null) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`redis-server did not answer on port ${port} (log: ${join(dir, 'redis.log')})`);
  };
  const kill = async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
    child = undefined;
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    start,
    kill,
    async restart() {
      await kill();
      await start();
    },
    async stop() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
