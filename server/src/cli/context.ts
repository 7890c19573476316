/** What every command gets: where to write, the folder it runs in, the version, and how to set its exit status. */
import { resolve } from 'node:path';

export interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  cwd: string;
}

export interface CliIo extends Io {
  /** Whether stderr is a terminal (a progress bar, else a line per episode). */
  isTTY: boolean;
}

export interface CommandContext {
  io: CliIo;
  version: string;
  setExitCode: (code: number) => void;
  /** A path given on the command line, made absolute against the folder mcpbench runs in. */
  at: (path: string) => string;
}

export function commandContext(io: Io, version: string, setExitCode: (code: number) => void): CommandContext {
  return { io: { ...io, isTTY: Boolean(process.stderr.isTTY) }, version, setExitCode, at: (path) => resolve(io.cwd, path) };
}
