/**
 * The gateway: the only MCP server an agent talks to. It exposes exactly the task's `available_tools` as
 * `<ns>_<tool>`, forwards calls to the sandboxed namespace servers, injects the faults of faults.ts, enforces
 * `max_steps`, and records every call in order (the episode's trace).
 *
 * Transports: streamable HTTP on 127.0.0.1 (random port) and stdio, any number of connections at once, all
 * sharing one trace and one budget. HTTP is stateful: each `initialize` opens a session with its own SDK
 * `Server` and transport, so an agent that reconnects (or runs several clients) simply gets another session;
 * responses are plain JSON rather than SSE, since nothing here streams. Only loopback Host headers are
 * accepted, so a web page cannot reach the gateway by DNS rebinding.
 *
 * Tools are listed without their outputSchema: SDK clients validate structuredContent against it and would
 * turn PartialResponse and SchemaDrift (faults that break the declared shape on purpose) into client-side
 * exceptions, which is not what a drifting real API does to an agent.
 *
 * Call numbering: every call gets the next index on arrival (unlisted and over-budget calls included), and
 * the fault decision for a call is keyed by that index; the trace of an agent whose calls do not depend on
 * timing is therefore the same byte for byte (apart from latency_ms) under the same seed. The one timed
 * fault state is the SoftRateLimit window: an agent that waits the advertised retry_after_ms before retrying
 * always lands after it.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { Readable, Writable } from 'node:stream';
import canonicalize from 'canonicalize';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, type CallToolResult, type JSONRPCMessage, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { type Registry, splitQualified } from '../mcp/registry.ts';
import type { Task } from '../tasks/model.ts';
import { exposedName } from './agents/agent.ts';
import { decideFault, driftText, driftValue } from './faults.ts';
import { ServerError, type RunningServer } from './launch.ts';
import { type FaultProfile, type FaultType, DEFAULT_FAULT_OPTIONS, type FaultOptions } from '../record/faults.ts';
import type { CallRecord, CallStatus, InjectedFault } from '../record/schema.ts';
import type { CallStart } from './events.ts';

export interface GatewayFaults {
  profile: FaultProfile;
  /** The run seed. */
  seed: number;
  trial: number;
  options?: Partial<FaultOptions>;
}

/**
 * A namespace's server: started, or started when the first call needs it. Episodes start the servers of a
 * distractor namespace only if the agent calls one of its tools (most agents never do, and a server start is
 * most of an episode's cost); such a first call's latency includes the start.
 */
export type ServerHandle = RunningServer | (() => Promise<RunningServer>);

export interface GatewayOptions {
  task: Task;
  registry: Registry;
  /** A server for every namespace that has a tool in `available_tools` (distractors included). */
  servers: ReadonlyMap<string, ServerHandle>;
  /** Default: no faults. */
  faults?: GatewayFaults;
  /** Called as each call arrives, before it is forwarded or faulted (a call in flight). */
  onCallStarted?: (call: CallStart) => void;
  /** Called as each call finishes, in finishing order (indices say the arrival order). */
  onCall?: (call: CallRecord) => void;
  /** Called once when the agent goes CALLS_PAST_BUDGET calls past max_steps: the episode should end. */
  onRunaway?: (message: string) => void;
}

/**
 * Calls an agent may make past `max_steps` (unlisted and refused calls included) before the gateway stops
 * answering and ends the episode: a runaway loop costs bounded time and a bounded trace.
 */
export const CALLS_PAST_BUDGET = 20;
/** Requests an agent on the gateway's stdio may have unanswered before the gateway stops reading more. */
export const STDIO_MAX_IN_FLIGHT = 64;
/** Bytes of replies waiting for an agent on the gateway's stdio to read them before the gateway stops reading requests. */
export const STDIO_MAX_QUEUED_BYTES = 4 * 1024 * 1024;
/** An argument or result bigger than this (as JSON) is recorded as its size, hash and head only. */
export const MAX_RECORDED_JSON = 64 * 1024;

export interface GatewayCounts {
  /** Calls to listed tools that were forwarded or faulted: what counts against max_steps. */
  tool_calls: number;
  /** Calls to tools the task does not list (hallucinated tools). */
  unlisted: number;
  /** Calls refused because the budget was spent. */
  over_budget: number;
  /** Calls whose answer the agent saw as an error: isError or a JSON-RPC error, injected or not. */
  errors_seen: number;
}

interface ExposedTool {
  qualified: string;
  namespace: string;
  name: string;
  readOnly: boolean;
  tool: Tool;
}

/** An answer to the agent: a tool result, or a JSON-RPC error (transport-level failures). */
type Answer = { result: CallToolResult } | { error: { code: number; message: string } };

interface Outcome {
  status: CallStatus;
  fault?: InjectedFault;
  /** The fault the seeded generator decided for this call (delivered or not: `fault` says what was). */
  decided?: FaultType;
  answer: Answer;
}

type Forwarded = { ok: true; result: CallToolResult } | { ok: false; outcome: Outcome };

/** Raised inside handlers when the gateway closed while a call was pending: answered, never recorded. */
class GatewayClosed extends Error {}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

export class Gateway {
  /** The tools as the agent sees them, in `available_tools` order. */
  readonly tools: Tool[];
  private readonly exposed = new Map<string, ExposedTool>();
  private readonly task: Task;
  private readonly servers: ReadonlyMap<string, ServerHandle>;
  private readonly profile: FaultProfile | undefined;
  private readonly seed: number;
  private readonly trial: number;
  private readonly options: FaultOptions;
  private readonly onCallStarted: ((call: CallStart) => void) | undefined;
  private readonly onCall: ((call: CallRecord) => void) | undefined;
  private readonly onRunaway: ((message: string) => void) | undefined;
  private runawayMessage: string | undefined;

  private nextIndex = 0;
  private budgetUsed = 0;
  private readonly records: CallRecord[] = [];
  private readonly counters: GatewayCounts = { tool_calls: 0, unlisted: 0, over_budget: 0, errors_seen: 0 };
  private firstInfraError: ServerError | undefined;

  // Fault state of the episode.
  private readonly softUntil = new Map<string, { until: number; origin: number }>();
  private readonly hardSince = new Map<string, number>();
  private cascade: { left: number; origin: number; done: number } | undefined;
  /** Genuine successful results of read tools, for StaleData, in call order. */
  private readonly history = new Map<string, { argsKey: string; index: number; result: CallToolResult }[]>();

  private http: HttpServer | undefined;
  /** Servers on Unix sockets (a confined agent's way in). */
  private readonly socketServers: HttpServer[] = [];
  private readonly sessions = new Map<string, StreamableHTTPServerTransport>();
  private readonly connected = new Set<{ close(): Promise<void> }>();
  private readonly sleepers = new Set<() => void>();
  private closed = false;

  constructor(options: GatewayOptions) {
    this.task = options.task;
    this.servers = options.servers;
    this.profile = options.faults?.profile;
    this.seed = options.faults?.seed ?? 0;
    this.trial = options.faults?.trial ?? 0;
    this.options = { ...DEFAULT_FAULT_OPTIONS, ...options.faults?.options };
    this.onCallStarted = options.onCallStarted;
    this.onCall = options.onCall;
    this.onRunaway = options.onRunaway;
    this.tools = [];
    for (const qualified of new Set(options.task.available_tools)) {
      const info = options.registry.tool(qualified);
      if (!info) throw new Error(`task ${options.task.id}: available tool ${qualified} is not declared by any namespace`);
      const [namespace, name] = splitQualified(qualified);
      if (!options.servers.has(namespace)) {
        throw new Error(`task ${options.task.id}: no running server for namespace "${namespace}" (needed by ${qualified} in available_tools)`);
      }
      const d = info.declaration;
      const tool: Tool = {
        name: exposedName(qualified),
        ...(d.title !== undefined && { title: d.title }),
        description: d.description,
        inputSchema: d.inputSchema as Tool['inputSchema'],
        ...(d.annotations !== undefined && { annotations: d.annotations }),
      };
      this.tools.push(tool);
      this.exposed.set(tool.name, { qualified, namespace, name: name!, readOnly: d.annotations?.readOnlyHint === true, tool });
    }
  }

  // ---- Transports ------------------------------------------------------------------------------------------

  /** Serves streamable HTTP on 127.0.0.1 at a random port; the URL ends in `/mcp`. */
  async listen(): Promise<{ url: string }> {
    if (this.closed) throw new Error('the gateway is closed');
    if (!this.http) {
      const http = this.httpServer();
      this.http = http;
      await new Promise<void>((resolve, reject) => {
        http.once('error', reject);
        http.listen(0, '127.0.0.1', () => resolve());
      });
    }
    const port = (this.http.address() as { port: number }).port;
    return { url: `http://127.0.0.1:${port}/mcp` };
  }

  /** Serves streamable HTTP on a Unix socket too (bound into a confined agent's sandbox). */
  async listenSocket(path: string): Promise<void> {
    if (this.closed) throw new Error('the gateway is closed');
    const server = this.httpServer();
    this.socketServers.push(server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => resolve());
    });
  }

  private httpServer(): HttpServer {
    return createServer((req, res) => {
      this.handleHttp(req, res).catch((error: unknown) => {
        if (!res.headersSent) jsonRpcHttpError(res, 500, ErrorCode.InternalError, `gateway error: ${(error as Error).message}`);
        else res.end();
      });
    });
  }

  /**
   * One MCP connection inside this process: the client's end of a linked in-memory pair whose other end this
   * gateway serves, exactly as it serves an HTTP session or a process's stdio.
   */
  async connectInProcess(): Promise<Transport> {
    if (this.closed) throw new Error('the gateway is closed');
    const [client, transport] = InMemoryTransport.createLinkedPair();
    await this.serveTransport(transport);
    return client;
  }

  /** Serves one MCP connection on `transport` with an SDK server of its own, stopped with the gateway. */
  private async serveTransport(transport: Transport): Promise<void> {
    const server = this.createMcpServer();
    this.connected.add(server);
    transport.onclose = () => this.connected.delete(server);
    await server.connect(transport);
  }

  /**
   * Serves one MCP connection over a pair of streams (an agent process's stdout and stdin), with backpressure:
   * while STDIO_MAX_IN_FLIGHT requests are unanswered, or STDIO_MAX_QUEUED_BYTES of replies wait for the agent
   * to read them, the gateway reads no further request (an agent that writes requests and never reads its
   * replies holds bounded memory of the runner's, not one reply per request).
   */
  async serveStdio(streams: { stdin: Readable; stdout: Writable }): Promise<void> {
    if (this.closed) throw new Error('the gateway is closed');
    const { stdin, stdout } = streams;
    let inFlight = 0;
    const full = () => inFlight >= STDIO_MAX_IN_FLIGHT || stdout.writableLength >= STDIO_MAX_QUEUED_BYTES;
    const settle = () => {
      if (full()) stdin.pause();
      else if (stdin.isPaused()) stdin.resume();
    };
    stdout.on('drain', settle);
    const transport = new StdioServerTransport(stdin, stdout);
    const send = transport.send.bind(transport);
    // A reply (an id and no method) settles a request; the SDK's send waits for a drain, the reading does not.
    transport.send = (message: JSONRPCMessage) => {
      if ('id' in message && !('method' in message)) inFlight = Math.max(0, inFlight - 1);
      const sent = send(message);
      settle();
      return sent;
    };
    await this.serveTransport(transport);
    const deliver = transport.onmessage;
    transport.onmessage = (message: JSONRPCMessage) => {
      if ('method' in message && 'id' in message) {
        inFlight++;
        settle();
      }
      deliver?.(message);
    };
  }

  private async handleHttp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/mcp') return void jsonRpcHttpError(res, 404, ErrorCode.InvalidRequest, 'not found: the MCP endpoint is /mcp');
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    if (!LOOPBACK_HOSTS.has(host)) return void jsonRpcHttpError(res, 403, ErrorCode.InvalidRequest, `forbidden host ${JSON.stringify(req.headers.host)}`);
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const transport = this.sessions.get(sessionId);
      if (!transport) return void jsonRpcHttpError(res, 404, ErrorCode.InvalidRequest, 'session not found: initialize a new session');
      return transport.handleRequest(req, res);
    }
    if (req.method !== 'POST') return void jsonRpcHttpError(res, 400, ErrorCode.InvalidRequest, 'no session: POST an initialize request first');
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) => void this.sessions.set(id, transport),
      onsessionclosed: (id) => void this.sessions.delete(id),
    });
    const server = this.createMcpServer();
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
      this.connected.delete(server);
    };
    this.connected.add(server);
    await server.connect(transport);
    await transport.handleRequest(req, res);
    // Anything but an initialize request is refused without a session: do not keep its server around.
    if (!transport.sessionId) await server.close();
  }

  /** One SDK server per connection; they all share this gateway's trace, budget and fault state. */
  private createMcpServer(): Server {
    const server = new Server({ name: 'mcpbench-gateway', version: '0.1.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: this.tools }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      const answer = await this.call(request.params.name, request.params.arguments ?? {});
      if ('error' in answer) throw Object.assign(new Error(answer.error.message), { code: answer.error.code });
      return answer.result;
    });
    return server;
  }

  // ---- Calls -----------------------------------------------------------------------------------------------

  /** Handles one `tools/call` from any transport; exposed for in-process agents and tests. */
  async call(name: string, args: Record<string, unknown>): Promise<Answer> {
    const index = this.nextIndex++;
    const limit = this.task.max_steps + CALLS_PAST_BUDGET;
    if (index >= limit) {
      // Past the runaway limit nothing is recorded or forwarded; the episode is being ended.
      if (this.runawayMessage === undefined) {
        this.runawayMessage = `the agent made ${limit} tool calls, ${CALLS_PAST_BUDGET} past max_steps (${this.task.max_steps}), and kept calling: the episode was ended`;
        this.onRunaway?.(this.runawayMessage);
      }
      return { error: { code: ErrorCode.InvalidRequest, message: `Call limit reached: ${this.runawayMessage}.` } };
    }
    const started = performance.now();
    const tool = this.exposed.get(name);
    this.onCallStarted?.({ index, tool: name, ...(tool && { qualified: tool.qualified }), arguments: args, started_at: new Date().toISOString() });
    let outcome: Outcome;
    try {
      outcome = await this.handle(index, tool, name, args);
    } catch (error) {
      if (error instanceof GatewayClosed) return { error: { code: ErrorCode.ConnectionClosed, message: 'the gateway closed: the episode is over' } };
      throw error;
    }
    const answer = outcome.answer;
    const record: CallRecord = {
      index,
      tool: name,
      ...(tool && { qualified: tool.qualified }),
      arguments: bounded(args),
      status: outcome.status,
      ...(outcome.fault && { fault: outcome.fault }),
      ...(outcome.decided && { decided: outcome.decided }),
      result: bounded('error' in answer ? { error: answer.error } : answer.result),
      latency_ms: Math.round((performance.now() - started) * 1000) / 1000,
    };
    this.records.push(record);
    if (outcome.status === 'unlisted') this.counters.unlisted++;
    else if (outcome.status === 'over-budget') this.counters.over_budget++;
    else this.counters.tool_calls++;
    if ('error' in answer || answer.result.isError === true) this.counters.errors_seen++;
    this.onCall?.(record);
    return answer;
  }

  private async handle(index: number, tool: ExposedTool | undefined, name: string, args: Record<string, unknown>): Promise<Outcome> {
    if (!tool) {
      const available = this.tools.map((t) => t.name).join(', ');
      return { status: 'unlisted', answer: toolError(`Unknown tool "${name}": it is not available in this task. The available tools are: ${available}.`) };
    }
    if (this.budgetUsed >= this.task.max_steps) {
      return {
        status: 'over-budget',
        answer: toolError(`Step budget exhausted: this task allows ${this.task.max_steps} tool calls. The call was not executed.`),
      };
    }
    this.budgetUsed++;
    const ns = tool.namespace;

    // Fault state carried over from earlier calls comes first: it is what the failing service does anyway.
    const hard = this.hardSince.get(ns);
    if (hard !== undefined) return this.hardRateLimited(ns, `the ${ns} namespace is rate-limited since call ${hard}`);
    if (this.cascade && this.cascade.left > 0) {
      this.cascade.left--;
      this.cascade.done++;
      return this.cascading(ns, `cascade ${this.cascade.done} of ${this.options.cascadeLength} after call ${this.cascade.origin}`);
    }
    const soft = this.softUntil.get(ns);
    if (soft !== undefined && this.options.now() < soft.until) {
      return this.rateLimited(ns, `within the retry-after window of call ${soft.origin}`);
    }

    const type = this.profile ? decideFault(this.profile, { seed: this.seed, taskId: this.task.id, trial: this.trial, callIndex: index }) : undefined;
    if (type === undefined) return this.plain(index, tool, args);
    return { ...(await this.inject(type, index, tool, args)), decided: type };
  }

  private async plain(index: number, tool: ExposedTool, args: Record<string, unknown>): Promise<Outcome> {
    const forwarded = await this.forward(index, tool, args);
    if (!forwarded.ok) return forwarded.outcome;
    return { status: forwarded.result.isError === true ? 'tool-error' : 'ok', answer: { result: forwarded.result } };
  }

  private async inject(type: FaultType, index: number, tool: ExposedTool, args: Record<string, unknown>): Promise<Outcome> {
    const ns = tool.namespace;
    const o = this.options;
    switch (type) {
      case 'TransientTimeout': {
        let executed = false;
        if (o.timeoutExecutes) {
          const [forwarded] = await Promise.all([this.forward(index, tool, args), this.sleep(o.timeoutMs)]);
          if (!forwarded.ok && forwarded.outcome.status === 'infra-error') return forwarded.outcome;
          executed = true;
        } else {
          await this.sleep(o.timeoutMs);
        }
        return {
          status: 'fault',
          fault: { type, executed, detail: `no answer within ${o.timeoutMs} ms` },
          answer: { error: { code: ErrorCode.RequestTimeout, message: `Request timed out: no answer from the ${ns} server within ${o.timeoutMs} ms` } },
        };
      }
      case 'HighLatency': {
        await this.sleep(o.latencyMs);
        const forwarded = await this.forward(index, tool, args);
        if (!forwarded.ok) return forwarded.outcome;
        return { status: 'fault', fault: { type, executed: true, detail: `delayed by ${o.latencyMs} ms` }, answer: { result: forwarded.result } };
      }
      case 'ConnectionReset':
        return {
          status: 'fault',
          fault: { type, executed: false },
          answer: { error: { code: ErrorCode.ConnectionClosed, message: `ECONNRESET: the connection to the ${ns} server was reset` } },
        };
      case 'SoftRateLimit':
        this.softUntil.set(ns, { until: o.now() + o.retryAfterMs, origin: index });
        return this.rateLimited(ns, `retry_after_ms=${o.retryAfterMs}`);
      case 'HardRateLimit':
        this.hardSince.set(ns, index);
        return this.hardRateLimited(ns, 'the namespace stays rate-limited for the rest of the episode');
      case 'CascadingFailure':
        this.cascade = { left: o.cascadeLength, origin: index, done: 0 };
        return this.cascading(ns, `the next ${o.cascadeLength} calls fail too`);
      case 'StaleData': {
        const earlier = tool.readOnly ? this.staleResult(tool.qualified, args) : undefined;
        if (!earlier) return this.plain(index, tool, args);
        return {
          status: 'fault',
          fault: { type, executed: false, detail: `replayed the result of call ${earlier.index}` },
          answer: { result: structuredClone(earlier.result) },
        };
      }
      case 'PartialResponse':
      case 'SchemaDrift':
      case 'EmptyResponse': {
        const forwarded = await this.forward(index, tool, args);
        if (!forwarded.ok) return forwarded.outcome;
        const genuine = forwarded.result;
        if (genuine.isError === true) return { status: 'tool-error', answer: { result: genuine } };
        const altered = alterResult(type, genuine, o);
        if (!altered) return { status: 'ok', answer: { result: genuine } };
        return { status: 'fault', fault: { type, executed: true, detail: altered.detail }, answer: { result: altered.result } };
      }
    }
  }

  private rateLimited(ns: string, detail: string): Outcome {
    const ms = this.options.retryAfterMs;
    return {
      status: 'fault',
      fault: { type: 'SoftRateLimit', executed: false, detail },
      answer: {
        result: {
          content: [{ type: 'text', text: `429 Too Many Requests: the ${ns} server is rate limiting requests. Retry after ${ms} ms (retry_after_ms: ${ms}).` }],
          structuredContent: { error: 'rate_limited', status: 429, retry_after_ms: ms },
          isError: true,
        },
      },
    };
  }

  private hardRateLimited(ns: string, detail: string): Outcome {
    return {
      status: 'fault',
      fault: { type: 'HardRateLimit', executed: false, detail },
      answer: {
        result: {
          content: [{ type: 'text', text: `429 Too Many Requests: the ${ns} API quota of this account is exhausted; no further requests will be served.` }],
          structuredContent: { error: 'quota_exhausted', status: 429 },
          isError: true,
        },
      },
    };
  }

  private cascading(ns: string, detail: string): Outcome {
    return {
      status: 'fault',
      fault: { type: 'CascadingFailure', executed: false, detail },
      answer: toolError(`503 Service Unavailable: the ${ns} server is failing (upstream dependency unavailable).`),
    };
  }

  /** The oldest earlier result with the same arguments, else the oldest of the tool at all. */
  private staleResult(qualified: string, args: Record<string, unknown>): { index: number; result: CallToolResult } | undefined {
    const entries = this.history.get(qualified);
    if (!entries?.length) return undefined;
    const key = argsKey(args);
    return entries.find((e) => e.argsKey === key) ?? entries[0];
  }

  /** Forwards a call to its namespace's server; failures of the server itself become infra-error outcomes. */
  private async forward(index: number, tool: ExposedTool, args: Record<string, unknown>): Promise<Forwarded> {
    if (this.closed) throw new GatewayClosed();
    const handle = this.servers.get(tool.namespace)!;
    let result: CallToolResult;
    try {
      const server = typeof handle === 'function' ? await handle() : handle;
      if (this.closed) throw new GatewayClosed();
      result = await server.callTool(tool.name, args);
    } catch (error) {
      if (this.closed) throw new GatewayClosed();
      // -32000 (connection closed) and -32001 (request timeout) come from the server dying or hanging; any
      // other JSON-RPC error is the server's own answer to this call.
      const rpcCode = error instanceof ServerError ? error.rpcCode : undefined;
      if (!(error instanceof ServerError) || error.exited || rpcCode === undefined || rpcCode === ErrorCode.ConnectionClosed || rpcCode === ErrorCode.RequestTimeout) {
        this.firstInfraError ??= error instanceof ServerError ? error : new ServerError(`the ${tool.namespace} server failed: ${(error as Error).message}`, tool.namespace, '', 'server-failed');
        return {
          ok: false,
          outcome: { status: 'infra-error', answer: { error: { code: ErrorCode.InternalError, message: `the ${tool.namespace} server failed` } } },
        };
      }
      return { ok: false, outcome: { status: 'tool-error', answer: { error: { code: rpcCode, message: (error.rpcMessage ?? error.reason).split('\n')[0]! } } } };
    }
    if (tool.readOnly && result.isError !== true) {
      const entries = this.history.get(tool.qualified) ?? [];
      entries.push({ argsKey: argsKey(args), index, result: structuredClone(result) });
      this.history.set(tool.qualified, entries);
    }
    return { ok: true, result };
  }

  private sleep(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.sleepers.add(wake);
    });
  }

  // ---- Results ---------------------------------------------------------------------------------------------

  /** The recorded calls, in arrival order. */
  calls(): CallRecord[] {
    return [...this.records].sort((a, b) => a.index - b.index);
  }

  counts(): GatewayCounts {
    return { ...this.counters };
  }

  /** Set when the agent went CALLS_PAST_BUDGET calls past max_steps: why the episode was ended. */
  runaway(): string | undefined {
    return this.runawayMessage;
  }

  /** Whether the agent tried to call past max_steps. */
  budgetExceeded(): boolean {
    return this.counters.over_budget > 0;
  }

  /** The first failure of a server that no injected fault caused (crash, hang): the episode should be retried. */
  infraError(): ServerError | undefined {
    return this.firstInfraError;
  }

  /** Stops listening and closes every connection; calls still pending are answered with an error, unrecorded. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const wake of [...this.sleepers]) wake();
    const servers = [...this.connected];
    this.connected.clear();
    this.sessions.clear();
    await Promise.all(servers.map((s) => s.close().catch(() => undefined)));
    await Promise.all(
      [this.http, ...this.socketServers].map(
        (http) =>
          http &&
          new Promise<void>((resolve) => {
            http.close(() => resolve());
            http.closeAllConnections();
          }),
      ),
    );
  }
}

function toolError(text: string): Answer {
  return { result: { content: [{ type: 'text', text }], isError: true } };
}

/** A value as the trace keeps it: itself, or past MAX_RECORDED_JSON its size, SHA-256 and first characters. */
function bounded(value: unknown): unknown {
  const json = JSON.stringify(value) ?? '';
  if (json.length <= MAX_RECORDED_JSON) return value;
  return { truncated: { json_chars: json.length, sha256: createHash('sha256').update(json).digest('hex'), head: json.slice(0, 1000) } };
}

function argsKey(args: Record<string, unknown>): string {
  return canonicalize(args) ?? '{}';
}

function jsonRpcHttpError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/** The data faults: what the agent sees instead of a successful result, or undefined if nothing changed. */
function alterResult(type: 'PartialResponse' | 'SchemaDrift' | 'EmptyResponse', result: CallToolResult, o: FaultOptions): { result: CallToolResult; detail: string } | undefined {
  switch (type) {
    case 'EmptyResponse':
      return { result: { content: [] }, detail: 'the call ran; its content was dropped' };
    case 'PartialResponse': {
      const first = result.content.find((c) => c.type === 'text');
      const text = first?.type === 'text' ? first.text : '';
      const kept = Math.floor(text.length * o.partialKeep);
      return {
        result: { content: first ? [{ type: 'text', text: text.slice(0, kept) }] : [] },
        detail: `kept ${kept} of ${text.length} characters`,
      };
    }
    case 'SchemaDrift': {
      const renamed = new Set<string>();
      const content = result.content.map((c) => (c.type === 'text' ? { ...c, text: driftText(c.text, renamed) } : c));
      const drifted: CallToolResult = { ...result, content };
      if (result.structuredContent !== undefined) drifted.structuredContent = driftValue(result.structuredContent, renamed) as Record<string, unknown>;
      if (renamed.size === 0) return undefined;
      return { result: drifted, detail: `renamed ${[...renamed].sort().join(', ')}` };
    }
  }
}
