/**
 * `mcpbench doctor`: which sandbox backends work here, and every namespace's server started once in a fresh
 * sandbox with its tools/list checked against its namespace file and its start-up time shown.
 */
import { isDeepStrictEqual } from 'node:util';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Registry } from '../mcp/registry.ts';
import { startServer } from '../runner/launch.ts';
import { probeConfinement } from '../runner/confinement.ts';
import { defaultBackend, probeBackends, PROCESS_BACKEND_WARNING, type SandboxBackend } from '../runner/sandbox.ts';
import { describeScratch, scratch } from '../runner/scratch.ts';
import { hasServer, seedNamespace } from '../runner/state.ts';

export async function doctor(registry: Registry, write: (line: string) => void, backend?: SandboxBackend): Promise<boolean> {
  let healthy = true;
  write('Sandbox backends:');
  const statuses = probeBackends();
  for (const status of statuses) write(`  ${status.works ? 'ok  ' : 'no  '} ${status.backend.padEnd(8)} ${status.detail}`);
  write('');
  write('Confinement of a server, probed from inside its sandbox:');
  for (const status of statuses.filter((s) => s.works)) {
    const report = await probeConfinement(status.backend);
    if ('error' in report) {
      healthy = false;
      write(`  ${status.backend.padEnd(8)} FAIL the probe did not run: ${report.error}`);
      continue;
    }
    write(`  ${status.backend}`);
    for (const key of ['network', 'filesystem', 'user', 'limits'] as const) write(`    ${key.padEnd(10)} ${report[key]}`);
  }
  write('');
  const chosen = backend ?? defaultBackend();
  write(`Using: ${chosen}${chosen === 'process' ? `\n  warning: ${PROCESS_BACKEND_WARNING}` : ''}`);
  const where = scratch();
  write(`Sandboxes in: ${describeScratch(where)}`);
  write('');
  write('Namespaces:');
  for (const info of registry.namespaces.values()) {
    const kind = info.server.implementation.kind;
    const label = `  ${info.namespace.padEnd(11)} ${kind.padEnd(10)}`;
    if (kind === 'virtual') {
      write(`${label} no server (checks the final answer)`);
      continue;
    }
    if (!hasServer(info)) {
      write(`${label} FAIL no server implementation yet`);
      healthy = false;
      continue;
    }
    const sandbox = mkdtempSync(join(where.path, `mcpbench-doctor-${info.namespace}-`));
    try {
      const started = performance.now();
      await seedNamespace(info, undefined, sandbox);
      const server = await startServer(info, sandbox, { backend: chosen });
      const startMs = performance.now() - started;
      try {
        const tools = await server.listTools();
        const declared = info.server.tools;
        const same = isDeepStrictEqual(JSON.parse(JSON.stringify(tools)), declared);
        const names = new Set(tools.map((t) => t.name));
        const missing = declared.filter((t) => !names.has(t.name)).map((t) => t.name);
        const extra = tools.filter((t) => !info.tools.has(t.name)).map((t) => t.name);
        if (same) write(`${label} ok   ${String(tools.length).padStart(2)} tools as declared, started in ${startMs.toFixed(0)} ms`);
        else {
          healthy = false;
          const detail = missing.length || extra.length ? `missing: ${missing.join(', ') || '-'}; undeclared: ${extra.join(', ') || '-'}` : 'same names, different schemas or descriptions';
          write(`${label} FAIL tools/list differs from schemas/servers/${info.namespace}.json (${detail})`);
        }
      } finally {
        await server.close();
      }
    } catch (error) {
      healthy = false;
      write(`${label} FAIL ${(error as Error).message.split('\n').join('\n      ')}`);
    } finally {
      rmSync(sandbox, { recursive: true, force: true });
    }
  }
  return healthy;
}
