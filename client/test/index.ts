/**
 * The extension tests' entry, loaded by VS Code's extension host (`extensionTestsPath`, the contract of
 * @vscode/test-electron that code-server honours too): runs mocha over the bundled suite files next to it.
 * `MCPBENCH_E2E_GREP` in the extension host's environment narrows the run to matching tests.
 */
import { readdirSync } from 'node:fs';
import { format } from 'node:util';
import * as path from 'node:path';
import Mocha from 'mocha';
import { screenshot } from './suite/helpers.ts';

export function run(): Promise<void> {
  // Mocha's reporters log printf-style (`'%d passing', 4`); the extension host forwards console arguments
  // without formatting them, so format here and every runner's log reads right.
  Mocha.reporters.Base.consoleLog = (...args: unknown[]) => console.log(format(...args));
  const mocha = new Mocha({
    ui: 'bdd',
    reporter: 'spec',
    // The extension host's console is a log, not a terminal.
    color: false,
    // A test that runs the CLI (episodes, a check under every fault type) needs more than mocha's 2 s; this
    // limit only stops a hung test.
    timeout: 180_000,
    ...(process.env.MCPBENCH_E2E_GREP ? { grep: process.env.MCPBENCH_E2E_GREP } : {}),
  });
  // A failing test leaves the workbench as it was when the assertion failed: a picture of it says more than the
  // message alone (the code-server runner takes it; elsewhere this is only a pause).
  mocha.suite.afterEach(async function () {
    const test = this.currentTest;
    if (test?.state !== 'failed') return;
    // Now, not only in the summary at the end: a run cut short (timeout, Ctrl-C) still says why.
    console.log(`FAILED ${test.fullTitle()}: ${test.err?.message ?? 'no message'}`);
    await screenshot(`failed-${test.fullTitle()}`, 0);
  });
  const suiteDir = path.join(__dirname, 'suite');
  const files = readdirSync(suiteDir).filter((name) => name.endsWith('.test.js')).sort();
  for (const name of files) mocha.addFile(path.join(suiteDir, name));
  return new Promise((resolve, reject) => {
    mocha.run((failures) => (failures ? reject(new Error(`${failures} of the extension tests failed`)) : resolve()));
  });
}
