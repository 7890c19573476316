/**
 * The review view: a webview (client/webview/review.*) over one review batch written by `mcpbench generate`.
 * It lists the candidates with their lint and check results and decisions; a selected candidate shows its goal,
 * its parameters and its diff from the template's other variants; Accept / Reject ask for a reason and record
 * the decision; "Accept batch into tasks/" moves the accepted candidates into the task set. Every one of these
 * is a `mcpbench review` command (list, diff, decide, accept): the extension decides nothing itself.
 *
 * Opened with `MCPBench: Review Batch...`, the code lens on a `batch.json`, or the explorer's context menu on it.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { CliLauncher } from './cli-launcher.ts';
import {
  acceptSummary,
  batchDirectoryOf,
  cliFailure,
  parseCliJson,
  reviewAcceptArgs,
  reviewDecideArgs,
  reviewDiffArgs,
  reviewListArgs,
  type AcceptReport,
  type CandidateDiff,
  type CandidateStatus,
} from './review-args.ts';

export const REVIEW_COMMAND = 'mcpbench.reviewBatch';
const MANIFEST_GLOB = '**/{batch.json,*.batch.json}';

/** What the extension (and its tests) can do with an open review view; the page's buttons go the same ways. */
export interface ReviewSession {
  readonly panel: vscode.WebviewPanel;
  /** The batch folder. */
  readonly directory: string;
  /** The candidates as the last `review list` gave them. */
  candidates(): CandidateStatus[];
  /** The candidate selected in the view. */
  selected(): string | undefined;
  /** The candidate whose detail, diff included, the page has drawn last. */
  rendered(): string | undefined;
  /** Selects a candidate as a click in the list does. */
  select(taskId: string): Promise<void>;
  /** Accepts or rejects a candidate as the buttons do; without a reason, asks for one (undefined: cancelled). */
  decide(taskId: string, decision: 'accept' | 'reject', reason?: string): Promise<boolean>;
  /** "Accept batch into tasks/": `mcpbench review accept`. */
  acceptIntoTasks(): Promise<AcceptReport | undefined>;
  refresh(): Promise<void>;
  /** Fires when the list, the selection or the drawn detail changed. */
  readonly onDidChange: vscode.Event<void>;
}

/** Messages the page sends. */
type FromPage =
  | { type: 'ready' }
  | { type: 'select'; taskId: string }
  | { type: 'decide'; taskId: string; decision: 'accept' | 'reject' }
  | { type: 'acceptBatch' }
  | { type: 'refresh' }
  | { type: 'openFile'; taskId: string }
  | { type: 'rendered'; taskId: string };

function workspaceFolderOf(directory: string): string {
  const folder = vscode.workspace.getWorkspaceFolder(vscode.Uri.file(directory));
  // batches/<template>-<seed>/ sits two levels below the project by default.
  return folder?.uri.fsPath ?? path.dirname(path.dirname(directory));
}

function reviewerSetting(): string | undefined {
  return vscode.workspace.getConfiguration('mcpbench').get<string>('reviewer')?.trim() || undefined;
}

class ReviewPanel implements ReviewSession {
  readonly panel: vscode.WebviewPanel;
  private list: CandidateStatus[] = [];
  private selectedId: string | undefined;
  private renderedId: string | undefined;
  private busy: string | undefined;
  private pageReady = false;
  private readonly diffs = new Map<string, Promise<void>>();
  private queue: Promise<unknown> = Promise.resolve();
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private readonly disposables: vscode.Disposable[] = [];
  private refreshTimer: NodeJS.Timeout | undefined;
  /** The working folder of every command: the project the batch belongs to (its tasks/ is the set). */
  private readonly cwd: string;
  private readonly into: string;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly launcher: CliLauncher,
    readonly directory: string,
    onDispose: () => void,
  ) {
    this.cwd = workspaceFolderOf(directory);
    this.into = path.join(this.cwd, 'tasks');
    const webviewRoot = vscode.Uri.joinPath(context.extensionUri, 'client', 'webview');
    this.panel = vscode.window.createWebviewPanel('mcpbench.review', `Review ${path.basename(directory)}`, vscode.ViewColumn.Active, {
      enableScripts: true,
      retainContextWhenHidden: true,
      localResourceRoots: [webviewRoot],
    });
    this.panel.webview.html = this.html(webviewRoot);
    this.panel.webview.onDidReceiveMessage((message: FromPage) => this.onPageMessage(message), undefined, this.disposables);
    this.panel.onDidDispose(() => {
      onDispose();
      this.dispose();
    }, undefined, this.disposables);
    // A manifest edited by hand (decisions may live there too) or by another review shows at once.
    const watcher = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(vscode.Uri.file(directory), '{batch.json,*.batch.json}'));
    const later = () => {
      clearTimeout(this.refreshTimer);
      this.refreshTimer = setTimeout(() => void this.refresh(), 300);
    };
    watcher.onDidChange(later, undefined, this.disposables);
    watcher.onDidCreate(later, undefined, this.disposables);
    this.disposables.push(watcher, this.changed);
  }

  private html(root: vscode.Uri): string {
    const nonce = randomBytes(16).toString('base64');
    const template = readFileSync(path.join(root.fsPath, 'review.html'), 'utf8');
    const values: Record<string, string> = {
      cspSource: this.panel.webview.cspSource,
      nonce,
      styleUri: this.panel.webview.asWebviewUri(vscode.Uri.joinPath(root, 'review.css')).toString(),
      scriptUri: this.panel.webview.asWebviewUri(vscode.Uri.joinPath(root, 'review.js')).toString(),
    };
    return template.replace(/\{\{(\w+)\}\}/g, (_, key: string) => values[key] ?? '');
  }

  candidates(): CandidateStatus[] {
    return [...this.list];
  }

  selected(): string | undefined {
    return this.selectedId;
  }

  rendered(): string | undefined {
    return this.renderedId;
  }

  private post(message: unknown): void {
    if (this.pageReady) void this.panel.webview.postMessage(message);
  }

  private postState(): void {
    this.post({
      type: 'state',
      state: {
        title: `Review batch ${path.basename(this.directory)}`,
        intoLabel: `${path.relative(this.cwd, this.into) || '.'}/`,
        candidates: this.list,
        selected: this.selectedId,
        busy: Boolean(this.busy),
      },
    });
    this.changed.fire();
  }

  private notice(kind: 'info' | 'error' | 'busy' | '', text: string): void {
    this.post({ type: 'notice', kind, text });
  }

  /** CLI commands one at a time, in order: a decision is recorded before the list is read again. */
  private serial<T>(busy: string | undefined, work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(async () => {
      if (busy) {
        this.busy = busy;
        this.notice('busy', busy);
        this.postState();
      }
      try {
        return await work();
      } finally {
        if (busy) {
          this.busy = undefined;
          this.postState();
        }
      }
    });
    this.queue = next.catch(() => undefined);
    return next;
  }

  refresh(): Promise<void> {
    return this.serial(undefined, async () => {
      try {
        this.list = parseCliJson<CandidateStatus[]>('mcpbench review list', await this.launcher.exec(reviewListArgs(this.directory), this.cwd));
        this.postState();
      } catch (error) {
        this.notice('error', (error as Error).message);
        throw error;
      }
    });
  }

  private fetchDiff(taskId: string): Promise<void> {
    let pending = this.diffs.get(taskId);
    if (!pending) {
      const also = existsSync(this.into) ? [this.into] : [];
      pending = this.serial(undefined, async () => {
        try {
          const diff = parseCliJson<CandidateDiff>('mcpbench review diff', await this.launcher.exec(reviewDiffArgs(this.directory, taskId, also), this.cwd));
          this.post({ type: 'diff', taskId, diff });
        } catch (error) {
          this.diffs.delete(taskId);
          this.post({ type: 'diff', taskId, error: (error as Error).message });
        }
      });
      this.diffs.set(taskId, pending);
    }
    return pending;
  }

  async select(taskId: string): Promise<void> {
    if (!this.list.some((c) => c.task_id === taskId)) throw new Error(`${taskId} is not a candidate of ${this.directory}`);
    this.selectedId = taskId;
    this.post({ type: 'select', taskId });
    this.changed.fire();
    await this.fetchDiff(taskId);
  }

  private async askReason(taskId: string, decision: 'accept' | 'reject'): Promise<string | undefined> {
    const current = this.list.find((c) => c.task_id === taskId)?.review;
    const same = current && current.decision === (decision === 'accept' ? 'accepted' : 'rejected');
    return vscode.window.showInputBox({
      title: `${decision === 'accept' ? 'Accept' : 'Reject'} ${taskId}`,
      prompt: 'Why? The reason is recorded with the decision in the batch manifest.',
      placeHolder: decision === 'accept' ? 'e.g. natural goal, distinct from its siblings' : 'e.g. the goal reads unnaturally; too close to another variant',
      value: same ? current.reason : '',
      ignoreFocusOut: true,
      validateInput: (value) => (value.trim() ? undefined : 'A decision needs a reason.'),
    });
  }

  async decide(taskId: string, decision: 'accept' | 'reject', reason?: string): Promise<boolean> {
    const why = reason ?? (await this.askReason(taskId, decision));
    if (!why?.trim()) return false;
    const recorded = await this.serial(`Recording: ${decision} ${taskId}…`, async () => {
      const result = await this.launcher.exec(reviewDecideArgs(this.directory, taskId, decision, why.trim(), reviewerSetting()), this.cwd);
      if (result.code !== 0) {
        const message = cliFailure(`mcpbench review decide ${taskId}`, result);
        this.notice('error', message);
        void vscode.window.showErrorMessage(`MCPBench: ${message}`);
        return false;
      }
      this.notice('info', `${taskId} ${decision === 'accept' ? 'accepted' : 'rejected'}: ${why.trim()}`);
      return true;
    });
    await this.refresh().catch(() => undefined);
    return recorded;
  }

  acceptIntoTasks(): Promise<AcceptReport | undefined> {
    const into = `${path.relative(this.cwd, this.into) || '.'}/`;
    return this.serial(`Accepting the batch into ${into}…`, async () => {
      let report: AcceptReport;
      try {
        // Exit 1: some candidates were refused (undecided ones among them); the report says which and why.
        report = parseCliJson<AcceptReport>('mcpbench review accept', await this.launcher.exec(reviewAcceptArgs(this.directory, this.into), this.cwd), [0, 1]);
      } catch (error) {
        this.notice('error', (error as Error).message);
        void vscode.window.showErrorMessage(`MCPBench: ${(error as Error).message}`);
        return undefined;
      }
      const summary = acceptSummary(report, into);
      this.notice(summary.warning ? 'error' : 'info', summary.text);
      // The set changed: siblings in tasks/ count for the diffs.
      this.diffs.clear();
      this.post({ type: 'forgetDiffs' });
      const shown = summary.warning ? vscode.window.showWarningMessage(`MCPBench: ${summary.text}`) : vscode.window.showInformationMessage(`MCPBench: ${summary.text}`);
      void shown;
      return report;
    }).finally(() => {
      if (this.selectedId) void this.fetchDiff(this.selectedId);
    });
  }

  private async openFile(taskId: string): Promise<void> {
    const candidate = this.list.find((c) => c.task_id === taskId);
    if (!candidate) return;
    await vscode.window.showTextDocument(vscode.Uri.file(candidate.path), { viewColumn: vscode.ViewColumn.Beside, preview: true });
  }

  private onPageMessage(message: FromPage): void {
    switch (message.type) {
      case 'ready':
        this.pageReady = true;
        this.postState();
        if (this.selectedId) void this.fetchDiff(this.selectedId).then(() => this.post({ type: 'select', taskId: this.selectedId }));
        break;
      case 'select':
        if (this.list.some((c) => c.task_id === message.taskId)) {
          this.selectedId = message.taskId;
          this.changed.fire();
          void this.fetchDiff(message.taskId);
        }
        break;
      case 'decide':
        void this.decide(message.taskId, message.decision);
        break;
      case 'acceptBatch':
        void this.acceptIntoTasks();
        break;
      case 'refresh':
        this.diffs.clear();
        this.post({ type: 'forgetDiffs' });
        void this.refresh()
          .then(() => (this.selectedId ? this.fetchDiff(this.selectedId) : undefined))
          .catch(() => undefined);
        break;
      case 'openFile':
        void this.openFile(message.taskId);
        break;
      case 'rendered':
        this.renderedId = message.taskId;
        this.changed.fire();
        break;
    }
  }

  reveal(): void {
    this.panel.reveal(vscode.ViewColumn.Active);
  }

  dispose(): void {
    clearTimeout(this.refreshTimer);
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

/** The review views (one per batch folder), the command that opens them and the code lens on batch manifests. */
export class ReviewViews implements vscode.Disposable {
  private readonly panels = new Map<string, ReviewPanel>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly launcher: CliLauncher,
  ) {
    const lenses: vscode.CodeLensProvider = {
      provideCodeLenses: (document) => [
        new vscode.CodeLens(new vscode.Range(0, 0, 0, 0), { title: '$(checklist) Review this batch', tooltip: 'Open the candidates in the MCPBench review view', command: REVIEW_COMMAND, arguments: [document.uri] }),
      ],
    };
    this.disposables.push(
      vscode.languages.registerCodeLensProvider([{ language: 'json', pattern: MANIFEST_GLOB }, { language: 'jsonc', pattern: MANIFEST_GLOB }], lenses),
      vscode.commands.registerCommand(REVIEW_COMMAND, (argument?: unknown) => this.open(argument)),
    );
  }

  /** Opens (or reveals) the review view of a batch: a folder, a manifest, or, with none given, one to pick. */
  async open(argument?: unknown): Promise<ReviewSession | undefined> {
    const uri = await this.batchUri(argument);
    if (!uri) return undefined;
    let directory = batchDirectoryOf(uri.fsPath);
    try {
      if (!statSync(directory).isDirectory()) directory = path.dirname(directory);
    } catch {
      void vscode.window.showErrorMessage(`MCPBench: ${directory} does not exist.`);
      return undefined;
    }
    let panel = this.panels.get(directory);
    if (panel) {
      panel.reveal();
      return panel;
    }
    panel = new ReviewPanel(this.context, this.launcher, directory, () => this.panels.delete(directory));
    this.panels.set(directory, panel);
    try {
      await panel.refresh();
    } catch (error) {
      void vscode.window.showErrorMessage(`MCPBench: ${(error as Error).message}`);
    }
    return panel;
  }

  private async batchUri(argument: unknown): Promise<vscode.Uri | undefined> {
    if (argument instanceof vscode.Uri) return argument;
    if (typeof argument === 'string' && argument) return argument.includes('://') ? vscode.Uri.parse(argument) : vscode.Uri.file(argument);
    const fromObject = (argument as { uri?: unknown } | undefined)?.uri;
    if (fromObject instanceof vscode.Uri) return fromObject;
    const active = vscode.window.activeTextEditor?.document.uri;
    if (active && /(^|[\\/])(batch\.json|[^\\/]*\.batch\.json)$/.test(active.fsPath)) return active;
    // The palette: the batches of the workspace, newest first, or any folder.
    const manifests = await vscode.workspace.findFiles(MANIFEST_GLOB, '{**/node_modules/**,**/dist/**,**/runs/**}', 200);
    const dated = manifests.map((m) => {
      let mtime = 0;
      try {
        mtime = statSync(m.fsPath).mtimeMs;
      } catch {
        // gone meanwhile
      }
      return { uri: m, mtime };
    });
    dated.sort((a, b) => b.mtime - a.mtime);
    type Item = vscode.QuickPickItem & { uri?: vscode.Uri };
    const items: Item[] = dated.map(({ uri }) => ({
      label: `$(checklist) ${path.basename(path.dirname(uri.fsPath))}`,
      description: vscode.workspace.asRelativePath(path.dirname(uri.fsPath)),
      uri,
    }));
    items.push({ label: '$(folder-opened) Browse for a batch folder...' });
    const picked = await vscode.window.showQuickPick(items, { title: 'Review a batch written by mcpbench generate', placeHolder: items.length > 1 ? 'Pick a batch' : 'No batch.json in this workspace yet' });
    if (!picked) return undefined;
    if (picked.uri) return picked.uri;
    const chosen = await vscode.window.showOpenDialog({ canSelectFolders: true, canSelectFiles: false, canSelectMany: false, openLabel: 'Review', title: 'A batch folder (with batch.json)' });
    return chosen?.[0];
  }

  dispose(): void {
    for (const panel of this.panels.values()) panel.panel.dispose();
    for (const d of this.disposables) d.dispose();
  }
}
