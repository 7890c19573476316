/**
 * The Test Explorer: every task file is a test item under namespace → category; the profiles Run, Run with
 * faults, Check and Check with coverage start the CLI for the selected tasks and map its RunEvents onto the
 * test run (states, durations, the trace as test output, the verdict tree as the failure message, predicate
 * coverage as statement coverage).
 */
import { existsSync, readFileSync } from 'node:fs';
import * as vscode from 'vscode';
import type { RunEvent } from '../../server/src/engine/protocol.ts';
import type { TaskRunOutcome, TestProfileName } from './api.ts';
import { checkArgs, FAULT_PROFILE_CHOICES, runArgs, SettingsError } from './cli-args.ts';
import type { CliLauncher } from './cli-launcher.ts';
import { coverageRanges, rangeOfPath } from './coverage-ranges.ts';
import { checkedOutcome, RunOutcomeTracker, runSummary, type CheckedOutcome, type CheckSummary, type TaskOutcome } from './run-outcomes.ts';
import { readRunSettings } from './settings.ts';
import { groupTasks, isTaskFile, readTaskHeader, runTitle, type TaskEntry } from './task-tree.ts';
import { failingNode, formatCall } from './verdict-text.ts';
import type { FileStatus } from './language-client.ts';
import { describeFaultProfile } from '../../server/src/record/faults.ts';

export const TASK_GLOB = '{**/tasks/**/*.json,**/*.task.json}';
const EXCLUDE_GLOB = '{**/node_modules/**,**/runs/**,**/dist/**,**/*.template.json}';

/** What the runner panel hears: a run beginning, then its events as they arrive. */
export type RunBroadcast =
  | { type: 'begin'; title: string; kind: TestProfileName }
  /** `check`: in a check, how a finished episode came out against the outcome it must have. */
  | { type: 'event'; event: RunEvent; check?: CheckedOutcome }
  | { type: 'end'; message?: string };


export interface RunRequestOptions {
  /** The fault profile for a `faults` run (default: the `mcpbench.faultProfile` setting). */
  faults?: string;
  /** Cancels the run as Stop in the Test Explorer does. */
  token?: vscode.CancellationToken;
}

/** Serves the `vscode-lm` agent; see lm-agent.ts. */
export interface LmEndpointProvider {
  endpointUrl(): Promise<string>;
}

/** The language server's word on a file before it runs (language-client.ts); undefined when it is not running. */
export interface FileStatusProvider {
  fileStatus(uri: vscode.Uri): Promise<FileStatus | undefined>;
}

const PROBLEMS_COMMAND = 'workbench.actions.view.problems';

/** Our lint errors on a file, as VS Code holds them (published for every task of the workspace, opened or not). */
function lintErrors(uri: vscode.Uri): vscode.Diagnostic[] {
  return vscode.languages.getDiagnostics(uri).filter((d) => d.source === 'mcpbench' && d.severity === vscode.DiagnosticSeverity.Error);
}

/** Why a file cannot run, in one sentence, or undefined when it can. */
export function refusal(status: FileStatus): string | undefined {
  if (status.kind !== 'task') {
    return `${status.label} is not a task file: Run and Check work on task files (JSON under a tasks/ folder, or *.task.json)${status.kind === 'template' ? '; a template is run through Generate Batch' : ''}.`;
  }
  if (status.errors.length === 0) return undefined;
  const [first] = status.errors;
  const more = status.errors.length > 1 ? ` (and ${status.errors.length - 1} more)` : '';
  return `${status.id ?? status.label} cannot run: ${status.errors.length} lint error${status.errors.length === 1 ? '' : 's'} — line ${first!.line}: ${first!.message}${more}. Fix them first (see Problems).`;
}

const toRange = (r: { start: { line: number; character: number }; end: { line: number; character: number } }) =>
  new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character);

function readText(uri: vscode.Uri): string | undefined {
  const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  if (open) return open.getText();
  try {
    return readFileSync(uri.fsPath, 'utf8');
  } catch {
    return undefined;
  }
}

export class TaskTestExplorer implements vscode.Disposable {
  readonly controller: vscode.TestController;
  private readonly entries = new Map<string, TaskEntry>();
  private readonly coverageDetails = new WeakMap<vscode.FileCoverage, vscode.FileCoverageDetail[]>();
  /** File URI → the statements of its latest coverage run. */
  private readonly latestCoverage = new Map<string, vscode.StatementCoverage[]>();
  private readonly broadcast = new vscode.EventEmitter<RunBroadcast>();
  readonly onRunBroadcast = this.broadcast.event;
  private readonly profiles: Record<'run' | 'faults' | 'check' | 'coverage', vscode.TestRunProfile>;
  private readonly disposables: vscode.Disposable[] = [];
  private refreshTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly launcher: CliLauncher,
    private readonly lm: LmEndpointProvider,
    private readonly files: FileStatusProvider,
  ) {
    this.controller = vscode.tests.createTestController('mcpbench', 'MCPBench tasks');
    this.controller.refreshHandler = () => this.discover();
    const { Run, Coverage } = vscode.TestRunProfileKind;
    this.profiles = {
      run: this.controller.createRunProfile('Run', Run, (request, token) => void this.execute('run', request, token), true),
      faults: this.controller.createRunProfile('Run with faults', Run, (request, token) => void this.execute('faults', request, token), false),
      check: this.controller.createRunProfile('Check', Run, (request, token) => void this.execute('check', request, token), false),
      coverage: this.controller.createRunProfile('Check with coverage', Coverage, (request, token) => void this.execute('check', request, token, {}, true), true),
    };
    this.profiles.faults.configureHandler = async () => {
      const profile = await pickFaultProfile();
      if (profile) await vscode.workspace.getConfiguration('mcpbench').update('faultProfile', profile, vscode.ConfigurationTarget.Workspace);
    };
    this.profiles.coverage.loadDetailedCoverage = async (_run, coverage) => this.coverageDetails.get(coverage) ?? [];

    const watcher = vscode.workspace.createFileSystemWatcher(TASK_GLOB);
    const changed = (uri: vscode.Uri) => {
      if (!isTaskFile(vscode.workspace.asRelativePath(uri, false))) return;
      this.readEntry(uri);
      this.scheduleRebuild();
    };
    watcher.onDidCreate(changed, undefined, this.disposables);
    watcher.onDidChange(changed, undefined, this.disposables);
    watcher.onDidDelete((uri) => this.entries.delete(uri.toString()) && this.scheduleRebuild(), undefined, this.disposables);
    // An edit moves a task between groups (or renames it) before it is saved, too.
    vscode.workspace.onDidChangeTextDocument((e) => e.document.uri.scheme === 'file' && this.entries.has(e.document.uri.toString()) && changed(e.document.uri), undefined, this.disposables);
    // A task with lint errors cannot run: its item says so, whether or not the file is open.
    vscode.languages.onDidChangeDiagnostics((e) => {
      for (const uri of e.uris) {
        const item = this.entries.has(uri.toString()) ? this.findItem(uri.toString()) : undefined;
        if (item) this.markRunnable(item);
      }
    }, undefined, this.disposables);
    this.disposables.push(watcher, this.broadcast);
  }

  async discover(): Promise<void> {
    const files = await vscode.workspace.findFiles(TASK_GLOB, EXCLUDE_GLOB);
    this.entries.clear();
    for (const uri of files) if (isTaskFile(vscode.workspace.asRelativePath(uri, false))) this.readEntry(uri);
    this.rebuild();
  }

  private readEntry(uri: vscode.Uri): TaskEntry | undefined {
    // A file gone from disk is no task of the workspace, even while an editor still holds its last text (a late
    // change event after a delete must not bring it back).
    const text = uri.scheme === 'file' && !existsSync(uri.fsPath) ? undefined : readText(uri);
    if (text === undefined) {
      this.entries.delete(uri.toString());
      return undefined;
    }
    const entry: TaskEntry = { uri: uri.toString(), header: readTaskHeader(uri.path, text) };
    this.entries.set(entry.uri, entry);
    return entry;
  }

  private scheduleRebuild(): void {
    clearTimeout(this.refreshTimer);
    this.refreshTimer = setTimeout(() => this.rebuild(), 100);
  }

  private rebuild(): void {
    const groups = groupTasks([...this.entries.values()]);
    this.controller.items.replace(
      groups.map((ns) => {
        const nsItem = this.controller.createTestItem(ns.id, ns.label);
        nsItem.children.replace(
          ns.categories.map((category) => {
            const categoryItem = this.controller.createTestItem(category.id, category.label);
            categoryItem.children.replace(category.tasks.map((task) => this.taskItem(task)));
            return categoryItem;
          }),
        );
        return nsItem;
      }),
    );
  }

  private taskItem(entry: TaskEntry): vscode.TestItem {
    const uri = vscode.Uri.parse(entry.uri);
    const item = this.controller.createTestItem(entry.uri, entry.header.id, uri);
    const text = readText(uri);
    const idRange = text === undefined ? undefined : rangeOfPath(text, ['id']);
    if (idRange) item.range = toRange(idRange);
    item.description = vscode.workspace.asRelativePath(uri, false);
    this.markRunnable(item, entry);
    return item;
  }

  /** Marks a task item that cannot run (it does not parse, or the linter found errors), or clears the mark. */
  private markRunnable(item: vscode.TestItem, entry = this.entries.get(item.id)): void {
    const errors = item.uri ? lintErrors(item.uri) : [];
    if (errors.length) {
      const first = errors[0]!;
      const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
      item.error = new vscode.MarkdownString(`Cannot run: ${errors.length} lint error${errors.length === 1 ? '' : 's'} — line ${first.range.start.line + 1}: ${first.message}${more}. See [Problems](command:${PROBLEMS_COMMAND}).`);
      item.error.isTrusted = { enabledCommands: [PROBLEMS_COMMAND] };
    } else if (entry && !entry.header.parsed) {
      item.error = 'This file is not a JSON object; open it to see the problems.';
    } else {
      item.error = undefined;
    }
  }

  /** The task items under the request's items (all tasks when it names none), less the excluded ones. */
  private selectedTasks(request: vscode.TestRunRequest): vscode.TestItem[] {
    const selected = new Map<string, vscode.TestItem>();
    const excluded = new Set((request.exclude ?? []).map((i) => i.id));
    const visit = (item: vscode.TestItem) => {
      if (excluded.has(item.id)) return;
      if (this.entries.has(item.id)) selected.set(item.id, item);
      item.children.forEach(visit);
    };
    if (request.include?.length) request.include.forEach(visit);
    else this.controller.items.forEach(visit);
    return [...selected.values()];
  }

  private findItem(id: string): vscode.TestItem | undefined {
    let found: vscode.TestItem | undefined;
    const visit = (item: vscode.TestItem) => {
      if (found) return;
      if (item.id === id) found = item;
      else item.children.forEach(visit);
    };
    this.controller.items.forEach(visit);
    return found;
  }

  /** The API and the commands: the same path as a click in the Test Explorer. */
  async runTests(uris: vscode.Uri[], profile: TestProfileName, options: RunRequestOptions = {}): Promise<TaskRunOutcome[]> {
    // A file that is no task is refused here, at once and plainly: it has no test item to carry the message.
    const notTasks: TaskRunOutcome[] = [];
    for (const uri of uris) {
      const status = await this.files.fileStatus(uri);
      if (status && status.kind !== 'task') notTasks.push({ id: status.label, state: 'errored', message: refusal(status)! });
    }
    if (notTasks.length) {
      void vscode.window.showErrorMessage(`MCPBench: ${notTasks.map((o) => o.message).join(' ')}`);
      this.broadcast.fire({ type: 'begin', title: `${profileTitle(profile, options.faults)}: not run`, kind: profile });
      this.broadcast.fire({ type: 'end', message: notTasks.map((o) => o.message).join(' ') });
      return notTasks;
    }
    let missing = false;
    for (const uri of uris) {
      if (!this.entries.has(uri.toString())) {
        this.readEntry(uri);
        missing = true;
      }
    }
    if (missing) this.rebuild();
    return this.runTestItems(uris.flatMap((uri) => this.findItem(uri.toString()) ?? []), profile, options);
  }

  /** Runs test items (tasks, or groups: a namespace, a category) with a profile, as the Test Explorer's run buttons do. */
  async runTestItems(items: vscode.TestItem[], profile: TestProfileName, options: RunRequestOptions = {}): Promise<TaskRunOutcome[]> {
    const runProfile = profile === 'check' ? this.profiles.coverage : this.profiles[profile];
    const request = new vscode.TestRunRequest(items, undefined, runProfile);
    const cancellation = new vscode.CancellationTokenSource();
    const forwarded = options.token?.onCancellationRequested(() => cancellation.cancel());
    if (options.token?.isCancellationRequested) cancellation.cancel();
    try {
      return await this.execute(profile, request, cancellation.token, options, profile === 'check');
    } finally {
      forwarded?.dispose();
      cancellation.dispose();
    }
  }

  /** A run's title: what was asked for (a group by its name, all tasks, one task), not a list of every task id. */
  private runTitle(base: string, request: vscode.TestRunRequest, tasks: vscode.TestItem[]): string {
    const include = request.include ?? [];
    const groups = include.filter((item) => !this.entries.has(item.id)).map((item) => {
      const names: string[] = [];
      for (let at: vscode.TestItem | undefined = item; at; at = at.parent) names.unshift(at.label);
      return names;
    });
    return runTitle(base, { all: include.length === 0, groups, taskIds: tasks.map((t) => this.entries.get(t.id)?.header.id ?? t.label) });
  }

  /**
   * Splits the selected tasks into those that can run and those the language server says cannot (not a task,
   * lint errors), each of the latter errored at once with the reason at the first error's line.
   */
  private async refuseUnrunnable(run: vscode.TestRun, tasks: vscode.TestItem[]): Promise<{ runnable: vscode.TestItem[]; refused: TaskOutcome[] }> {
    const runnable: vscode.TestItem[] = [];
    const refused: TaskOutcome[] = [];
    for (const item of tasks) {
      const status = await this.files.fileStatus(item.uri!);
      const reason = status && refusal(status);
      if (!reason) {
        runnable.push(item);
        continue;
      }
      const message = new vscode.TestMessage(reason);
      const line = status.errors[0]?.line;
      if (line !== undefined) message.location = new vscode.Location(item.uri!, new vscode.Position(line - 1, 0));
      run.errored(item, message);
      refused.push({ taskId: status.id ?? item.label, state: 'errored', message: reason, durationMs: 0, results: [] });
    }
    return { runnable, refused };
  }

  async execute(
    kind: TestProfileName,
    request: vscode.TestRunRequest,
    token: vscode.CancellationToken,
    options: RunRequestOptions = {},
    withCoverage = false,
  ): Promise<TaskRunOutcome[]> {
    const selected = this.selectedTasks(request);
    const settings = readRunSettings(selected[0]?.uri);
    const faults = kind === 'faults' ? (options.faults ?? settings.faultProfile) : 'none';
    const title = this.runTitle(profileTitle(kind, faults), request, selected);
    const run = this.controller.createTestRun(request, title, true);
    if (!selected.length) {
      run.end();
      return [];
    }
    // Lint errors, or a file that is no task: said at once, per task, before anything starts.
    const { runnable: tasks, refused } = await this.refuseUnrunnable(run, selected);
    if (refused.length) {
      const message = refused.length === 1 ? refused[0]!.message! : `${refused.length} of the ${selected.length} tasks cannot run because of lint errors (see Problems)${tasks.length ? '; the others run' : ''}.`;
      void vscode.window.showErrorMessage(`MCPBench: ${message}`, 'Show Problems').then((choice) => choice && vscode.commands.executeCommand(PROBLEMS_COMMAND));
      if (!tasks.length) {
        run.end();
        this.broadcast.fire({ type: 'begin', title, kind });
        this.broadcast.fire({ type: 'end', message });
        return this.summarize(refused);
      }
    }
    const files = tasks.map((item) => item.uri!);
    const itemsById = new Map<string, vscode.TestItem[]>();
    for (const item of tasks) {
      const id = this.entries.get(item.id)!.header.id;
      itemsById.set(id, [...(itemsById.get(id) ?? []), item]);
      run.enqueued(item);
    }
    const outcomes: TaskOutcome[] = [...refused];
    const apply = (outcome: TaskOutcome) => {
      outcomes.push(outcome);
      for (const item of itemsById.get(outcome.taskId) ?? []) this.report(run, item, outcome);
    };
    const fail = (message: string) => {
      for (const id of itemsById.keys()) apply({ taskId: id, state: 'errored', message, durationMs: 0, results: [] });
      run.end();
      this.broadcast.fire({ type: 'end', message });
      return this.summarize(outcomes);
    };

    let args: string[];
    try {
      const lmEndpoint = kind !== 'check' && settings.agent === 'vscode-lm' ? await this.lm.endpointUrl() : undefined;
      args = kind === 'check' ? checkArgs(files.map((f) => f.fsPath), settings) : runArgs(files.map((f) => f.fsPath), settings, { faults, ...(lmEndpoint ? { lmEndpoint } : {}) });
    } catch (error) {
      if (error instanceof SettingsError || error instanceof Error) {
        void vscode.window.showErrorMessage(`MCPBench: ${error.message}`);
        return fail(error.message);
      }
      throw error;
    }

    this.broadcast.fire({ type: 'begin', title, kind });
    const tracker = new RunOutcomeTracker(kind === 'check' ? 'check' : 'run');
    tracker.expect([...itemsById.keys()]);
    let stderrTail = '';
    let startedRun = false;
    const cli = this.launcher.start(
      args,
      this.launcher.cwdFor(files),
      (event) => {
        const check = kind === 'check' && event.type === 'episode-finished' ? checkedOutcome(event.result) : undefined;
        this.broadcast.fire({ type: 'event', event, ...(check ? { check } : {}) });
        if (event.type === 'run-started') startedRun = true;
        const update = tracker.onEvent(event);
        for (const id of update.started) for (const item of itemsById.get(id) ?? []) run.started(item);
        if (event.type === 'call-started') {
          const line = `${event.key.variant} trial ${event.key.trial}: #${event.call.index} ${event.call.qualified ?? event.call.tool} … (in flight)`;
          for (const item of itemsById.get(event.key.task_id) ?? []) run.appendOutput(line + '\r\n', undefined, item);
        }
        if (event.type === 'call') {
          const line = `${event.key.variant} trial ${event.key.trial}: ${formatCall(event.call)}`;
          for (const item of itemsById.get(event.key.task_id) ?? []) run.appendOutput(line + '\r\n', undefined, item);
        }
        if (event.type === 'episode-finished') {
          const r = event.result;
          const why = r.error ? ` (${r.error.kind === 'agent' ? 'agent' : 'infrastructure'} ${r.error.code}: ${r.error.message.split('\n')[0]})` : '';
          const line = `${r.variant} trial ${r.trial} (faults ${r.fault_profile}): ${check?.label ?? r.status}${why}, ${r.tool_calls} tool calls, ${Math.round(r.duration_ms)} ms`;
          for (const item of itemsById.get(r.task_id) ?? []) run.appendOutput(line + '\r\n', undefined, item);
        }
        update.finished.forEach(apply);
        if (withCoverage) for (const check of update.checks) this.addCoverage(run, check);
      },
      (text) => (stderrTail = (stderrTail + text).slice(-2000)),
    );
    // The caller's token, and the run's own: Stop in the Test Explorer cancels a run started from a command too.
    const cancellations = [token, run.token].map((t) => t.onCancellationRequested(() => cli.cancel()));
    if (token.isCancellationRequested || run.token.isCancellationRequested) cli.cancel();
    const exit = await cli.exited;
    cancellations.forEach((c) => c.dispose());
    // The CLI refused the run before it began (a usage error, a sandbox that does not work here, a task it cannot
    // load): its own message, said plainly, not "Finished."
    const refusedByCli = !exit.cancelled && !startedRun && exit.code !== 0 ? cliRefusal(stderrTail, exit) : undefined;
    if (refusedByCli) void vscode.window.showErrorMessage(`MCPBench: ${refusedByCli}`, 'Show Output').then((choice) => choice && vscode.commands.executeCommand('mcpbench.showOutput'));
    const reason = exit.cancelled
      ? 'Cancelled.'
      : exit.error
        ? `Could not start the mcpbench CLI: ${exit.error.message}`
        : refusedByCli ?? `The mcpbench CLI exited (code ${exit.code ?? exit.signal}) before this task finished.${stderrTail.trim() ? `\n${stderrTail.trim()}` : ''}`;
    for (const outcome of tracker.finish(reason, { cancelled: exit.cancelled })) {
      // A task that never started in a run the CLI refused (bad arguments, a task it cannot load) is an error, not a skip.
      apply(outcome.state === 'skipped' && !exit.cancelled ? { ...outcome, state: 'errored' } : outcome);
    }
    run.end();
    // The panel's last word is made from the outcomes the Test Explorer shows.
    this.broadcast.fire({ type: 'end', message: refusedByCli ?? runSummary(outcomes, { cancelled: exit.cancelled }) });
    return this.summarize(outcomes);
  }

  private summarize(outcomes: TaskOutcome[]): TaskRunOutcome[] {
    return outcomes.map((o) => ({ id: o.taskId, state: o.state, ...(o.message !== undefined ? { message: o.message } : {}) }));
  }

  private report(run: vscode.TestRun, item: vscode.TestItem, outcome: TaskOutcome): void {
    switch (outcome.state) {
      case 'passed':
        run.passed(item, outcome.durationMs);
        break;
      case 'failed': {
        const message = new vscode.TestMessage(outcome.message ?? 'Failed');
        const text = item.uri && readText(item.uri);
        // The message sits at the leaf that failed (or the `any`/`not` that did), not on the whole predicate.
        const verdict = outcome.results.find((r) => !r.passed && r.verdict?.value === false)?.verdict;
        const path = verdict ? failingNode(verdict).path : ['success_predicate'];
        const where = text === undefined ? undefined : (rangeOfPath(text, path) ?? rangeOfPath(text, ['success_predicate']));
        if (item.uri && where) message.location = new vscode.Location(item.uri, toRange(where));
        run.failed(item, message, outcome.durationMs);
        break;
      }
      case 'errored':
        run.errored(item, new vscode.TestMessage(outcome.message ?? 'Error'), outcome.durationMs);
        break;
      case 'skipped':
        run.skipped(item);
        break;
    }
  }

  /** Leaves and `any` branches as statements: covered when a passing reference solution witnessed them. */
  private addCoverage(run: vscode.TestRun, check: CheckSummary): void {
    const uri = vscode.Uri.file(check.file);
    const text = readText(uri);
    if (text === undefined) return;
    const statements = coverageRanges(text, check.coverage.items).map(
      (r) => new vscode.StatementCoverage(r.covered ? 1 : 0, toRange(r)),
    );
    if (!statements.length) return;
    const coverage = vscode.FileCoverage.fromDetails(uri, statements);
    this.coverageDetails.set(coverage, statements);
    this.latestCoverage.set(uri.toString(), statements);
    run.addCoverage(coverage);
  }

  coverageOf(uri: vscode.Uri): vscode.StatementCoverage[] | undefined {
    return this.latestCoverage.get(uri.toString());
  }

  dispose(): void {
    clearTimeout(this.refreshTimer);
    this.controller.dispose();
    for (const d of this.disposables) d.dispose();
  }
}

/** The title of a profile's runs. */
function profileTitle(kind: TestProfileName, faults = 'none'): string {
  return kind === 'check' ? 'Check' : kind === 'faults' ? `Run with faults (${faults})` : 'Run';
}

/** The CLI's own words when it refused a run (its `mcpbench: ...` lines), or undefined when it said nothing. */
export function cliRefusal(stderr: string, exit: { code: number | null }): string | undefined {
  const lines = stderr.split('\n').map((l) => l.trim()).filter(Boolean);
  const said = lines.filter((l) => l.startsWith('mcpbench: ')).map((l) => l.slice('mcpbench: '.length));
  const detail = said.length ? said.join(' ') : lines.at(-1);
  return detail ? `the run was refused (exit ${exit.code}): ${detail}` : undefined;
}

/**
 * none / light / medium / heavy, then one `<type>-only` ablation per fault type; each says its rate and fault types.
 * It stays open when focus moves (a webview that loads or a panel that opens must not answer it for the user).
 */
export async function pickFaultProfile(): Promise<string | undefined> {
  const current = vscode.workspace.getConfiguration('mcpbench').get<string>('faultProfile', 'light');
  const picked = await vscode.window.showQuickPick(
    FAULT_PROFILE_CHOICES.map((name) => ({
      label: name,
      description: name === current ? 'current setting' : undefined,
      detail: describeFaultProfile(name),
    })),
    { title: 'Fault profile', placeHolder: 'Which faults the gateway injects, and how often', matchOnDetail: true, ignoreFocusOut: true },
  );
  return picked?.label;
}
