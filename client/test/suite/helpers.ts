/**
 * What the extension tests share: the extension's API, the fixture workspace's files, waiting for VS Code to
 * catch up (diagnostics arrive when the language server has linted, not when a call returns), and asking the
 * runner for a screenshot.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { MCPBenchExtensionApi } from '../../src/api.ts';

export const EXTENSION_ID = 'mcpbench.mcpbench-studio';

export type ExtensionApi = MCPBenchExtensionApi;

export async function extensionApi(): Promise<ExtensionApi> {
  const extension = vscode.extensions.getExtension<ExtensionApi>(EXTENSION_ID);
  if (!extension) throw new Error(`extension ${EXTENSION_ID} is not installed in this VS Code`);
  const api = await extension.activate();
  if (!api || typeof api !== 'object' || !('runTests' in api)) {
    throw new Error(`activate() of ${EXTENSION_ID} returned ${JSON.stringify(api)}, not the MCPBenchExtensionApi of client/src/api.ts`);
  }
  return api;
}

export function workspaceRoot(): vscode.Uri {
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder) throw new Error('the extension tests need the fixture workspace open (the runners pass it)');
  return folder.uri;
}

export const workspaceFile = (relative: string): vscode.Uri => vscode.Uri.joinPath(workspaceRoot(), ...relative.split('/'));

/**
 * Polls until `probe` returns something, waking early on the given events. The limit only stops a test that
 * would otherwise hang; it asserts nothing about speed.
 */
export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  { timeoutMs = 30_000, wakeOn = [] as vscode.Event<unknown>[] } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise<void>((wake) => {
      const timer = setTimeout(done, 200);
      const subscriptions = wakeOn.map((event) => event(done));
      function done() {
        clearTimeout(timer);
        subscriptions.forEach((s) => s.dispose());
        wake();
      }
    });
  }
}

/** Our diagnostics on a file (VS Code's own JSON validation has another source). */
export const mcpbenchDiagnostics = (uri: vscode.Uri): vscode.Diagnostic[] =>
  vscode.languages.getDiagnostics(uri).filter((d) => d.source === 'mcpbench');

export function diagnosticCode(diagnostic: vscode.Diagnostic): string | undefined {
  const code = diagnostic.code;
  if (code === undefined) return undefined;
  return String(typeof code === 'object' ? code.value : code);
}

/** The marker the code-server runner watches for in the extension host's console. */
export const SCREENSHOT_MARKER = 'MCPBENCH_SCREENSHOT';

/**
 * The suite cannot photograph the workbench it runs in: it asks the runner (which drives the browser) by logging
 * a marker line, then holds still while the picture is taken. Under @vscode/test-electron nobody listens and this
 * is only a pause.
 */
export async function screenshot(name: string, settleMs = 1500): Promise<void> {
  // Let the workbench render what the test just opened before the runner takes the picture.
  await new Promise((resolve) => setTimeout(resolve, settleMs));
  // One word: the runner names the file after it.
  console.log(`${SCREENSHOT_MARKER} ${name.replace(/[^\w.-]+/g, '-').slice(0, 100)}`);
  await new Promise((resolve) => setTimeout(resolve, 1000));
}

/** Every test item under the controller, depth first. */
export function allTestItems(controller: vscode.TestController): vscode.TestItem[] {
  const items: vscode.TestItem[] = [];
  const visit = (item: vscode.TestItem) => {
    items.push(item);
    item.children.forEach(visit);
  };
  controller.items.forEach(visit);
  return items;
}

/** The marker the code-server runner watches for to act in the workbench as a user would. */
export const UI_MARKER = 'MCPBENCH_UI';

/**
 * Whether a runner drives the workbench's UI for the suite: the code-server runner does (it holds the browser);
 * under @vscode/test-electron nobody does, and the tests take the extension's API path instead.
 */
export const uiDriver = (): boolean => process.env.MCPBENCH_E2E_UI === '1';

/** Asks the runner to click the element matching `selector` in a webview (it waits for it to appear). */
export function clickInWebview(selector: string): void {
  console.log(`${UI_MARKER} click ${encodeURIComponent(selector)}`);
}

/** Asks the runner to type `text` into the open input box (`showInputBox`) and press Enter. */
export function answerInputBox(text: string): void {
  console.log(`${UI_MARKER} answer ${encodeURIComponent(text)}`);
}

/**
 * The text a person sees in the first webview element matching `selector` (the runner looks, as with a click;
 * it waits up to 20 s for the element to appear). Undefined where no runner drives the UI (@vscode/test-electron):
 * the tests then rely on what the extension sent the page.
 */
export async function webviewText(selector: string): Promise<string | undefined> {
  if (!uiDriver()) return undefined;
  const file = path.join(tmpdir(), `mcpbench-e2e-read-${randomBytes(6).toString('hex')}.json`);
  console.log(`${UI_MARKER} read ${encodeURIComponent(selector)} ${encodeURIComponent(file)}`);
  try {
    const seen = await waitFor(`the runner to read ${selector} in a webview`, () => (existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { text?: string; error?: string }) : undefined), { timeoutMs: 60_000 });
    if (seen.error !== undefined) throw new Error(seen.error);
    return seen.text ?? '';
  } finally {
    rmSync(file, { force: true });
  }
}
