/**
 * How the pinned official memory server is started: its graph lives in the JSONL file named by
 * MEMORY_FILE_PATH, which we point into the sandbox directory (the default would be inside node_modules).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export interface OfficialServer {
  namespace: string;
  /** The npm package; its version is pinned in package.json and in schemas/servers/<namespace>.json. */
  package: string;
  entry: string;
  /**
   * The command that starts the server over stdio with its state in `sandboxDir`: from the build's bundle of
   * the package (dist/npm/<namespace>.mjs, see esbuild.mjs) when there is one, unless `bundled: false`.
   */
  launch(packageRoot: string, sandboxDir: string, options?: { bundled?: boolean }): { command: string; args: string[]; env: Record<string, string> };
}

/** The file that starts an official server: its dist/npm bundle when the build made one, else the package's entry. */
export function officialEntry(server: Pick<OfficialServer, 'namespace' | 'package' | 'entry'>, packageRoot: string, options: { bundled?: boolean } = {}): string {
  const bundle = join(packageRoot, 'dist', 'npm', `${server.namespace}.mjs`);
  if (options.bundled !== false && existsSync(bundle)) return bundle;
  return join(packageRoot, 'node_modules', server.package, server.entry);
}

export const MEMORY_FILE = 'memory.jsonl';

export const memoryServer: OfficialServer = {
  namespace: 'memory',
  package: '@modelcontextprotocol/server-memory',
  entry: 'dist/index.js',
  launch(packageRoot, sandboxDir, options) {
    return {
      command: process.execPath,
      args: [officialEntry(this, packageRoot, options)],
      env: { MEMORY_FILE_PATH: join(sandboxDir, MEMORY_FILE) },
    };
  },
};
