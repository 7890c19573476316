/**
 * The contract of a server namespace plug-in. A namespace is `schemas/servers/<ns>.json` (tools, predicates,
 * state schema: data every adapter reads) plus `server/src/mcp/<ns>/index.ts` (code), which default-exports
 * `defineNamespace({...})`. Adding a namespace touches nothing else: the registry finds both by name.
 *
 * State: `initial_state.<ns>` and the snapshot a server yields after a run have one shape, the namespace's
 * state schema, so a predicate is a pure function of that state. The linter uses this to evaluate a task's
 * predicate on its initial state (a task that passes before the agent acts is broken).
 */

/** What a predicate sees: its namespace's state (validated and normalised) and the agent's final answer. */
export interface PredicateContext<State> {
  state: State;
  /** The agent's final text answer; undefined when it gave none. */
  answer: string | undefined;
  /** The namespace's initial state, in the same form as `state`, when the evaluation has it (the runner and the linter do). */
  initial?: State;
  /** The end state the task's first reference solution leaves, same form, when the evaluation has it. */
  reference?: State;
}

/** A predicate's result: its value and the evidence it looked at (JSON-serialisable, shown in reports). */
export interface Verdict {
  value: boolean;
  evidence: unknown;
}

// Arguments have been validated against the predicate's declared argument schema before the call.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type PredicateFunction<State> = (args: any, context: PredicateContext<State>) => Verdict;

/**
 * A tool of a simulated server (kind `simulation` in its namespace file) as a pure function of the state:
 * the arguments (already validated against the tool's input schema) and the current state in, the new state
 * and the result the agent sees out. The shared harness (simulation.ts) serves the declared tools over MCP,
 * persists the state in the sandbox, and turns a thrown ToolError into an `isError` result.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type ToolHandler<State> = (args: any, state: State) => ToolOutcome<State>;

export interface ToolOutcome<State> {
  /** The state after the call; omit when the call changed nothing (reads). */
  state?: State;
  /** JSON-serialisable result: sent as text (pretty JSON) and as structuredContent when it is an object. */
  result: unknown;
}

/** A refusal by the domain's rules (a taken slot, an expired coupon): the agent sees the message as an error. */
export class ToolError extends Error {}

/**
 * The server side of a namespace that is not a pure simulation (`builtin`: git, Postgres; `npm`: the
 * official servers). Seeding and snapshotting work on the sandbox directory directly, never through the
 * agent's tools, and always while no server runs on it.
 */
export interface NamespaceRuntime<State> {
  /** Builds the initial state (already schema-valid and normalised) into an empty sandbox directory. */
  seed(state: State, sandbox: string): Promise<void>;
  /** Reads the end state out of the sandbox; the result has the shape of the state schema. */
  snapshot(sandbox: string): Promise<State>;
  /** `builtin` namespaces: the MCP server over the sandbox, served by `mcpbench serve <ns> --dir`. */
  createServer?(sandbox: string, version: string): Promise<import('@modelcontextprotocol/sdk/server/index.js').Server>;
  /**
   * `npm` namespaces: the command that starts the official server on the sandbox (stdio); `bundled: false`
   * starts the package's own entry even when the build bundled it (dist/npm/<ns>.mjs).
   */
  launch?(sandbox: string, options?: { bundled?: boolean }): { command: string; args: string[]; env?: Record<string, string> };
  /**
   * A server that must reach a service of the user's (a database server) says so for a seeded sandbox: it
   * then shares the host's network and gets these variables, which are otherwise never passed to a server.
   */
  network?(sandbox: string): { env: Record<string, string> } | undefined;
  /**
   * Builds a state from a file in the backend's own format (Postgres: a SQL script), by loading it into a
   * fresh backend in the empty folder `scratch` and reading it back: `mcpbench state <ns> --from FILE`.
   */
  stateFrom?(text: string, scratch: string): Promise<State>;
}

export interface NamespacePlugin<State = unknown> {
  namespace: string;
  /**
   * Turns a state that passed the state schema (or is absent: `undefined`) into the form the predicates
   * read, filling defaults. Must not throw on schema-valid input.
   */
  normalizeState(state: unknown): State;
  /** One function per predicate declared in the namespace file, by bare name (`fileExists`). */
  predicates: Record<string, PredicateFunction<State>>;
  /** For simulations: one handler per tool declared in the namespace file, by bare name (`book_meeting`). */
  tools?: Record<string, ToolHandler<State>>;
  /** For `builtin` and `npm` namespaces: seed, snapshot and the server. */
  runtime?: NamespaceRuntime<State>;
}

export function defineNamespace<State>(plugin: NamespacePlugin<State>): NamespacePlugin<State> {
  return plugin;
}
