/**
 * A local agent endpoint in the hosted-endpoint format (schemas/endpoint-request.schema.json and
 * endpoint-response.schema.json): the CLI runs with `--agent endpoint --endpoint <url>` and POSTs each
 * episode's task here. Only on 127.0.0.1; each request gets an AbortSignal that fires at its deadline or
 * when the runner hangs up.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AgentRequest, ReportedUsage } from '../../server/src/engine/protocol.ts';

export type { AgentRequest, ReportedUsage };

export type EndpointHandler = (request: AgentRequest, signal: AbortSignal) => Promise<{ answer?: string; usage?: ReportedUsage }>;

export interface EndpointServer {
  url: string;
  close(): Promise<void>;
}

const MAX_BODY = 10 * 1024 * 1024;

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) reject(new Error('request body too large'));
      else chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

/** The fields the handler relies on; the runner's own schema is stricter. */
export function isAgentRequest(value: unknown): value is AgentRequest {
  if (typeof value !== 'object' || value === null) return false;
  const r = value as Partial<AgentRequest>;
  return (
    typeof r.task_id === 'string' &&
    typeof r.goal === 'string' &&
    Array.isArray(r.available_tools) &&
    typeof r.max_steps === 'number' &&
    typeof r.gateway?.url === 'string' &&
    typeof r.deadline_ms === 'number'
  );
}

export async function startEndpointServer(handler: EndpointHandler): Promise<EndpointServer> {
  const server: Server = createServer((req, res) => {
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'POST') return reply(405, { error: 'POST an agent request' });
    const controller = new AbortController();
    // The runner closing the connection (its own deadline, or a cancelled run) ends the agent's work too.
    res.on('close', () => {
      if (!res.writableFinished) controller.abort(new Error('the runner closed the request'));
    });
    readBody(req)
      .then(async (text) => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          return reply(400, { error: 'the body is not JSON' });
        }
        if (!isAgentRequest(parsed)) return reply(400, { error: 'the body is not an agent request' });
        const timer = setTimeout(() => controller.abort(new Error(`deadline of ${parsed.deadline_ms} ms reached`)), parsed.deadline_ms);
        try {
          const outcome = await handler(parsed, controller.signal);
          if (!res.destroyed) reply(200, { ...(outcome.answer === undefined ? {} : { answer: outcome.answer }), ...(outcome.usage ? { usage: outcome.usage } : {}) });
        } finally {
          clearTimeout(timer);
        }
      })
      .catch((error: Error) => {
        if (!res.headersSent && !res.destroyed) reply(500, { error: error.message });
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
