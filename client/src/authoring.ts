/**
 * Onboarding and authoring commands: New Task... (pick namespaces, category, difficulty and id; `mcpbench new`
 * writes the skeleton), Generate Batch from Template... (`mcpbench generate`, then the review view), Lint a
 * Template Sample (one fresh instance opened as an untitled task, linted live), and Check This Machine
 * (`mcpbench doctor` in the output). Each one runs the CLI: the extension writes no task itself.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { CATEGORIES, DIFFICULTIES, TASK_ID_PATTERN } from '../../server/src/engine/protocol.ts';
import type { CliLauncher } from './cli-launcher.ts';
import type { ReviewSession } from './review-panel.ts';
import { TASK_LANGUAGE, TEMPLATE_LANGUAGE } from './language-client.ts';

export interface NewTaskOptions {
  namespaces: string[];
  category: (typeof CATEGORIES)[number];
  difficulty: (typeof DIFFICULTIES)[number];
  id: string;
}

export interface GenerateOptions {
  count: number;
  seed: number;
  check: boolean;
}

interface NamespaceChoice {
  name: string;
  title: string;
  description: string;
}

const CATEGORY_HELP: Record<NewTaskOptions['category'], string> = {
  'single-tool': 'one kind of tool call does the job',
  composition: 'several tools, results of one feeding the next',
  recovery: 'the agent must notice a failure and recover',
};
const DIFFICULTY_HELP: Record<NewTaskOptions['difficulty'], string> = {
  easy: 'a few calls, the goal says what to do',
  medium: 'some searching or several steps',
  hard: 'long, ambiguous, or easy to get subtly wrong',
};

/** The namespaces that run a server, from the extension's own schemas/servers/ (a namespace is its file). */
function namespaceChoices(extensionRoot: string): NamespaceChoice[] {
  const dir = path.join(extensionRoot, 'schemas', 'servers');
  return readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .flatMap((name) => {
      const file = JSON.parse(readFileSync(path.join(dir, name), 'utf8')) as { namespace?: string; title?: string; description?: string; implementation?: { kind?: string } };
      if (file.implementation?.kind === 'virtual' || !file.namespace) return [];
      return [{ name: file.namespace, title: file.title ?? file.namespace, description: file.description ?? '' }];
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}

export class Authoring {
  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly launcher: CliLauncher,
    private readonly output: vscode.LogOutputChannel,
    private readonly openReview: (uri: vscode.Uri) => Promise<ReviewSession | undefined>,
  ) {}

  register(): vscode.Disposable[] {
    return [
      vscode.commands.registerCommand('mcpbench.newTask', (options?: NewTaskOptions) => this.newTask(options)),
      vscode.commands.registerCommand('mcpbench.generateBatch', (template?: unknown, options?: GenerateOptions) => this.generateBatch(template, options)),
      vscode.commands.registerCommand('mcpbench.lintTemplateSample', (template?: unknown, seed?: number) => this.lintSample(template, seed)),
      vscode.commands.registerCommand('mcpbench.doctor', () => this.doctor()),
    ];
  }

  private folder(): vscode.WorkspaceFolder | undefined {
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!folder) void vscode.window.showWarningMessage('MCPBench: open a folder first; tasks are written into its tasks/ folder.');
    return folder;
  }

  /** Asks for what the skeleton needs (unless given), has `mcpbench new` write it, and opens it. */
  async newTask(given?: NewTaskOptions): Promise<vscode.Uri | undefined> {
    const folder = this.folder();
    if (!folder) return undefined;
    const options = given ?? (await this.askNewTask(folder));
    if (!options) return undefined;
    const result = await this.launcher.exec(
      ['new', options.id, '--server', options.namespaces.join(','), '--category', options.category, '--difficulty', options.difficulty],
      folder.uri.fsPath,
    );
    if (result.code !== 0) {
      void vscode.window.showErrorMessage(`MCPBench: ${result.stderr.replace(/^mcpbench: /, '').trim() || `mcpbench new exited with ${result.code ?? result.signal}`}`);
      return undefined;
    }
    const uri = vscode.Uri.file(path.resolve(folder.uri.fsPath, result.stdout.trim()));
    const document = await vscode.workspace.openTextDocument(uri);
    const editor = await vscode.window.showTextDocument(document);
    // The cursor on the goal: the first TODO to write.
    const goal = document.getText().indexOf('TODO:');
    if (goal >= 0) editor.selection = new vscode.Selection(document.positionAt(goal), document.positionAt(goal));
    return uri;
  }

  private async askNewTask(folder: vscode.WorkspaceFolder): Promise<NewTaskOptions | undefined> {
    const picked = await vscode.window.showQuickPick(
      namespaceChoices(this.context.extensionPath).map((ns) => ({ label: ns.name, description: ns.title, detail: ns.description, name: ns.name })),
      { title: 'New Task (1/4): the servers it uses', placeHolder: 'Pick one, or several for a cross-server task (the first is the main one)', canPickMany: true, matchOnDescription: true },
    );
    if (!picked?.length) return undefined;
    const category = await vscode.window.showQuickPick(
      CATEGORIES.map((c) => ({ label: c, description: CATEGORY_HELP[c] })),
      { title: 'New Task (2/4): category', placeHolder: 'What the task tests' },
    );
    if (!category) return undefined;
    const difficulty = await vscode.window.showQuickPick(
      DIFFICULTIES.map((d) => ({ label: d, description: DIFFICULTY_HELP[d] })),
      { title: 'New Task (3/4): difficulty' },
    );
    if (!difficulty) return undefined;
    const main = picked[0]!.name;
    let n = 1;
    const suggestion = () => `${main}-new-task-${String(n).padStart(3, '0')}`;
    while (n < 999 && existsIn(folder, main, suggestion())) n++;
    const id = await vscode.window.showInputBox({
      title: 'New Task (4/4): id',
      prompt: `Lower-case letters, digits, \`.\`, \`_\` and \`-\`; the file will be tasks/${main}/<id>.json`,
      value: suggestion(),
      validateInput: (value) => (TASK_ID_PATTERN.test(value) ? (existsIn(folder, main, value) ? `tasks/${main}/${value}.json exists already` : undefined) : 'not a task id: lower-case letters, digits, ., _ and -, starting with a letter or digit'),
    });
    if (!id) return undefined;
    return { namespaces: picked.map((p) => p.name), category: category.label as NewTaskOptions['category'], difficulty: difficulty.label as NewTaskOptions['difficulty'], id };
  }

  /** The template a command is about: its argument (a URI or a code lens's URI string), the active one, or a pick. */
  private async templateUri(argument: unknown): Promise<vscode.Uri | undefined> {
    if (argument instanceof vscode.Uri) return argument;
    if (typeof argument === 'string' && argument) return vscode.Uri.parse(argument);
    const active = vscode.window.activeTextEditor?.document;
    if (active?.languageId === TEMPLATE_LANGUAGE) return active.uri;
    const templates = await vscode.workspace.findFiles('**/*.template.json', '{**/node_modules/**,**/dist/**,**/runs/**}');
    if (!templates.length) {
      void vscode.window.showWarningMessage('MCPBench: no template grammar (*.template.json) in this workspace.');
      return undefined;
    }
    const picked = await vscode.window.showQuickPick(
      templates.map((uri) => ({ label: path.basename(uri.fsPath, '.template.json'), description: vscode.workspace.asRelativePath(uri, false), uri })),
      { title: 'Generate Batch from Template: which template' },
    );
    return picked?.uri;
  }

  /** Samples a review batch from a template with `mcpbench generate`, then opens the review view on it. */
  async generateBatch(argument?: unknown, given?: GenerateOptions): Promise<ReviewSession | undefined> {
    const template = await this.templateUri(argument);
    const folder = template && (vscode.workspace.getWorkspaceFolder(template) ?? this.folder());
    if (!template || !folder) return undefined;
    const options = given ?? (await this.askGenerate());
    if (!options) return undefined;
    const args = ['generate', template.fsPath, '--count', String(options.count), '--seed', String(options.seed), '--format', 'json', ...(options.check ? ['--check'] : [])];
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `MCPBench: generating ${options.count} variants of ${path.basename(template.fsPath)}${options.check ? ' and checking each' : ''}` },
      () => this.launcher.exec(args, folder.uri.fsPath),
    );
    let batch: string | undefined;
    try {
      batch = (JSON.parse(result.stdout) as { batch?: string }).batch;
    } catch {
      batch = undefined;
    }
    if (!batch) {
      const said = result.stderr.trim().split('\n').filter((l) => / error /.test(l) || l.startsWith('mcpbench:') || l.includes('nothing was generated'));
      void vscode.window.showErrorMessage(`MCPBench: nothing was generated: ${said.join(' ') || `mcpbench generate exited with ${result.code ?? result.signal}`}`, 'Show Problems').then((choice) => choice && vscode.commands.executeCommand('workbench.actions.view.problems'));
      return undefined;
    }
    if (result.code !== 0) void vscode.window.showWarningMessage(`MCPBench: the batch has candidates that failed lint or check; the review view shows which.`);
    return this.openReview(vscode.Uri.file(path.resolve(folder.uri.fsPath, batch)));
  }

  private async askGenerate(): Promise<GenerateOptions | undefined> {
    const count = await vscode.window.showInputBox({ title: 'Generate Batch (1/3): how many variants', value: '20', validateInput: (v) => (/^[1-9]\d{0,3}$/.test(v) ? undefined : 'a whole number from 1 to 9999') });
    if (!count) return undefined;
    const seed = await vscode.window.showInputBox({ title: 'Generate Batch (2/3): seed', prompt: 'The same seed gives the same batch, byte for byte', value: String(Math.floor(Math.random() * 1_000_000)), validateInput: (v) => (/^\d+$/.test(v) ? undefined : 'a whole number') });
    if (!seed) return undefined;
    const check = await vscode.window.showQuickPick(
      [{ label: 'Check every candidate', description: 'noop fails, references pass, counterexamples fail (slower)', check: true }, { label: 'Lint only', description: 'faster', check: false }],
      { title: 'Generate Batch (3/3): self-check' },
    );
    if (!check) return undefined;
    return { count: Number(count), seed: Number(seed), check: check.check };
  }

  /** One fresh instance of a template (a new seed each time), opened as an untitled task the linter checks live. */
  async lintSample(argument?: unknown, seed = Math.floor(Math.random() * 1_000_000)): Promise<vscode.TextDocument | undefined> {
    const template = await this.templateUri(argument);
    if (!template) return undefined;
    const scratch = mkdtempSync(path.join(tmpdir(), 'mcpbench-sample-'));
    try {
      const result = await this.launcher.exec(['generate', template.fsPath, '--count', '1', '--seed', String(seed), '--out', scratch, '--format', 'json'], path.dirname(template.fsPath));
      let sample: string | undefined;
      try {
        const { batch, manifest } = JSON.parse(result.stdout) as { batch: string; manifest: { candidates: { file: string }[] } };
        const candidate = manifest.candidates[0];
        if (candidate) sample = readFileSync(path.resolve(path.dirname(template.fsPath), batch, candidate.file), 'utf8');
      } catch {
        sample = undefined;
      }
      if (!sample) {
        void vscode.window.showErrorMessage(`MCPBench: no sample of ${path.basename(template.fsPath)}: the template has errors (see Problems).`, 'Show Problems').then((choice) => choice && vscode.commands.executeCommand('workbench.actions.view.problems'));
        return undefined;
      }
      const document = await vscode.workspace.openTextDocument({ language: TASK_LANGUAGE, content: sample });
      await vscode.window.showTextDocument(document, { preview: false });
      return document;
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }

  /** `mcpbench doctor` in the output channel: the sandbox backends that work here, every server started once. */
  async doctor(): Promise<number | null> {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? this.context.extensionPath;
    this.output.show(true);
    this.output.appendLine('MCPBench: checking this machine (mcpbench doctor)...');
    const result = await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: 'MCPBench doctor' }, () => this.launcher.exec(['doctor'], folder));
    for (const line of result.stdout.split('\n')) if (line.trim()) this.output.appendLine(line);
    void (result.code === 0
      ? vscode.window.showInformationMessage('MCPBench: this machine is ready (details in the MCPBench output).')
      : vscode.window.showWarningMessage('MCPBench: doctor found problems; the MCPBench output says what to install or change.', 'Show Output').then((c) => c && this.output.show()));
    return result.code;
  }
}

function existsIn(folder: vscode.WorkspaceFolder, namespace: string, id: string): boolean {
  try {
    readFileSync(path.join(folder.uri.fsPath, 'tasks', namespace, `${id}.json`));
    return true;
  } catch {
    return false;
  }
}
