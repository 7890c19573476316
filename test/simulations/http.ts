/**
 * The HTTP side shared by the model-endpoint simulations (openai-simulation.ts, anthropic-simulation.ts):
 * a server on 127.0.0.1 (random port) that records every request, and the ways an endpoint really answers
 * badly: a status with an error body, a body that is not JSON, a response trickled out in chunks (a slow
 * stream), a request never answered, a connection cut. Token sums are counted only for bodies that were
 * delivered whole (`finish`); a body cut short by the client (its timeout) is counted apart.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body (undefined when it was not JSON). */
  body: any;
}

/** Usage as served, normalised the way the runner counts it (prompt includes cached and cache-written). */
export interface ServedUsage {
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  cache_write_tokens: number;
}

export interface Served extends ServedUsage {
  /** Model responses delivered whole. */
  responses: number;
  /** Delivered responses that carried usage. */
  with_usage: number;
}

/** How a response leaves the server. */
export interface Delivery {
  status: number;
  headers?: Record<string, string>;
  body: string;
  /** Trickle the body out in this many chunks, this far apart (a slow stream). */
  slow?: { chunks: number; delayMs: number };
  /** Usage the body carries, counted once it is delivered whole. */
  usage?: ServedUsage;
  /** A model response (2xx, the protocol's JSON), as opposed to an error or a broken body. */
  model?: boolean;
}

export type Handling = Delivery | { hang: true } | { reset: true };

export interface SimulationServer {
  baseUrl: string;
  requests: RecordedRequest[];
  /** Usage in bodies delivered whole. */
  served: Served;
  /** Usage in bodies the client hung up on before they were whole. */
  cut: ServedUsage & { responses: number };
  close(): Promise<void>;
}

export const zeroUsage = (): ServedUsage => ({ prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0, cache_write_tokens: 0 });

function add(into: ServedUsage, usage: ServedUsage): void {
  into.prompt_tokens += usage.prompt_tokens;
  into.completion_tokens += usage.completion_tokens;
  into.cached_tokens += usage.cached_tokens;
  into.cache_write_tokens += usage.cache_write_tokens;
}

export const json = (status: number, value: unknown, extra: Omit<Delivery, 'status' | 'body'> = {}): Delivery => ({
  status,
  ...extra,
  headers: { 'content-type': 'application/json', ...extra.headers },
  body: JSON.stringify(value),
});

/** A rough, deterministic token count: four characters a token, as tokenizers average on English and JSON. */
export const tokensOf = (value: unknown): number => Math.ceil((typeof value === 'string' ? value : JSON.stringify(value) ?? '').length / 4);

export async function startSimulationServer(base: string, handle: (request: RecordedRequest) => Handling): Promise<SimulationServer> {
  const requests: RecordedRequest[] = [];
  const served: Served = { responses: 0, with_usage: 0, ...zeroUsage() };
  const cut = { responses: 0, ...zeroUsage() };
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: any;
      try {
        body = JSON.parse(raw);
      } catch {
        body = undefined;
      }
      const request = { method: req.method ?? '', path: (req.url ?? '/').split('?')[0] ?? '/', headers: req.headers, body };
      requests.push(request);
      const handling = handle(request);
      if ('hang' in handling) return; // never answered: the client must give up on its own
      if ('reset' in handling) return void req.socket.destroy();
      deliver(res, handling);
    });
  });
  const deliver = (res: ServerResponse, delivery: Delivery) => {
    res.on('finish', () => {
      if (delivery.model) served.responses++;
      if (delivery.usage) {
        served.with_usage++;
        add(served, delivery.usage);
      }
    });
    res.on('close', () => {
      if (!res.writableFinished && delivery.usage) {
        cut.responses++;
        add(cut, delivery.usage);
      }
    });
    res.writeHead(delivery.status, delivery.headers ?? {});
    if (!delivery.slow) return void res.end(delivery.body);
    const size = Math.ceil(delivery.body.length / Math.max(1, delivery.slow.chunks));
    let at = 0;
    const next = () => {
      if (res.destroyed) return;
      const piece = delivery.body.slice(at, at + size);
      at += size;
      if (at >= delivery.body.length) return void res.end(piece);
      res.write(piece);
      const timer = setTimeout(() => (timers.delete(timer), next()), delivery.slow!.delayMs);
      timers.add(timer);
    };
    next();
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}${base}`,
    requests,
    served,
    cut,
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
