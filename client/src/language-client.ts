/**
 * The language server's client: started for task and template files, its state shown in the status bar
 * (click: the output channel), and VS Code's JSON validation de-duplicated (see diagnostic-filter.ts).
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { LanguageClient, State, TransportKind, type LanguageClientOptions, type ServerOptions } from 'vscode-languageclient/node';
import { hiddenInRange, partitionDiagnostics } from './diagnostic-filter.ts';
import { vscodeValidatesJson } from './settings.ts';

/** Task files (JSON under a `tasks/` folder, or `*.task.json`) and template grammars (`*.template.json`). */
export const TASK_FILE_SELECTOR = [
  { language: 'json', pattern: '**/tasks/**/*.json' },
  { language: 'json', pattern: '**/*.task.json' },
  { language: 'json', pattern: '**/*.template.json' },
];

export type ServerState = 'starting' | 'running' | 'stopped' | 'error';

const STATUS_TEXT: Record<ServerState, string> = {
  starting: '$(sync~spin) MCPBench',
  running: '$(beaker) MCPBench',
  stopped: '$(debug-stop) MCPBench',
  error: '$(error) MCPBench',
};

export class LanguageServerHost implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private readonly statusItem: vscode.StatusBarItem;
  private state: ServerState = 'stopped';
  /** Per document: our diagnostics hidden because VS Code's JSON validation reports the same problem. */
  private readonly hidden = new Map<string, vscode.Diagnostic[]>();

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly output: vscode.LogOutputChannel,
  ) {
    this.statusItem = vscode.window.createStatusBarItem('mcpbench.server', vscode.StatusBarAlignment.Right, 100);
    this.statusItem.name = 'MCPBench language server';
    this.statusItem.command = 'mcpbench.showOutput';
    this.setState('stopped');
    this.statusItem.show();
  }

  get languageClient(): LanguageClient | undefined {
    return this.client;
  }

  get serverState(): ServerState {
    return this.state;
  }

  private setState(state: ServerState, detail?: string): void {
    this.state = state;
    this.statusItem.text = STATUS_TEXT[state];
    this.statusItem.tooltip = `MCPBench language server: ${state}${detail ? ` (${detail})` : ''}. Click for the log.`;
    this.statusItem.backgroundColor = state === 'error' ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
  }

  async start(): Promise<void> {
    const module = this.context.asAbsolutePath(path.join('dist', 'server.js'));
    const serverOptions: ServerOptions = {
      run: { module, transport: TransportKind.ipc },
      debug: { module, transport: TransportKind.ipc, options: { execArgv: ['--nolazy', '--inspect=6009'] } },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: TASK_FILE_SELECTOR,
      outputChannel: this.output,
      synchronize: { fileEvents: vscode.workspace.createFileSystemWatcher('**/{tasks/**/*.json,*.task.json,*.template.json}') },
      middleware: {
        handleDiagnostics: (uri, diagnostics, next) => {
          const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
          const { shown, hidden } = partitionDiagnostics(diagnostics, vscodeValidatesJson(document));
          this.hidden.set(uri.toString(), hidden);
          next(uri, shown);
        },
        provideCodeActions: (document, range, context, token, next) => {
          const extra = hiddenInRange(this.hidden.get(document.uri.toString()) ?? [], range);
          return next(document, range, extra.length ? { ...context, diagnostics: [...context.diagnostics, ...extra] } : context, token);
        },
      },
    };
    this.client = new LanguageClient('mcpbench', 'MCPBench', serverOptions, clientOptions);
    this.client.onDidChangeState((e) => {
      if (e.newState === State.Starting) this.setState('starting');
      else if (e.newState === State.Running) this.setState('running');
      else if (this.state !== 'error') this.setState('stopped');
    });
    this.setState('starting');
    try {
      await this.client.start();
    } catch (error) {
      this.setState('error', (error as Error).message);
      this.output.appendLine(`The language server did not start: ${(error as Error).stack ?? error}`);
    }
  }

  async restart(): Promise<void> {
    const old = this.client;
    this.client = undefined;
    this.hidden.clear();
    if (old) {
      try {
        await old.stop();
      } catch (error) {
        this.output.appendLine(`Stopping the language server: ${(error as Error).message}`);
      }
      await old.dispose();
    }
    await this.start();
  }

  async stop(): Promise<void> {
    await this.client?.stop();
  }

  dispose(): void {
    this.statusItem.dispose();
    void this.client?.dispose();
  }
}
