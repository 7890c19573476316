/**
 * The one base of every error a user of mcpbench can see: a stable `code` (kebab-case, for scripts and the
 * editor), the exit status the `mcpbench` command ends with, the message, and where the problem is when it is
 * in a file. Adapters read these fields; nobody parses a message back. Errors that never leave the engine
 * (an episode's agent or server failure, which the run record keeps with its own code) do not derive from it.
 */

/** Exit statuses of the `mcpbench` command. */
export const EXIT_OK = 0;
/** Findings: lint errors, failing checks, anomalies, refused candidates. */
export const EXIT_FINDINGS = 1;
/** A usage or I/O error: nothing (more) was done. */
export const EXIT_USAGE = 2;
/** `mcpbench run` stopped by its cost budget before every episode ran. */
export const EXIT_BUDGET = 3;
/** `mcpbench run` finished without measuring its agent: units unresolved or missing, or every episode failed the same way. */
export const EXIT_UNMEASURED = 4;
/** Stopped by SIGINT or SIGTERM (finished work is kept). */
export const EXIT_INTERRUPTED = 130;

/** A range in a file, 0-based like LSP's. */
export interface ErrorRange {
  start: { line: number; character: number };
  end: { line: number; character: number };
}

export interface McpbenchErrorOptions extends ErrorOptions {
  /** This error's code, when it refines its class's (`QueueError`: `redis-unreachable` ...). */
  code?: string;
  /** Default: the class's `exitStatus`. */
  exitStatus?: number;
  /** The file at fault. */
  file?: string;
  /** Its 1-based line, when known without a range. */
  line?: number;
  range?: ErrorRange;
}

/** The JSON form adapters print (`mcpbench <cmd> --format json`). */
export interface ErrorJson {
  code: string;
  message: string;
  exit_status: number;
  file?: string;
  line?: number;
  range?: ErrorRange;
}

const CODE = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;

/** Whether a code is stable-looking kebab-case (`path`, `run-store`, `redis-unreachable`). */
export const isErrorCode = (code: string) => CODE.test(code);

/**
 * A user-facing error. A subclass names its code once, `static override readonly code: string = 'path'`, and its
 * exit status when it is not a usage error, `static override readonly exitStatus: number = EXIT_FINDINGS`; then
 * `new PathError(message)` carries both. test/errors.test.ts checks every error class of server/src.
 */
export class McpbenchError extends Error {
  /** The class's code (each subclass declares its own). */
  static readonly code: string = 'mcpbench';
  static readonly exitStatus: number = EXIT_USAGE;

  /** Stable, kebab-case: `path`, `run-store`, `redis-unreachable` ... */
  readonly code: string;
  readonly exitStatus: number;
  declare readonly file?: string;
  declare readonly line?: number;
  declare readonly range?: ErrorRange;

  constructor(message: string, options: McpbenchErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    const kind = new.target as typeof McpbenchError;
    const code = options.code ?? kind.code;
    if (!CODE.test(code)) throw new TypeError(`error code ${JSON.stringify(code)} is not kebab-case`);
    this.code = code;
    this.exitStatus = options.exitStatus ?? kind.exitStatus;
    if (options.file !== undefined) this.file = options.file;
    if (options.line !== undefined) this.line = options.line;
    else if (options.range) this.line = options.range.start.line + 1;
    if (options.range !== undefined) this.range = options.range;
  }

  /** The fields as JSON (not `toJSON`: JSON.stringify of an error elsewhere stays as it was). */
  toJson(): ErrorJson {
    return {
      code: this.code,
      message: this.message,
      exit_status: this.exitStatus,
      ...(this.file !== undefined ? { file: this.file } : {}),
      ...(this.line !== undefined ? { line: this.line } : {}),
      ...(this.range !== undefined ? { range: this.range } : {}),
    };
  }
}
