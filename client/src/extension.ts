/**
 * The VS Code extension: nothing but VS Code UI over the engine. The language server lints; the `mcpbench`
 * CLI runs tasks, and the Test Explorer, the runner panel and the commands render its event stream.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { MCPBenchExtensionApi } from './api.ts';
import { CliLauncher } from './cli-launcher.ts';
import { LanguageServerHost } from './language-client.ts';
import { LanguageModelAgent } from './lm-agent.ts';
import { openPage, openReport, RunnerPanel } from './runner-panel.ts';
import { shortUnit } from './episode-view.ts';
import { episodeViewFile, openRun } from '../../server/src/record/run-folder.ts';
import { latestByWorkUnit } from '../../server/src/record/work-units.ts';
import { ReviewViews } from './review-panel.ts';
import { pickFaultProfile, TaskTestExplorer } from './testing.ts';
import { Authoring } from './authoring.ts';
import { TASK_LANGUAGE } from './language-client.ts';

export { TASK_FILE_SELECTOR } from './language-client.ts';
export type { MCPBenchExtensionApi } from './api.ts';

let server: LanguageServerHost | undefined;

/** Code lenses pass the document URI as a string (LSP commands carry JSON); the palette passes nothing. */
function taskUri(argument: unknown): vscode.Uri | undefined {
  if (argument instanceof vscode.Uri) return argument;
  if (typeof argument === 'string' && argument) return vscode.Uri.parse(argument);
  const uri = (argument as { uri?: unknown } | undefined)?.uri;
  if (uri instanceof vscode.Uri) return uri;
  const active = vscode.window.activeTextEditor?.document.uri;
  if (active) return active;
  void vscode.window.showWarningMessage('MCPBench: open a task file first.');
  return undefined;
}

/** A context key for `when` clauses, and a fresh look whenever the set of chat models changes. */
async function trackLanguageModels(context: vscode.ExtensionContext): Promise<void> {
  const update = async () => {
    const available = (await LanguageModelAgent.availableModels()).length > 0;
    await vscode.commands.executeCommand('setContext', 'mcpbench.languageModelAvailable', available);
    if (!available && vscode.workspace.getConfiguration('mcpbench').get('defaultAgent') === 'vscode-lm') {
      void vscode.window.showWarningMessage('MCPBench: mcpbench.defaultAgent is vscode-lm, but no VS Code language model is available.');
    }
  };
  if (vscode.lm?.onDidChangeChatModels) context.subscriptions.push(vscode.lm.onDidChangeChatModels(() => void update()));
  await update();
}

export async function activate(context: vscode.ExtensionContext): Promise<MCPBenchExtensionApi> {
  const output = vscode.window.createOutputChannel('MCPBench', { log: true });
  const launcher = new CliLauncher(context, output);
  const lmAgent = new LanguageModelAgent(output);
  server = new LanguageServerHost(context, output);
  const host = server;
  const tests = new TaskTestExplorer(launcher, lmAgent, { fileStatus: (uri) => host.fileStatus(uri) });
  const panel = new RunnerPanel(context, tests.onRunBroadcast, host);
  const reviews = new ReviewViews(context, launcher);
  const authoring = new Authoring(context, launcher, output, (uri) => reviews.open(uri));
  context.subscriptions.push(output, lmAgent, tests, panel, reviews, server, ...authoring.register());
  // For the walkthrough's "open a task" step.
  const noteTaskOpened = (editor: vscode.TextEditor | undefined) => {
    if (editor?.document.languageId === TASK_LANGUAGE) void vscode.commands.executeCommand('setContext', 'mcpbench.taskOpened', true);
  };
  noteTaskOpened(vscode.window.activeTextEditor);
  context.subscriptions.push(vscode.window.onDidChangeActiveTextEditor(noteTaskOpened));

  const runFromCommand = async (argument: unknown, profile: 'run' | 'faults' | 'check', faults?: string) => {
    const uri = taskUri(argument);
    if (!uri) return undefined;
    void panel.show(true);
    return tests.runTests([uri], profile, faults ? { faults } : {});
  };

  /** A run of the workspace's runs/ that has a report, picked by the user (undefined: none, or cancelled). */
  const pickReportedRun = async (title: string) => {
    const folder = vscode.workspace.workspaceFolders?.[0];
    const runs = folder ? (await panel.history(path.join(folder.uri.fsPath, 'runs'))).filter((r) => r.report) : [];
    if (!runs.length) return void vscode.window.showInformationMessage('MCPBench: no run with a report in runs/ yet.');
    return vscode.window.showQuickPick(runs.map((r) => ({ label: r.id, description: r.label, directory: r.directory })), { title });
  };
  context.subscriptions.push(
    vscode.commands.registerCommand('mcpbench.runTask', (argument?: unknown) => runFromCommand(argument, 'run')),
    vscode.commands.registerCommand('mcpbench.runTaskWithFaults', async (argument?: unknown, profile?: unknown) => {
      const faults = typeof profile === 'string' ? profile : await pickFaultProfile();
      return faults ? runFromCommand(argument, 'faults', faults) : undefined;
    }),
    vscode.commands.registerCommand('mcpbench.checkTask', (argument?: unknown) => runFromCommand(argument, 'check')),
    vscode.commands.registerCommand('mcpbench.showRunnerPanel', () => panel.show()),
    vscode.commands.registerCommand('mcpbench.openReport', async (argument?: unknown) => {
      if (typeof argument === 'string' && argument) return openReport(argument);
      const picked = await pickReportedRun('Open the report of a run');
      if (picked) await openReport(picked.directory);
    }),
    vscode.commands.registerCommand('mcpbench.openEpisode', async (runDirectory?: unknown, workUnit?: unknown) => {
      if (typeof runDirectory === 'string' && typeof workUnit === 'string') {
        return openPage(episodeViewFile(runDirectory, workUnit), `Episode ${shortUnit(workUnit)}`, 'the episode pages are written with the report');
      }
      const run = await pickReportedRun('Open an episode of a run: the run');
      if (!run) return;
      const episodes = latestByWorkUnit([...openRun(run.directory).episodes]);
      const picked = await vscode.window.showQuickPick(
        episodes.map((e) => ({ label: e.task_id, description: `${e.status} · trial ${e.trial} · ${e.variant} · faults ${e.fault_profile} · perturbation ${e.perturbation}`, detail: shortUnit(e.work_unit), workUnit: e.work_unit })),
        { title: `Open an episode of ${run.label}`, matchOnDescription: true },
      );
      if (picked) await openPage(episodeViewFile(run.directory, picked.workUnit), `Episode ${picked.label}`, 'the episode pages are written with the report');
    }),
    vscode.commands.registerCommand('mcpbench.restartServer', () => server?.restart()),
    vscode.commands.registerCommand('mcpbench.showOutput', () => output.show(true)),
  );

  await tests.discover();
  void trackLanguageModels(context);
  await server.start();

  return {
    testController: tests.controller,
    runTests: (uris, profile, options) => tests.runTests(uris, profile, options?.token ? { token: options.token } : {}),
    runTestItems: (items, profile) => tests.runTestItems(items, profile),
    showRunnerPanel: () => panel.show(),
    runnerMessages: () => panel.messages(),
    onRunnerMessage: tests.onRunBroadcast,
    runnerHistory: () => panel.history(),
    languageClient: () => server?.languageClient,
    coverageOf: (uri) => tests.coverageOf(uri),
    reviewBatch: (uri) => reviews.open(uri),
    newTask: (options) => authoring.newTask(options),
    generateBatch: (template, options) => authoring.generateBatch(template, options),
    lintTemplateSample: (template, seed) => authoring.lintSample(template, seed),
  };
}

export async function deactivate(): Promise<void> {
  await server?.stop();
}
