/** What `activate` returns: the surface the extension tests (client/test/) drive. */
import type * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import type { ReviewSession } from './review-panel.ts';
import type { GenerateOptions, NewTaskOptions } from './authoring.ts';
import type { RunSummary } from './run-history.ts';
import type { RunBroadcast } from './testing.ts';

export type { ReviewSession };

export type TestProfileName = 'run' | 'faults' | 'check';

export interface TaskRunOutcome {
  /** The task's id. */
  id: string;
  state: 'passed' | 'failed' | 'errored' | 'skipped';
  message?: string;
}

export interface MCPBenchExtensionApi {
  testController: vscode.TestController;
  /**
   * Runs the task files through the Test Explorer (so results, output and coverage show there too); `token`
   * cancels the run as Stop in the Test Explorer does.
   */
  runTests(uris: vscode.Uri[], profile: TestProfileName, options?: { token?: vscode.CancellationToken }): Promise<TaskRunOutcome[]>;
  /** Runs test items of the controller, groups (a namespace, a category) included, as their run buttons do. */
  runTestItems(items: vscode.TestItem[], profile: TestProfileName): Promise<TaskRunOutcome[]>;
  showRunnerPanel(): Promise<vscode.WebviewPanel>;
  /** The messages the runner panel drew for the current (or last) run: its title, events and closing message. */
  runnerMessages(): RunBroadcast[];
  /** Each message to the runner panel as it is sent (what `runnerMessages` collects). */
  onRunnerMessage: vscode.Event<RunBroadcast>;
  /** The workspace's past runs as the runner panel lists them, newest first, each with the line it shows. */
  runnerHistory(): Promise<RunSummary[]>;
  languageClient(): LanguageClient | undefined;
  /**
   * The statement coverage the last coverage run added for a file (VS Code has no API to read a run's
   * coverage back): one statement per predicate leaf and `any` branch, in predicate order.
   */
  coverageOf(uri: vscode.Uri): vscode.StatementCoverage[] | undefined;
  /** Opens the review view of a batch (its folder or its batch.json), as `MCPBench: Review Batch...` does. */
  reviewBatch(uri: vscode.Uri): Promise<ReviewSession | undefined>;
  /** MCPBench: New Task... with the answers given: writes the skeleton (through `mcpbench new`) and opens it. */
  newTask(options: NewTaskOptions): Promise<vscode.Uri | undefined>;
  /** MCPBench: Generate Batch from Template... with the answers given: the review view of the new batch. */
  generateBatch(template: vscode.Uri, options: GenerateOptions): Promise<ReviewSession | undefined>;
  /** The template code lens Lint a Sample: one instance opened as an untitled task. */
  lintTemplateSample(template: vscode.Uri, seed?: number): Promise<vscode.TextDocument | undefined>;
}
