/**
 * The runner panel: a webview (client/webview/) showing the live trace of the current run, the verdict trees,
 * the scores and the report link, and the workspace's past runs. The extension only forwards RunEvents and
 * reads `runs/`; the page draws.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RunEvent, RunSummary as RunData, RunView } from '../../server/src/engine/protocol.ts';
import { labelled, type RunSummary } from './run-history.ts';
import { checkedOutcome } from './run-outcomes.ts';
import { episodeViewTarget, shortUnit } from './episode-view.ts';
import type { RunBroadcast } from './testing.ts';

/** Messages the page sends. */
type FromPage = { type: 'ready' } | { type: 'openReport'; directory: string } | { type: 'openEpisode'; runId: unknown; workUnit: unknown } | { type: 'loadRun'; directory: string } | { type: 'refreshHistory' };

/** Who reads run folders for the panel: the language server (engine/history.ts). */
export interface RunReader {
  runHistory(directory: string): Promise<RunData[]>;
  runView(directory: string): Promise<RunView>;
}

export class RunnerPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private ready = false;
  /** The current run's messages, replayed when the panel opens (or reloads) mid-run. */
  private current: RunBroadcast[] = [];
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly context: vscode.ExtensionContext,
    onRunBroadcast: vscode.Event<RunBroadcast>,
    private readonly runs: RunReader,
  ) {
    onRunBroadcast((message) => this.onBroadcast(message), undefined, this.disposables);
  }

  /** What the panel was told of the current (or last) run, in order: what it draws. */
  messages(): RunBroadcast[] {
    return [...this.current];
  }

  private onBroadcast(message: RunBroadcast): void {
    if (message.type === 'begin') this.current = [];
    this.current.push(message);
    this.post(message);
    if (message.type === 'end') this.postHistory();
  }

  private post(message: unknown): void {
    if (this.panel && this.ready) void this.panel.webview.postMessage(message);
  }

  private runsDirectory(): string | undefined {
    const folder = vscode.workspace.workspaceFolders?.[0];
    return folder && path.join(folder.uri.fsPath, 'runs');
  }

  private postHistory(): void {
    void this.history().then((runs) => this.post({ type: 'history', runs }));
  }

  /** The workspace's past runs as the panel lists them, newest first (each with the line it shows). */
  async history(directory = this.runsDirectory()): Promise<RunSummary[]> {
    return directory ? labelled(await this.runs.runHistory(directory)) : [];
  }

  async show(preserveFocus = false): Promise<vscode.WebviewPanel> {
    if (this.panel) {
      this.panel.reveal(undefined, preserveFocus);
      return this.panel;
    }
    const webviewRoot = vscode.Uri.joinPath(this.context.extensionUri, 'client', 'webview');
    const panel = vscode.window.createWebviewPanel('mcpbench.runner', 'MCPBench Runner', { viewColumn: vscode.ViewColumn.Beside, preserveFocus }, {
      enableScripts: true,
      retainContextWhenHidden: true,
      localResourceRoots: [webviewRoot],
    });
    this.panel = panel;
    this.ready = false;
    panel.webview.html = this.html(panel.webview, webviewRoot);
    panel.webview.onDidReceiveMessage((message: FromPage) => this.onPageMessage(message), undefined, this.disposables);
    panel.onDidDispose(() => {
      this.panel = undefined;
      this.ready = false;
    }, undefined, this.disposables);
    return panel;
  }

  private html(webview: vscode.Webview, root: vscode.Uri): string {
    const nonce = randomBytes(16).toString('base64');
    const template = readFileSync(path.join(root.fsPath, 'runner.html'), 'utf8');
    const values: Record<string, string> = {
      cspSource: webview.cspSource,
      nonce,
      styleUri: webview.asWebviewUri(vscode.Uri.joinPath(root, 'runner.css')).toString(),
      scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(root, 'runner.js')).toString(),
    };
    return template.replace(/\{\{(\w+)\}\}/g, (_, key: string) => values[key] ?? '');
  }

  private onPageMessage(message: FromPage): void {
    switch (message.type) {
      case 'ready':
        this.ready = true;
        for (const m of this.current) this.post(m);
        this.postHistory();
        break;
      case 'refreshHistory':
        this.postHistory();
        break;
      case 'openReport':
        void openReport(message.directory);
        break;
      case 'openEpisode': {
        const runs = this.runsDirectory();
        const file = runs && episodeViewTarget(runs, message.runId, message.workUnit);
        if (file) void openPage(file, `Episode ${shortUnit(String(message.workUnit))}`, 'the episode pages are written with the report, when the run finishes');
        break;
      }
      case 'loadRun':
        void this.loadRun(message.directory);
        break;
    }
  }

  /** A past run shown like a live one: its episodes as episode-finished events, then its scores. */
  private async loadRun(directory: string): Promise<void> {
    const runs = this.runsDirectory();
    // Only folders of this workspace's runs/: the page is not trusted to name arbitrary paths.
    if (!runs || path.relative(runs, directory).startsWith('..')) return;
    let run: RunView;
    try {
      run = await this.runs.runView(directory);
    } catch (error) {
      void vscode.window.showWarningMessage(`MCPBench: ${(error as Error).message}`);
      return;
    }
    const { runId } = run;
    const events: RunEvent[] = run.episodes.map((result) => ({ type: 'episode-finished', run_id: runId, result }));
    for (const message of run.warnings) events.push({ type: 'notice', run_id: runId, level: 'warning', message });
    events.push(run.finished);
    this.post({ type: 'begin', title: `History: ${runId}`, kind: 'history' });
    // A check's episodes against the outcome each must have, as when it ran.
    const checking = run.finished.kind === 'check';
    for (const event of events) {
      const check = checking && event.type === 'episode-finished' ? checkedOutcome(event.result) : undefined;
      this.post({ type: 'event', event, ...(check ? { check } : {}) });
    }
    this.post({ type: 'end' });
  }

  dispose(): void {
    this.panel?.dispose();
    for (const d of this.disposables) d.dispose();
  }
}

/**
 * Opens `<run>/report.html`: in the system browser on a desktop, else (a remote or web workbench, where the
 * browser cannot reach the file) in a webview; the report is self-contained.
 */
export async function openReport(runDirectory: string): Promise<void> {
  const file = runDirectory.endsWith('.html') ? runDirectory : path.join(runDirectory, 'report.html');
  await openPage(file, `Report ${path.basename(path.dirname(file))}`, 'the run may have been interrupted');
}

/**
 * Opens one of a run's self-contained pages (the report, an episode's page): in the system browser on a
 * desktop, else in a webview. `missing` says why the page may not be there.
 */
export async function openPage(file: string, title: string, missing: string): Promise<void> {
  if (!existsSync(file)) {
    void vscode.window.showWarningMessage(`MCPBench: no page at ${file} (${missing}).`);
    return;
  }
  if (vscode.env.uiKind === vscode.UIKind.Desktop && !vscode.env.remoteName) {
    if (await vscode.env.openExternal(vscode.Uri.file(file))) return;
  }
  const panel = vscode.window.createWebviewPanel('mcpbench.report', title, vscode.ViewColumn.Active, {
    enableScripts: true,
    localResourceRoots: [],
  });
  panel.webview.html = readFileSync(file, 'utf8');
}
