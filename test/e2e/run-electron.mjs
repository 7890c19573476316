// Runs the extension tests (client/test/, bundled to out/test/) in desktop VS Code with @vscode/test-electron:
// the same suite as run-code-server.mjs, for machines that can download VS Code (or have one installed).
//
//   node test/e2e/run-electron.mjs [--grep <text>] [--vscode <path to the code executable>] [--version <v>]
//
// Without --vscode (or $VSCODE_EXECUTABLE) test-electron downloads VS Code from update.code.visualstudio.com
// into .vscode-test/; where that host cannot be reached (as on the machine this project is built on, which
// reaches only package registries) use run-code-server.mjs instead. On a Linux machine without a display, run
// it under xvfb-run. Screenshot requests in the suite's log are only pauses here.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createFixtureWorkspace, REPO_ROOT } from './workspace.mjs';

const { values: options } = parseArgs({
  options: {
    grep: { type: 'string' },
    vscode: { type: 'string' },
    version: { type: 'string' },
    'no-build': { type: 'boolean', default: false },
  },
});

function build() {
  for (const script of ['esbuild.mjs', 'scripts/build-extension-tests.mjs']) {
    const result = spawnSync(process.execPath, [script], { cwd: REPO_ROOT, stdio: 'inherit' });
    if (result.status !== 0) throw new Error(`node ${script} failed (${result.signal ?? result.status})`);
  }
}

/** Whether an error came from fetching VS Code rather than from the tests. */
function isDownloadFailure(error) {
  const text = `${error?.message ?? ''} ${error?.code ?? ''} ${error?.cause?.code ?? ''}`;
  return /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|getaddrinfo|socket hang up|update\.code\.visualstudio\.com|download|status code|fetch failed|certificate/i.test(text);
}

async function main() {
  const { runTests } = await import('@vscode/test-electron');
  if (!options['no-build']) build();
  const scratch = mkdtempSync(join(tmpdir(), 'mcpbench-e2e-electron-'));
  try {
    const workspace = createFixtureWorkspace(scratch);
    const vscodeExecutablePath = options.vscode ?? process.env.VSCODE_EXECUTABLE;
    try {
      return await runTests({
        extensionDevelopmentPath: REPO_ROOT,
        extensionTestsPath: join(REPO_ROOT, 'out', 'test', 'index.js'),
        launchArgs: [
          workspace,
          // The extension under test alone, in a profile of its own.
          '--disable-extensions',
          '--disable-workspace-trust',
          '--user-data-dir', join(scratch, 'user-data'),
          '--extensions-dir', join(scratch, 'extensions'),
        ],
        extensionTestsEnv: options.grep ? { MCPBENCH_E2E_GREP: options.grep } : {},
        ...(vscodeExecutablePath ? { vscodeExecutablePath } : {}),
        ...(options.version ? { version: options.version } : {}),
      });
    } catch (error) {
      if (!vscodeExecutablePath && isDownloadFailure(error)) {
        console.error(
          `[e2e] @vscode/test-electron could not download VS Code (${error.message}).\n` +
            '[e2e] This machine cannot reach update.code.visualstudio.com. Run the same suite in code-server instead:\n' +
            '[e2e]   npm run test:e2e   (node test/e2e/run-code-server.mjs)\n' +
            '[e2e] or point this runner at an installed VS Code: --vscode /path/to/code (or $VSCODE_EXECUTABLE).',
        );
        return 2;
      }
      throw error;
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    // runTests rejects with the exit code's message when the suite fails: the suite's own log above says why.
    console.error(`[e2e] ${error?.message ?? error}`);
    process.exit(1);
  },
);
