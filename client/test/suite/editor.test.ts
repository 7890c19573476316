/**
 * The editor at the level of the ones its users live in, in a real VS Code: the editor reports what CI reports
 * (every finding once, at its severity), files nobody opened are linted and the Test Explorer marks the tasks
 * that cannot run, a broken or non-task file is refused at once with the reason, a sandbox that does not work
 * here is refused with the fix, navigation across the set (definition, references, rename, workspace symbols),
 * the add-tool quick fix, and the settings' schema. Screenshots of each are taken where a person would look.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'mocha';
import * as vscode from 'vscode';
import { allTestItems, diagnosticCode, EXTENSION_ID, extensionApi, mcpbenchDiagnostics, screenshot, waitFor, workspaceFile, workspaceRoot, type ExtensionApi } from './helpers.ts';

const UNOPENED = 'tasks/filesystem/fs-unopened-broken-001.json';
const CLEAN = 'tasks/filesystem/fs-bump-version-001.json';

interface CliFinding {
  code: string;
  severity: string;
  line: number;
}

/** What `mcpbench lint` (the extension's own CLI, as CI runs it) says of a file. */
async function cliLint(file: vscode.Uri): Promise<CliFinding[]> {
  const cli = path.join(vscode.extensions.getExtension(EXTENSION_ID)!.extensionPath, 'dist', 'cli.js');
  const { stdout } = await promisify(execFile)(process.execPath, [cli, 'lint', '--format', 'json', file.fsPath], { cwd: workspaceRoot().fsPath, env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' } }).catch(
    (error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }),
  );
  const report = JSON.parse(stdout) as { files: { diagnostics: CliFinding[] }[] };
  return report.files.flatMap((f) => f.diagnostics);
}

const severityName = (d: vscode.Diagnostic) => ['error', 'warning', 'info', 'hint'][d.severity]!;

/** Our diagnostics on a file once they match `accept`. */
const diagnosticsWhen = (uri: vscode.Uri, what: string, accept: (d: vscode.Diagnostic[]) => boolean) =>
  waitFor(what, () => {
    const ours = mcpbenchDiagnostics(uri);
    return accept(ours) ? ours : undefined;
  }, { wakeOn: [vscode.languages.onDidChangeDiagnostics] });

function positionOf(document: vscode.TextDocument, needle: string, offset = 2): vscode.Position {
  const at = document.getText().indexOf(needle);
  assert.ok(at >= 0, `${needle} in ${document.uri.fsPath}`);
  return document.positionAt(at + offset);
}

describe('the editor and CI agree', () => {
  let api: ExtensionApi;
  before(async () => {
    api = await extensionApi();
  });

  it('an empty task shows the errors mcpbench lint reports, as errors, each once', async () => {
    // The same text in the editor (a new task being written) and in a file CI lints.
    const scratch = mkdtempSync(path.join(tmpdir(), 'mcpbench-e2e-empty-'));
    const file = vscode.Uri.file(path.join(scratch, 'fs-empty-task.json'));
    writeFileSync(file.fsPath, '{}\n');
    try {
      const document = await vscode.workspace.openTextDocument({ language: 'mcpbench-task', content: '{}\n' });
      await vscode.window.showTextDocument(document);
      const cli = await cliLint(file);
      assert.ok(cli.filter((f) => f.severity === 'error').length >= 5, JSON.stringify(cli));
      const ours = await diagnosticsWhen(document.uri, 'the lint of the empty task', (d) => d.length === cli.length);
      const shown = (list: { code: string; severity: string; line: number }[]) => list.map((f) => `${f.line}:${f.severity}:${f.code}`).sort();
      assert.deepEqual(shown(ours.map((d) => ({ code: diagnosticCode(d)!, severity: severityName(d), line: d.range.start.line + 1 }))), shown(cli));
      // Nobody else reports on it: VS Code's JSON validation leaves the MCPBench languages alone.
      const all = vscode.languages.getDiagnostics(document.uri);
      assert.deepEqual(all.filter((d) => d.source !== 'mcpbench').map((d) => [d.source, d.message]), []);
      await vscode.commands.executeCommand('workbench.actions.view.problems');
      await screenshot('editor-agrees-with-ci');
    } finally {
      await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  it('task files are MCPBench tasks, not plain JSON', async () => {
    const document = await vscode.workspace.openTextDocument(workspaceFile(CLEAN));
    assert.equal(document.languageId, 'mcpbench-task');
    const template = await vscode.workspace.openTextDocument(workspaceFile('templates/filesystem/file-away.template.json'));
    assert.equal(template.languageId, 'mcpbench-template');
    const other = await vscode.workspace.openTextDocument(workspaceFile('schemas/servers/git.json'));
    assert.equal(other.languageId, 'json');
  });

  it('one hover and one $schema completion: the task language has no second JSON provider', async () => {
    const document = await vscode.workspace.openTextDocument(workspaceFile(CLEAN));
    const hovers = await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', document.uri, positionOf(document, '"max_steps"'));
    assert.equal(hovers.length, 1, JSON.stringify(hovers.map((h) => h.contents)));
    const firstKey = document.getText().indexOf('"id"');
    const list = await vscode.commands.executeCommand<vscode.CompletionList>('vscode.executeCompletionItemProvider', document.uri, document.positionAt(firstKey));
    const schemaEntries = list.items.filter((i) => (typeof i.label === 'string' ? i.label : i.label.label) === '$schema');
    assert.ok(schemaEntries.length <= 1, `$schema offered ${schemaEntries.length} times`);
  });

  it('files nobody opened are linted: Problems lists them and the Test Explorer marks the task that cannot run', async () => {
    const file = workspaceFile(UNOPENED);
    assert.ok(!vscode.workspace.textDocuments.some((d) => d.uri.toString() === file.toString()), 'the file is not open');
    const found = await diagnosticsWhen(file, `diagnostics of the unopened ${UNOPENED}`, (d) => d.length === 2);
    assert.deepEqual(found.map(diagnosticCode).sort(), ['invalid-type', 'unknown-tool']);
    assert.ok(found.every((d) => d.severity === vscode.DiagnosticSeverity.Error));
    const item = await waitFor('the Test Explorer to mark the broken task', () => {
      const candidate = allTestItems(api.testController).find((i) => i.uri?.toString() === file.toString());
      return candidate?.error ? candidate : undefined;
    }, { wakeOn: [vscode.languages.onDidChangeDiagnostics] });
    const error = typeof item.error === 'string' ? item.error : item.error!.value;
    assert.match(error, /Cannot run: 2 lint errors/);
    await vscode.commands.executeCommand('workbench.actions.view.problems');
    await screenshot('workspace-diagnostics-problems');
    await vscode.commands.executeCommand('workbench.view.testing.focus');
    await vscode.commands.executeCommand('vscode.revealTestInExplorer', item);
    await screenshot('workspace-diagnostics-test-explorer');
  });
});

describe('a run that cannot start says why, at once', () => {
  let api: ExtensionApi;
  before(async () => {
    api = await extensionApi();
  });

  it('a task with lint errors is not run: the reason names the error and points at the Problems', async () => {
    const panel = await api.showRunnerPanel();
    await waitFor('the runner panel', () => (panel.visible ? true : undefined), { wakeOn: [panel.onDidChangeViewState] });
    const started = Date.now();
    const [outcome] = await api.runTests([workspaceFile(UNOPENED)], 'run');
    assert.equal(outcome?.state, 'errored');
    assert.match(outcome!.message!, /fs-unopened-broken-001 cannot run: 2 lint errors — line 6: `max_steps` must be an integer/);
    assert.match(outcome!.message!, /see Problems/);
    assert.ok(Date.now() - started < 60_000, 'no run was started'); // a hang guard, not a speed claim
    await screenshot('run-refused-lint-errors', 2500);
  });

  it('a JSON file that is no task is refused by name', async () => {
    const [outcome] = await api.runTests([workspaceFile('schemas/servers/git.json')], 'run');
    assert.equal(outcome?.state, 'errored');
    assert.match(outcome!.message!, /schemas\/servers\/git\.json is not a task file: Run and Check work on task files/);
  });

  it('a sandbox backend that does not work here is refused with the fix, not a spawn error', async function () {
    // A container engine that does not work on this machine (CI runs podman, and has a docker client with no
    // daemon; bubblewrap on the user's machine that reported this). Where both work there is nothing to refuse.
    let missing: 'docker' | 'podman' | undefined;
    for (const engine of ['docker', 'podman'] as const) if (!missing && !(await engineAnswers(engine))) missing = engine;
    if (!missing) return this.skip();
    const config = vscode.workspace.getConfiguration('mcpbench');
    await config.update('sandbox', missing, vscode.ConfigurationTarget.Workspace);
    try {
      const [outcome] = await api.runTests([workspaceFile(CLEAN)], 'run');
      assert.equal(outcome?.state, 'errored');
      assert.match(outcome!.message!, new RegExp(`sandbox backend \`${missing}\` does not work here: (not installed|no engine)`));
      assert.match(outcome!.message!, /mcpbench doctor/);
      assert.doesNotMatch(outcome!.message!, /ENOENT/);
      await screenshot('run-refused-sandbox');
    } finally {
      await config.update('sandbox', undefined, vscode.ConfigurationTarget.Workspace);
    }
  });
});

describe('navigation across the set', () => {
  let document: vscode.TextDocument;
  before(async () => {
    await extensionApi();
    document = await vscode.workspace.openTextDocument(workspaceFile(CLEAN));
    await vscode.window.showTextDocument(document);
  });

  it('go to definition: a tool opens its entry in the namespace file', async () => {
    const position = positionOf(document, '"filesystem.write_file"');
    const [target] = await vscode.commands.executeCommand<(vscode.Location | vscode.LocationLink)[]>('vscode.executeDefinitionProvider', document.uri, position);
    assert.ok(target);
    const uri = 'targetUri' in target ? target.targetUri : target.uri;
    const range = 'targetUri' in target ? (target.targetSelectionRange ?? target.targetRange) : target.range;
    assert.match(uri.path, /\/schemas\/servers\/filesystem\.json$/);
    const schema = await vscode.workspace.openTextDocument(uri);
    assert.equal(schema.getText(range), '"write_file"');
    const editor = await vscode.window.showTextDocument(document);
    editor.selection = new vscode.Selection(position, position);
    await vscode.commands.executeCommand('editor.action.revealDefinition');
    await waitFor('the namespace file to open', () => (vscode.window.activeTextEditor?.document.uri.path.endsWith('/schemas/servers/filesystem.json') ? true : undefined));
    await screenshot('go-to-definition');
  });

  it('find references: every task using a tool, opened or not', async () => {
    const position = positionOf(document, '"filesystem.write_file"');
    const references = await vscode.commands.executeCommand<vscode.Location[]>('vscode.executeReferenceProvider', document.uri, position);
    const files = new Set(references.map((r) => path.basename(r.uri.fsPath)));
    for (const expected of ['fs-bump-version-001.json', 'fs-archive-report-typo-001.json', 'fs-unopened-broken-001.json']) assert.ok(files.has(expected), `${expected} in ${[...files].join(', ')}`);
    await vscode.window.showTextDocument(document);
    const editor = vscode.window.activeTextEditor!;
    editor.selection = new vscode.Selection(position, position);
    await vscode.commands.executeCommand('editor.action.referenceSearch.trigger');
    await screenshot('find-references');
    await vscode.commands.executeCommand('closeReferenceSearch');
  });

  it('rename a task id: the file follows, and a taken id is refused', async () => {
    const source = workspaceFile('tasks/filesystem/fs-rename-me-001.json');
    const renamed = workspaceFile('tasks/filesystem/fs-renamed-001.json');
    copyFileSync(workspaceFile(CLEAN).fsPath, source.fsPath);
    writeFileSync(source.fsPath, readFileSync(source.fsPath, 'utf8').replace('"fs-bump-version-001"', '"fs-rename-me-001"'));
    try {
      const task = await vscode.workspace.openTextDocument(source);
      await vscode.window.showTextDocument(task);
      const position = positionOf(task, '"fs-rename-me-001"', 3);
      await assert.rejects(
        Promise.resolve(vscode.commands.executeCommand('vscode.executeDocumentRenameProvider', task.uri, position, 'fs-bump-version-001')),
        /already used by tasks\/filesystem\/fs-bump-version-001\.json/,
      );
      const edit = await vscode.commands.executeCommand<vscode.WorkspaceEdit>('vscode.executeDocumentRenameProvider', task.uri, position, 'fs-renamed-001');
      assert.equal(await vscode.workspace.applyEdit(edit), true);
      await waitFor('the renamed file', () => (existsSync(renamed.fsPath) ? true : undefined));
      const after = vscode.workspace.textDocuments.find((d) => d.uri.toString() === renamed.toString()) ?? (await vscode.workspace.openTextDocument(renamed));
      assert.match(after.getText(), /"id": "fs-renamed-001"/);
      await after.save();
      assert.ok(!existsSync(source.fsPath));
    } finally {
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      rmSync(source.fsPath, { force: true });
      rmSync(renamed.fsPath, { force: true });
    }
  });

  it('workspace symbols: task and template ids', async () => {
    const symbols = await vscode.commands.executeCommand<vscode.SymbolInformation[]>('vscode.executeWorkspaceSymbolProvider', 'fsfile');
    const names = symbols.map((s) => s.name);
    assert.ok(names.includes('fs-file-away'), names.join());
    const tasks = await vscode.commands.executeCommand<vscode.SymbolInformation[]>('vscode.executeWorkspaceSymbolProvider', 'bump');
    assert.ok(tasks.some((s) => s.name === 'fs-bump-version-001' && s.location.uri.path.endsWith(CLEAN)));
  });
});

describe('quick fixes and settings', () => {
  before(async () => {
    await extensionApi();
  });

  it('the add-tool quick fix is offered once and puts the tool on a line of its own', async () => {
    const task = JSON.parse(readFileSync(workspaceFile(CLEAN).fsPath, 'utf8')) as { id: string; available_tools: string[]; reference_solutions: { tool: string }[][] };
    task.id = 'fs-add-tool-001';
    const used = task.reference_solutions[0]![0]!.tool;
    task.available_tools = task.available_tools.filter((t) => t !== used);
    const document = await vscode.workspace.openTextDocument({ language: 'mcpbench-task', content: JSON.stringify(task, null, 2) + '\n' });
    try {
      await vscode.window.showTextDocument(document);
      // The task (a dev-set task) has other findings too (missing-frame-condition, information): this one's range.
      const missing = (await diagnosticsWhen(document.uri, 'tool-not-available', (d) => d.some((x) => diagnosticCode(x) === 'tool-not-available'))).find((x) => diagnosticCode(x) === 'tool-not-available');
      const actions = await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', document.uri, missing!.range, vscode.CodeActionKind.QuickFix.value);
      const adding = actions.filter((a) => a.title.includes(used) && a.title.includes('available_tools'));
      assert.equal(adding.length, 1, actions.map((a) => a.title).join(' | '));
      assert.equal(await vscode.workspace.applyEdit(adding[0]!.edit!), true);
      const lines = document.getText().split('\n');
      const added = lines.findIndex((l) => l.trim() === JSON.stringify(used));
      assert.ok(added > 0, document.getText());
      assert.equal(lines[added]!.match(/^\s*/)![0], lines[added - 1]!.match(/^\s*/)![0], 'at the indentation of the item before it');
      await diagnosticsWhen(document.uri, 'the finding to clear', (d) => !d.some((x) => diagnosticCode(x) === 'tool-not-available'));
    } finally {
      await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
    }
  });

  it('every setting accepts its default (no "URI expected" on an empty endpoint), and the Settings editor shows them', async () => {
    const properties = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON.contributes.configuration.properties as Record<string, { default: unknown; pattern?: string; format?: string }>;
    for (const [key, schema] of Object.entries(properties)) {
      assert.ok(schema.format === undefined || schema.default !== '', `${key}: an empty default fails format ${schema.format}`);
      if (schema.pattern) assert.match(String(schema.default), new RegExp(schema.pattern), key);
    }
    await vscode.commands.executeCommand('workbench.action.openSettings', '@ext:mcpbench.mcpbench-studio');
    await screenshot('settings', 3000);
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
  });
});

after(async () => {
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
});

/** Whether a container engine answers `info` here (the server's probe asks the same). */
async function engineAnswers(engine: string): Promise<boolean> {
  try {
    await promisify(execFile)(engine, ['info', '--format', 'json'], { timeout: 20_000 });
    return true;
  } catch {
    return false;
  }
}
