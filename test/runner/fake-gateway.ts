/**
 * A gateway-shaped MCP server for agent tests: streamable HTTP on 127.0.0.1 exposing exactly two travel
 * tools as `<ns>_<tool>`, every call recorded, unknown names answered with an error, as the real gateway does;
 * and the task and agent context the agent tests share.
 */
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { AgentContext } from '../../server/src/runner/agents/agent.ts';
import type { Task } from '../../server/src/tasks/model.ts';

// ---- A gateway-shaped MCP server: exactly the task's tools as `<ns>_<tool>`, every call recorded.

export const TOOLS: Tool[] = [
  {
    name: 'travel_search_flights',
    description: 'Search flights between two airports on a date.',
    inputSchema: {
      type: 'object',
      properties: { from: { type: 'string' }, to: { type: 'string' }, date: { type: 'string' } },
      required: ['from', 'to'],
    },
  },
  {
    name: 'travel_hold_flight',
    description: 'Put a hold on a flight.',
    inputSchema: { type: 'object', properties: { flight_id: { type: 'string' } }, required: ['flight_id'] },
  },
];

export interface FakeGateway {
  url: string;
  calls: Array<{ name: string; arguments: unknown }>;
  close(): Promise<void>;
}

export async function startGateway(): Promise<FakeGateway> {
  const calls: FakeGateway['calls'] = [];
  // Stateless streamable HTTP: a fresh MCP server per request, as the SDK's stateless example does.
  const http = createServer(async (req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    const server = new Server({ name: 'fake-gateway', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS }));
    server.setRequestHandler(CallToolRequestSchema, (request) => {
      const { name, arguments: args } = request.params;
      calls.push({ name, arguments: args });
      if (name === 'travel_search_flights') {
        return { content: [{ type: 'text', text: JSON.stringify([{ id: 'AA-500', price: 300 }, { id: 'BB-700', price: 450 }]) }] };
      }
      if (name === 'travel_hold_flight') {
        return { content: [{ type: 'text', text: `hold H-1 on ${String((args as { flight_id?: unknown })?.flight_id)}` }] };
      }
      return { isError: true, content: [{ type: 'text', text: `unknown tool ${name}: not one of the task's tools` }] };
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  const port = await listen(http);
  return { url: `http://127.0.0.1:${port}/mcp`, calls, close: () => closeHttp(http) };
}

export async function listen(server: HttpServer): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

export function closeHttp(server: HttpServer): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

// Strings that exist only in what the agent must not see.
export const SECRET_STATE = 'SECRET-INITIAL-STATE-7f3a';
export const SECRET_PREDICATE = 'SECRET-PREDICATE-91c2';
export const SECRET_SOLUTION = 'SECRET-SOLUTION-4b8e';

export const task: Task = {
  id: 'travel-hold-cheapest-001',
  server: 'travel',
  category: 'composition',
  difficulty: 'easy',
  max_steps: 6,
  goal: 'Find the cheapest flight from AMS to LIS and put a hold on it.',
  initial_state: { travel: { note: SECRET_STATE } },
  available_tools: ['travel.search_flights', 'travel.hold_flight'],
  success_predicate: { 'travel.flightHeld': { flight_id: SECRET_PREDICATE } },
  reference_solutions: [[{ tool: 'travel.hold_flight', arguments: { flight_id: SECRET_SOLUTION } }]],
  counterexamples: [[{ tool: 'travel.hold_flight', arguments: { flight_id: 'BB-700' } }]],
};

export function contextFor(gateway: FakeGateway, signal: AbortSignal = new AbortController().signal): AgentContext {
  return {
    task,
    goal: 'Find the cheapest AMS to LIS flight and hold it, please.',
    gateway: { url: gateway.url, tools: TOOLS },
    variant: 'agent',
    signal,
  };
}

export async function withGateway(body: (gateway: FakeGateway) => Promise<void>): Promise<void> {
  const gateway = await startGateway();
  try {
    await body(gateway);
  } finally {
    await gateway.close();
  }
}


export async function waitFor(condition: () => boolean, limitMs = 10_000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > limitMs) throw new Error('the condition never became true');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

