/**
 * One harness for the namespace tool tests: a namespace's real MCP server on a sandbox seeded from a state,
 * as the runner starts it (seedNamespace, the server, snapshotNamespace), with a typed `call(tool, args)`, the
 * `state()` it leaves and a cleanup.
 *
 * Two ways to run the server:
 * - `memory` (the default): the server the `serve` entry builds (createSimulationServer, or the runtime's
 *   createServer), in this process, over an in-memory transport that serialises every message as stdio
 *   does. A simulation's tool handlers are watched as they run: each must leave its input state untouched,
 *   answer plain JSON, and return a new state that passes the state schema, is already normalised and comes
 *   back unchanged through state.json. A broken rule fails the call that broke it.
 * - `process`: the runner's own start (runner/launch.ts, `process` backend): dist/serve.js, or the official
 *   server of an `npm` namespace, in a child process over stdio. Needs `npm run build`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { splitQualified } from '../../server/src/mcp/names.ts';
import type { NamespacePlugin, ToolHandler, ToolOutcome } from '../../server/src/mcp/namespace.ts';
import { loadRegistry, type NamespaceInfo } from '../../server/src/mcp/registry.ts';
import { packageRoot } from '../../server/src/paths.ts';
import { createSimulationServer } from '../../server/src/mcp/simulation.ts';
import { startServer } from '../../server/src/runner/launch.ts';
import { seedNamespace, snapshotNamespace } from '../../server/src/runner/state.ts';
import { evaluate, stateLeafEvaluator } from '../../server/src/predicates/evaluate.ts';
import { parsePredicate } from '../../server/src/predicates/tree.ts';
import { createAjv } from '../../server/src/ajv.ts';

/** A tool result as tests read it: any JSON. */
export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface ToolReply {
  /** A refusal the agent reads (the namespace's ToolError, an unknown tool, arguments the schema refuses). */
  isError: boolean;
  /** The text the agent reads. */
  text: string;
  /** The structured result; else the text read as JSON when it is JSON; else the text. */
  result: Json;
}

export interface NamespaceSession<State> {
  /**
   * Calls a tool by its bare name, as the gateway forwards it. The tool must be declared and the arguments
   * must pass its input schema (so a refusal a test expects is the tool's, not the schema's); `unchecked`
   * sends anything.
   */
  call(tool: string, args?: Record<string, unknown>, options?: { unchecked?: boolean }): Promise<ToolReply>;
  listTools(): Promise<Tool[]>;
  /**
   * The state in the sandbox, read out of band as the runner snapshots it. A simulation is read between
   * calls; any other server is stopped first (its backend is read only while no server runs on it).
   */
  state(): Promise<State>;
  /** Stops the server and removes the sandbox; safe to call twice. */
  close(): Promise<void>;
}

export interface StartOptions {
  /** `memory` (default) or `process`: see the top of this file. */
  via?: 'memory' | 'process';
}

const VERSION = '0.0.0-test';
const ajv = createAjv();

interface Connection {
  callTool(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
  listTools(): Promise<Tool[]>;
  close(): Promise<void>;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** The rules every simulated tool call keeps, checked around the namespace's own handler. */
function watched(info: NamespaceInfo, plugin: NamespacePlugin, name: string, handler: ToolHandler<unknown>, broken: (error: unknown) => void): ToolHandler<unknown> {
  return (args, state) => {
    const copy = structuredClone(state);
    deepFreeze(state);
    let outcome: ToolOutcome<unknown>;
    try {
      outcome = handler(args, state);
    } finally {
      if (!isDeepStrictEqual(state, copy)) broken(new assert.AssertionError({ message: `${name} changed its input state`, actual: state, expected: copy, operator: 'deepStrictEqual' }));
    }
    try {
      assert.deepEqual(JSON.parse(JSON.stringify(outcome.result)), outcome.result, `${name}: result is not plain JSON`);
      if (outcome.state !== undefined) {
        assert.ok(info.validateState(outcome.state), `${name}: new state fails the schema: ${ajv.errorsText(info.validateState.errors)}`);
        assert.deepEqual(plugin.normalizeState(structuredClone(outcome.state)), outcome.state, `${name}: new state is not normalised`);
        const text = JSON.stringify(outcome.state);
        assert.equal(JSON.stringify(plugin.normalizeState(JSON.parse(text))), text, `${name}: new state changes through state.json`);
      }
    } catch (error) {
      broken(error);
    }
    return outcome;
  };
}

/** Both ends of an in-memory link, each message serialised on the way as stdio would (no shared objects, no undefined). */
function serialisedPair(): [InMemoryTransport, InMemoryTransport] {
  const pair = InMemoryTransport.createLinkedPair();
  for (const transport of pair) {
    const send = transport.send.bind(transport);
    transport.send = (message, options) => send(JSON.parse(JSON.stringify(message)), options);
  }
  return pair;
}

async function inProcess(info: NamespaceInfo, sandbox: string, broken: (error: unknown) => void): Promise<Connection> {
  const plugin = info.plugin;
  let server: Server;
  if (plugin?.tools) {
    const tools = Object.fromEntries(Object.entries(plugin.tools).map(([name, handler]) => [name, watched(info, plugin, name, handler, broken)]));
    // The namespace as the registry has it, with its handlers watched.
    server = createSimulationServer(Object.create(info, { plugin: { value: { ...plugin, tools } } }), sandbox, VERSION);
  } else if (plugin?.runtime?.createServer) {
    server = await plugin.runtime.createServer(sandbox, VERSION);
  } else {
    throw new Error(`${info.namespace} has no server that runs in this process: start it with { via: 'process' }`);
  }
  const [clientSide, serverSide] = serialisedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'mcpbench-harness', version: VERSION });
  await client.connect(clientSide);
  return {
    callTool: async (name, args) => (await client.callTool({ name, arguments: args })) as CallToolResult,
    listTools: async () => (await client.listTools()).tools,
    close: async () => {
      await client.close();
      await server.close();
    },
  };
}

function replyOf(result: CallToolResult): ToolReply {
  const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
  const isError = result.isError === true;
  let value: unknown = result.structuredContent;
  if (value === undefined) {
    try {
      value = JSON.parse(text);
    } catch {
      value = text;
    }
  }
  return { isError, text, result: value as Json };
}

/** Starts `namespace`'s server on a fresh sandbox seeded with `seed` (as a task file holds it; undefined: the empty state). */
export async function startNamespace<State = Json>(namespace: string, seed: unknown, options: StartOptions = {}): Promise<NamespaceSession<State>> {
  const info = (await loadRegistry()).get(namespace);
  assert.ok(info, `unknown namespace ${namespace}`);
  const sandbox = mkdtempSync(join(tmpdir(), `mcpbench-harness-${namespace}-`));
  let connection: Connection | undefined;
  const broken: unknown[] = [];
  let closed = false;
  const stop = async () => {
    const open = connection;
    connection = undefined;
    await open?.close();
  };
  const close = async () => {
    if (closed) return;
    closed = true;
    try {
      await stop();
    } finally {
      rmSync(sandbox, { recursive: true, force: true });
    }
  };
  try {
    // Through JSON, as a task file would give it.
    await seedNamespace(info, seed === undefined ? undefined : JSON.parse(JSON.stringify(seed)), sandbox);
    connection =
      options.via === 'process'
        ? await startServer(info, sandbox, { backend: 'process', startTimeoutMs: 60_000 })
        : await inProcess(info, sandbox, (error) => broken.push(error));
  } catch (error) {
    await close();
    throw error;
  }
  const live = (): Connection => {
    assert.ok(connection, `the ${namespace} server was stopped (state() stops a server that is not a simulation)`);
    return connection;
  };
  /** A rule a handler broke during the call fails the call, whatever the server answered. */
  const watch = async <T>(work: Promise<T>): Promise<T> => {
    let value: T;
    try {
      value = await work;
    } catch (error) {
      if (broken.length > 0) throw broken.splice(0)[0];
      throw error;
    }
    if (broken.length > 0) throw broken.splice(0)[0];
    return value;
  };
  return {
    async call(tool, args = {}, callOptions = {}) {
      if (!callOptions.unchecked) {
        const declared = info.tools.get(tool);
        assert.ok(declared, `${namespace}.${tool} is not declared`);
        assert.ok(declared.validateInput(args), `${tool} ${JSON.stringify(args)}: ${ajv.errorsText(declared.validateInput.errors)}`);
      }
      return replyOf(await watch(live().callTool(tool, args)));
    },
    listTools: () => live().listTools(),
    async state() {
      if (!info.plugin?.tools) await stop();
      return (await snapshotNamespace(info, sandbox)) as State;
    },
    close,
  };
}

export interface OneCall<State> extends ToolReply {
  /** The state the call left. */
  state: State;
  /** Whether that differs from the seeded state. */
  changed: boolean;
}

/** One call that must succeed, on a fresh server seeded with `seed`: its reply and the state it leaves. */
export async function callOnce<State = Json>(namespace: string, seed: unknown, tool: string, args: Record<string, unknown> = {}): Promise<OneCall<State>> {
  const session = await startNamespace<State>(namespace, seed);
  try {
    const before = await session.state();
    const reply = await session.call(tool, args);
    assert.equal(reply.isError, false, `${tool} refused: ${reply.text}`);
    const state = await session.state();
    return { ...reply, state, changed: !isDeepStrictEqual(state, before) };
  } finally {
    await session.close();
  }
}

/** Asserts that `tool` refuses `args` on a fresh server seeded with `seed`, with a message matching `message`, and changes nothing. */
export async function assertRefuses(namespace: string, seed: unknown, tool: string, args: Record<string, unknown>, message: RegExp): Promise<void> {
  const session = await startNamespace(namespace, seed);
  try {
    const before = await session.state();
    const reply = await session.call(tool, args);
    assert.equal(reply.isError, true, `${tool} ${JSON.stringify(args)} was not refused: ${reply.text}`);
    assert.match(reply.text, message);
    assert.deepEqual(await session.state(), before, `${tool}: the refused call changed the state`);
  } finally {
    await session.close();
  }
}

export interface Step {
  tool?: string;
  arguments?: Record<string, unknown>;
  answer?: string;
}

export interface Replay {
  /** Each namespace's end state. */
  states: Record<string, unknown>;
  answer: string | undefined;
  /** `<tool>: <message>` of every refused call. */
  refusals: string[];
}

/**
 * Replays a solution's steps as an agent's calls, each through its namespace's server (one per namespace,
 * seeded from `initialState`); a refused call is recorded and the sequence goes on, as an agent's would.
 */
export async function replay(namespaces: readonly string[], initialState: Record<string, unknown>, steps: readonly Step[], options: StartOptions = {}): Promise<Replay> {
  const sessions = new Map<string, NamespaceSession<unknown>>();
  try {
    for (const ns of namespaces) sessions.set(ns, await startNamespace(ns, initialState[ns], options));
    let answer: string | undefined;
    const refusals: string[] = [];
    for (const step of steps) {
      if (step.tool === undefined) {
        answer = step.answer;
        continue;
      }
      const [ns, name] = splitQualified(step.tool);
      const session = sessions.get(ns);
      assert.ok(session && name !== undefined, `${step.tool} is not a tool of ${namespaces.join(', ')}`);
      const reply = await session.call(name, step.arguments ?? {});
      if (reply.isError) refusals.push(`${step.tool}: ${reply.text}`);
    }
    const states: Record<string, unknown> = {};
    for (const [ns, session] of sessions) states[ns] = await session.state();
    return { states, answer, refusals };
  } finally {
    for (const session of sessions.values()) await session.close();
  }
}

/** A task's success predicate on a replay's end states and answer, with the engine's own evaluation. */
export async function judge(predicate: unknown, run: Pick<Replay, 'states' | 'answer'>): Promise<boolean | undefined> {
  const registry = await loadRegistry();
  return evaluate(parsePredicate(predicate, ['success_predicate']), stateLeafEvaluator(registry, run.states, run.answer)).value;
}

interface FixtureTask {
  id: string;
  server: string | string[];
  initial_state: Record<string, unknown>;
  success_predicate: unknown;
  reference_solutions: Step[][];
  counterexamples?: Step[][];
}

/**
 * The tests of a namespace's tasks in test/fixtures/tasks/<ns>: there are some, and each task's reference
 * solutions, replayed through its namespaces' servers, pass; its counterexamples fail. `noRefusals`: a
 * reference solution must also pass without a refused call.
 */
export function testFixtureTasks(namespace: string, options: { noRefusals?: boolean } = {}): void {
  const dir = join(packageRoot(), 'test', 'fixtures', 'tasks', namespace);
  const files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();

  test('the namespace has tasks to replay', () => {
    assert.ok(files.length > 0);
  });

  for (const file of files) {
    const task = JSON.parse(readFileSync(join(dir, file), 'utf8')) as FixtureTask;
    const namespaces = [task.server].flat();
    const run = async (steps: Step[]) => {
      const replayed = await replay(namespaces, task.initial_state, steps);
      return { value: await judge(task.success_predicate, replayed), refusals: replayed.refusals };
    };
    const name = options.noRefusals ? 'reference solutions pass with no refused call and counterexamples fail' : 'reference solutions pass and counterexamples fail';
    test(`${task.id}: ${name}`, async () => {
      for (const [i, steps] of task.reference_solutions.entries()) {
        const { value, refusals } = await run(steps);
        if (options.noRefusals) assert.deepEqual(refusals, [], `reference solution ${i} had refused calls`);
        assert.equal(value, true, options.noRefusals ? `reference solution ${i} fails` : `reference solution ${i} fails (refusals: ${refusals.join(' | ') || 'none'})`);
      }
      for (const [i, steps] of (task.counterexamples ?? []).entries()) {
        assert.equal((await run(steps)).value, false, `counterexample ${i} passes`);
      }
    });
  }
}
