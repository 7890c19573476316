/**
 * What a backend's confinement achieves here, measured rather than assumed: a probe runs in a server's
 * sandbox and reports its user and capabilities, whether a listener on the host's loopback answers, what of
 * the host's filesystem it sees and whether it can write outside its folder, and the limits it runs under.
 * `mcpbench doctor` prints it per backend.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../paths.ts';
import { prepareWritable, sandboxed, sandboxIdentity, serverConfinement, serverEnvironment, type SandboxBackend } from './sandbox.ts';

export interface ConfinementReport {
  backend: SandboxBackend;
  network: string;
  filesystem: string;
  user: string;
  limits: string;
}

const PROBE = String.raw`
const fs = require('node:fs'), net = require('node:net');
const t = JSON.parse(process.argv[process.argv.length - 1]);
const out = { uid: process.getuid(), top: fs.readdirSync('/').sort() };
const status = fs.readFileSync('/proc/self/status', 'utf8');
out.capEff = (/CapEff:\s*(\w+)/.exec(status) || [])[1];
const limits = fs.readFileSync('/proc/self/limits', 'utf8');
const limit = (name) => (new RegExp(name + '\\s+(\\S+)').exec(limits) || [])[1];
out.nproc = limit('Max processes'); out.fsize = limit('Max file size'); out.data = limit('Max data size');
// A container's own cgroup limits (v2, then v1): what bounds its processes and memory beyond the rlimits.
const cgroup = (...paths) => { for (const p of paths) { try { const v = fs.readFileSync(p, 'utf8').trim(); if (/^\d+$/.test(v)) return v; } catch {} } };
out.pids = cgroup('/sys/fs/cgroup/pids.max', '/sys/fs/cgroup/pids/pids.max');
out.memory = cgroup('/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes');
out.checkout = fs.existsSync(t.checkout); out.home = fs.existsSync(t.home);
try { fs.writeFileSync(t.outside, 'x'); out.outside = 'written'; } catch (e) { out.outside = e.code; }
const s = net.connect(t.port, '127.0.0.1');
s.setTimeout(2000);
const done = (r) => { out.loopback = r; console.log(JSON.stringify(out)); process.exit(0); };
s.on('connect', () => done('connected')); s.on('error', (e) => done(e.code)); s.on('timeout', () => done('timeout'));
`;

const size = (value: string | undefined) => {
  if (!value || value === 'unlimited') return 'unlimited';
  const n = Number(value);
  return n >= 1 << 30 ? `${n / (1 << 30)} GiB` : n >= 1 << 20 ? `${n / (1 << 20)} MiB` : `${n} bytes`;
};

/** Probes one backend with a server's confinement; an error when the probe could not run at all. */
export async function probeConfinement(backend: SandboxBackend): Promise<ConfinementReport | { backend: SandboxBackend; error: string }> {
  const listener = createServer((socket) => socket.end());
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const work = mkdtempSync(join(tmpdir(), 'mcpbench-confinement-'));
  chmodSync(work, 0o711);
  const sandbox = join(work, 'sandbox');
  const outside = join(work, 'outside.txt');
  try {
    mkdirSync(sandbox);
    const confinement = serverConfinement(sandbox);
    prepareWritable(confinement, backend);
    // Something in the runner's home folder (an image's own /root or /home is not the host's).
    const home = homedir();
    const homeEntry = readdirSync(home)[0];
    const targets = { checkout: join(packageRoot(), 'tasks'), home: homeEntry ? join(home, homeEntry) : home, outside, port: (listener.address() as { port: number }).port };
    const spec = sandboxed(backend, { command: process.execPath, args: ['-e', PROBE, JSON.stringify(targets)], env: serverEnvironment(sandbox) }, confinement);
    // Asynchronous, so the listener can answer while the probe runs.
    const child = spawn(spec.command, spec.args, { cwd: sandbox, env: spec.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c));
    child.stderr.on('data', (c: Buffer) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const code = await new Promise<number | null>((resolve) => {
      child.on('error', () => resolve(-1));
      child.on('close', resolve);
    });
    clearTimeout(timer);
    if (code !== 0) return { backend, error: (stderr.trim().split('\n').pop() ?? '') || `the probe exited with ${code}` };
    const seen = JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, unknown>;
    const identity = backend === 'process' ? undefined : sandboxIdentity(confinement);
    // What counts is the host: inside, a write may land in the sandbox's own private /tmp and vanish with it.
    const wroteOutside = existsSync(outside);
    const top = seen.top as string[];
    return {
      backend,
      network: seen.loopback === 'connected' ? "the host's network (a listener on the host's loopback answered)" : `loopback only (the host's loopback: ${String(seen.loopback)})`,
      filesystem: [
        top.length > 20 ? `the whole host (${top.length} top-level entries)` : `/ holds ${top.join(', ')}`,
        seen.checkout ? 'the checkout beyond what runs is visible' : 'no checkout beyond what runs',
        seen.home ? `the host's ${home} visible` : `no host ${home}`,
        wroteOutside ? 'CAN write outside its folder' : 'writes outside its folder never reach the host',
      ].join('; '),
      user: `uid ${String(seen.uid)} inside${identity ? `, ${identity.note}` : ''}, capabilities ${seen.capEff === '0000000000000000' ? 'none' : String(seen.capEff)}`,
      limits: [
        seen.pids ? `processes ${String(seen.pids)} (cgroup)` : `processes ${String(seen.nproc)}`,
        `file size ${size(seen.fsize as string)}`,
        `data ${size(seen.data as string)}`,
        // A cgroup's "no limit" is a huge number; only a real bound is shown.
        ...(seen.memory && Number(seen.memory) < 2 ** 50 ? [`memory ${size(seen.memory as string)} (cgroup)`] : []),
      ].join(', '),
    };
  } catch (error) {
    return { backend, error: (error as Error).message };
  } finally {
    listener.close();
    rmSync(work, { recursive: true, force: true });
  }
}
