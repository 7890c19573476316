/**
 * The language server's client: started for task and template files (the languages `mcpbench-task` and
 * `mcpbench-template`, which VS Code's own JSON support leaves alone, so every problem is reported once, by the
 * linter CI runs, at its severity), its state shown in the status bar (click: the output channel).
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { LanguageClient, State, TransportKind, type LanguageClientOptions, type ServerOptions } from 'vscode-languageclient/node';
import { FILE_STATUS_REQUEST, RUN_HISTORY_REQUEST, RUN_VIEW_REQUEST, type FileStatus, type RunSummary, type RunView } from '../../server/src/engine/protocol.ts';

export type { FileStatus };

/** The languages of task files (JSON under a `tasks/` folder, or `*.task.json`) and template grammars (`*.template.json`). */
export const TASK_LANGUAGE = 'mcpbench-task';
export const TEMPLATE_LANGUAGE = 'mcpbench-template';

export const TASK_FILE_SELECTOR = [
  { language: TASK_LANGUAGE, scheme: 'file' },
  { language: TASK_LANGUAGE, scheme: 'untitled' },
  { language: TEMPLATE_LANGUAGE, scheme: 'file' },
  { language: TEMPLATE_LANGUAGE, scheme: 'untitled' },
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
      // Files on disk: the server registers its own watchers (every task and template, opened or not, and check runs).
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

  /**
   * What the language server says of a file before it is run: a task or not, and its lint errors (opened or not).
   * Undefined when the server is not running (the CLI then judges the file itself).
   */
  async fileStatus(uri: vscode.Uri): Promise<FileStatus | undefined> {
    if (!this.client || this.state !== 'running') return undefined;
    try {
      return await this.client.sendRequest<FileStatus>(FILE_STATUS_REQUEST, { uri: this.client.code2ProtocolConverter.asUri(uri) });
    } catch (error) {
      this.output.appendLine(`${FILE_STATUS_REQUEST} ${uri.toString()}: ${(error as Error).message}`);
      return undefined;
    }
  }

  /** A client that is running, waiting while it starts (at most `timeoutMs`); undefined when it is not coming. */
  private async running(timeoutMs = 15_000): Promise<LanguageClient | undefined> {
    const deadline = Date.now() + timeoutMs;
    while (this.client && this.state === 'starting' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    return this.client && this.state === 'running' ? this.client : undefined;
  }

  /** The run folders under `directory`, newest first, as the language server reads them (empty without a server). */
  async runHistory(directory: string): Promise<RunSummary[]> {
    const client = await this.running();
    if (!client) return [];
    try {
      return await client.sendRequest<RunSummary[]>(RUN_HISTORY_REQUEST, { directory });
    } catch (error) {
      this.output.appendLine(`${RUN_HISTORY_REQUEST} ${directory}: ${(error as Error).message}`);
      return [];
    }
  }

  /** One run folder read back whole by the language server; throws with the reason when it cannot be read. */
  async runView(directory: string): Promise<RunView> {
    const client = await this.running();
    if (!client) throw new Error('the language server is not running (see the MCPBench output)');
    const answer = await client.sendRequest<RunView | { error: string }>(RUN_VIEW_REQUEST, { directory });
    if ('error' in answer) throw new Error(answer.error);
    return answer;
  }

  async stop(): Promise<void> {
    await this.client?.stop();
  }

  dispose(): void {
    this.statusItem.dispose();
    void this.client?.dispose();
  }
}
