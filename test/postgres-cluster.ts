/**
 * A throw-away PostgreSQL cluster for tests: initdb in a temporary folder, trust authentication, a free
 * loopback port, stopped and deleted by `stop()`. Needs PostgreSQL's server binaries (the Debian package
 * `postgresql`, which .ci/run installs); without them `startCluster` throws with that instruction, so a test
 * that needs the server fails loudly instead of skipping.
 */
import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.ts';

export interface Cluster {
  url: string;
  stop(): void;
}
/** initdb and pg_ctl: Debian's versioned folders (newest first), then whatever pg_config names. */
function postgresBinDir(): string | undefined {
  const dirs: string[] = [];
  if (existsSync('/usr/lib/postgresql')) {
    const versions = readdirSync('/usr/lib/postgresql').filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
    dirs.push(...versions.map((v) => join('/usr/lib/postgresql', v, 'bin')));
  }
  const pgConfig = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  if (pgConfig.status === 0) dirs.push(pgConfig.stdout.trim());
  return dirs.find((d) => existsSync(join(d, 'initdb')) && existsSync(join(d, 'pg_ctl')));
}


/**
 * A cluster in a temporary folder, trust authentication, on a free local port. initdb refuses to run as
 * root, so as root the cluster belongs to the `postgres` user the Debian package creates.
 */
export async function startCluster(): Promise<Cluster> {
  const bin = postgresBinDir();
  if (!bin) throw new Error('PostgreSQL server binaries (initdb, pg_ctl) not found: install the Debian package `postgresql` (apt-get install postgresql)');
  const root = mkdtempSync(join(tmpdir(), 'mcpbench-pgcluster-'));
  const data = join(root, 'data');
  let asUser: string[] = [];
  if (process.getuid?.() === 0) {
    const id = (flag: string) => spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' });
    const uid = id('-u');
    const gid = id('-g');
    if (uid.status !== 0 || gid.status !== 0) throw new Error('running as root, and there is no `postgres` user to run the cluster as (the Debian package `postgresql` creates it)');
    chownSync(root, Number(uid.stdout.trim()), Number(gid.stdout.trim()));
    asUser = ['runuser', '-u', 'postgres', '--'];
  }
  const run = (command: string, args: string[]) => {
    const [program, ...rest] = [...asUser, join(bin, command), ...args];
    const result = spawnSync(program!, rest, { encoding: 'utf8', timeout: 120_000 });
    if (result.status !== 0) throw new Error(`${command} failed: ${result.error?.message ?? ''}${result.stdout}${result.stderr}`);
  };
  const port = await freePort();
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-locale']);
  // No durability needed: the cluster lives as long as the test.
  run('pg_ctl', ['-D', data, '-l', join(root, 'log'), '-w', '-t', '60', '-o', `-k ${root} -p ${port} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`, 'start']);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop: () => {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
  };
}

