/**
 * How the pinned official filesystem server is started: `index.js <allowed directory>`. Shared by
 * scripts/sync-official-tools.ts, test/mcp/official-tools.test.ts and (next) the runner's sandbox.
 */
import { officialEntry, type OfficialServer } from '../memory/official.ts';

export const filesystemServer: OfficialServer = {
  namespace: 'filesystem',
  package: '@modelcontextprotocol/server-filesystem',
  entry: 'dist/index.js',
  launch(packageRoot, sandboxDir, options) {
    return {
      command: process.execPath,
      args: [officialEntry(this, packageRoot, options), sandboxDir],
      env: {},
    };
  },
};
