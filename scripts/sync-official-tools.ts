/**
 * Rewrites the `tools` array of schemas/servers/filesystem.json and memory.json from what the pinned official
 * servers in node_modules answer to tools/list, and their `implementation.version` from the installed
 * package, keeping everything else in the files. Run after bumping a pinned package:
 *   npx tsx scripts/sync-official-tools.ts
 * test/mcp/official-tools.test.ts fails while the files and the installed servers disagree.
 *
 * Fields a server sends that ToolDeclaration (server/src/tasks/model.ts) does not declare are dropped and
 * reported, because the registry parses namespace files strictly; see UNDECLARED_TOOL_FIELDS.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { packageRoot, schemasDir } from '../server/src/paths.ts';
import { filesystemServer } from '../server/src/mcp/filesystem/official.ts';
import { memoryServer, type OfficialServer } from '../server/src/mcp/memory/official.ts';
import { ToolDeclaration } from '../server/src/mcp/server-file.ts';

export const OFFICIAL_SERVERS: OfficialServer[] = [filesystemServer, memoryServer];

/** Tool fields the official servers send that ToolDeclaration cannot hold yet (MCP 2025-11 task support). */
export const UNDECLARED_TOOL_FIELDS: string[] = [];

const DECLARED_TOOL_FIELDS = Object.keys(ToolDeclaration.shape);

export function projectTool(tool: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(tool).filter(([key]) => DECLARED_TOOL_FIELDS.includes(key)));
}

export function installedVersion(pkg: string): string {
  return JSON.parse(readFileSync(join(packageRoot(), 'node_modules', pkg, 'package.json'), 'utf8')).version;
}

/** Starts the server in a fresh temporary directory, asks tools/list (all pages), stops it. */
export async function listOfficialTools(server: OfficialServer): Promise<Record<string, unknown>[]> {
  const dir = mkdtempSync(join(tmpdir(), `mcpbench-${server.namespace}-`));
  const { command, args, env } = server.launch(packageRoot(), dir);
  const transport = new StdioClientTransport({
    command,
    args,
    env: { ...(process.env as Record<string, string>), ...env },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'mcpbench-sync', version: '0.1.0' });
  try {
    await client.connect(transport);
    const tools: Record<string, unknown>[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : {});
      tools.push(...(page.tools as Record<string, unknown>[]));
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  } finally {
    await client.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  for (const server of OFFICIAL_SERVERS) {
    const file = join(schemasDir(), 'servers', `${server.namespace}.json`);
    const current = JSON.parse(readFileSync(file, 'utf8'));
    const tools = await listOfficialTools(server);
    const dropped = new Set(tools.flatMap((t) => Object.keys(t).filter((k) => !DECLARED_TOOL_FIELDS.includes(k))));
    const next = {
      ...current,
      implementation: { ...current.implementation, kind: 'npm', package: server.package, version: installedVersion(server.package) },
      tools: tools.map(projectTool),
    };
    writeFileSync(file, JSON.stringify(next, null, 2) + '\n');
    console.log(
      `${server.namespace}: ${tools.length} tools from ${server.package}@${next.implementation.version}` +
        (dropped.size ? ` (dropped undeclared fields: ${[...dropped].join(', ')})` : ''),
    );
  }
}

if (process.argv[1] && /sync-official-tools\.ts$/.test(process.argv[1])) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
