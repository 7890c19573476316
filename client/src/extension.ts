/**
 * The VS Code extension: starts the MCPBench language server for task files. Nothing but VS Code UI over the
 * engine; the server and the CLI do the work.
 */
import * as path from 'node:path';
import type { ExtensionContext } from 'vscode';
import { LanguageClient, TransportKind, type LanguageClientOptions, type ServerOptions } from 'vscode-languageclient/node';

let client: LanguageClient | undefined;

/** Task files: JSON under a `tasks/` folder, or named `*.task.json`. */
export const TASK_FILE_SELECTOR = [
  { language: 'json', pattern: '**/tasks/**/*.json' },
  { language: 'json', pattern: '**/*.task.json' },
];

export async function activate(context: ExtensionContext): Promise<void> {
  const module = context.asAbsolutePath(path.join('dist', 'server.js'));
  const serverOptions: ServerOptions = {
    run: { module, transport: TransportKind.ipc },
    debug: { module, transport: TransportKind.ipc, options: { execArgv: ['--nolazy', '--inspect=6009'] } },
  };
  const clientOptions: LanguageClientOptions = { documentSelector: TASK_FILE_SELECTOR };
  client = new LanguageClient('mcpbench', 'MCPBench', serverOptions, clientOptions);
  await client.start();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
