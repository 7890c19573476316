/**
 * How the pinned official memory server is started: its graph lives in the JSONL file named by
 * MEMORY_FILE_PATH, which we point into the sandbox directory (the default would be inside node_modules).
 */
import { join } from 'node:path';

export interface OfficialServer {
  namespace: string;
  /** The npm package; its version is pinned in package.json and in schemas/servers/<namespace>.json. */
  package: string;
  entry: string;
  /** The command that starts the server over stdio with its state in `sandboxDir`. */
  launch(packageRoot: string, sandboxDir: string): { command: string; args: string[]; env: Record<string, string> };
}

export const MEMORY_FILE = 'memory.jsonl';

export const memoryServer: OfficialServer = {
  namespace: 'memory',
  package: '@modelcontextprotocol/server-memory',
  entry: 'dist/index.js',
  launch: (packageRoot, sandboxDir) => ({
    command: process.execPath,
    args: [join(packageRoot, 'node_modules', '@modelcontextprotocol/server-memory', 'dist/index.js')],
    env: { MEMORY_FILE_PATH: join(sandboxDir, MEMORY_FILE) },
  }),
};
