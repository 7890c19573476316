/** Starts the `mcpbench` CLI for the extension: which binary, which Node, which folder. */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RunEvent } from '../../server/src/engine/protocol.ts';
import { cliCommand } from './cli-args.ts';
import { execCli, startCli, type CliExecResult, type CliRun } from './cli-process.ts';
import { cliPathSetting } from './settings.ts';

export class CliLauncher {
  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly output: vscode.OutputChannel,
  ) {}

  /** The workspace folder runs are started in (their `runs/` folder goes there). */
  cwdFor(files: vscode.Uri[]): string {
    const folder = (files[0] && vscode.workspace.getWorkspaceFolder(files[0])) ?? vscode.workspace.workspaceFolders?.[0];
    return folder?.uri.fsPath ?? (files[0] ? path.dirname(files[0].fsPath) : process.cwd());
  }

  private command(args: string[], cwd: string): { command: string; args: string[] } {
    const resolved = cliCommand(cliPathSetting() ?? this.context.asAbsolutePath(path.join('dist', 'cli.js')), process.execPath, args);
    this.output.appendLine(`$ ${[resolved.command, ...resolved.args].map((a) => (/\s/.test(a) ? JSON.stringify(a) : a)).join(' ')}   (in ${cwd})`);
    return resolved;
  }

  // In desktop VS Code process.execPath is the Electron binary; this makes it behave as plain Node (and is
  // inherited by the MCP servers the CLI starts the same way). Plain Node ignores it.
  private env(): NodeJS.ProcessEnv {
    return { ...process.env, ELECTRON_RUN_AS_NODE: '1' };
  }

  /** A short command run to its end (`review list --format json` ...): what it printed and its exit code. */
  exec(args: string[], cwd: string): Promise<CliExecResult> {
    const { command, args: argv } = this.command(args, cwd);
    return execCli({ command, args: argv, cwd, env: this.env(), onStderr: (text) => this.output.append(text) });
  }

  start(args: string[], cwd: string, onEvent: (event: RunEvent) => void, onLog?: (text: string) => void): CliRun {
    const { command, args: argv } = this.command(args, cwd);
    return startCli({
      command,
      args: argv,
      cwd,
      env: this.env(),
      onEvent,
      onLog: (text) => {
        this.output.append(text);
        onLog?.(text);
      },
    });
  }
}
