/**
 * The egress proxy of a confined command agent: the one way out of its sandbox besides the gateway. An HTTP
 * proxy (CONNECT tunnels for HTTPS, absolute-URI requests for plain HTTP) that forwards only to the hosts the
 * user allowed (`--agent-allow-host api.example.com:443`), refuses everything else with 403, and records
 * every attempt, allowed or refused, for the episode's trace.
 *
 * It listens on a Unix socket that is bound into the sandbox (the agent has no network of its own); the
 * forwarding itself is the `proxy` package's, the policy is here.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { createProxy } from 'proxy';
import type { EgressRecord } from '../store.ts';

export type { EgressRecord } from '../store.ts';

/** Attempts recorded at most per episode (the count of the rest is kept). */
export const MAX_EGRESS_RECORDS = 200;

export class AllowHostError extends Error {}

export const ALLOW_HOST_FORMAT = 'use host:port, e.g. api.openai.com:443 or 127.0.0.1:8080';

/** `host:port` (IPv6 as `[::1]:8080`), lower-cased; undefined when `entry` is not one. */
function normalAllowHost(entry: string): string | undefined {
  const match = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(entry.trim());
  const port = match ? Number(match[2]) : NaN;
  return match && port >= 1 && port <= 65535 ? `${match[1]!.toLowerCase()}:${port}` : undefined;
}

export const isAllowHost = (entry: string): boolean => normalAllowHost(entry) !== undefined;

/** `host:port` (IPv6 as `[::1]:8080`), lower-cased; a bad entry throws AllowHostError. */
export function parseAllowHost(entry: string): string {
  const host = normalAllowHost(entry);
  if (host === undefined) throw new AllowHostError(`allowed host ${entry}: ${ALLOW_HOST_FORMAT}`);
  return host;
}

/** The target of a proxy request: CONNECT's `host:port`, or an absolute URI's host and port. */
function target(req: IncomingMessage): { host: string; port: number } | undefined {
  const raw = req.url ?? '';
  if (req.method === 'CONNECT') {
    const at = raw.lastIndexOf(':');
    const port = Number(raw.slice(at + 1));
    if (at <= 0 || !Number.isInteger(port)) return undefined;
    return { host: raw.slice(0, at).toLowerCase(), port };
  }
  try {
    const url = new URL(raw);
    if (url.protocol !== 'http:') return undefined;
    return { host: url.hostname.toLowerCase(), port: url.port ? Number(url.port) : 80 };
  } catch {
    return undefined;
  }
}

export class EgressProxy {
  private readonly records: EgressRecord[] = [];
  private dropped = 0;
  private readonly started = performance.now();
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    private readonly onRecord?: (record: EgressRecord) => void,
  ) {}

  /** Listens on the Unix socket `path`; `allow` holds `host:port` entries (parseAllowHost). */
  static async listen(path: string, allow: readonly string[], onRecord?: (record: EgressRecord) => void): Promise<EgressProxy> {
    const allowed = new Set(allow.map(parseAllowHost));
    // The library's proxy never listens: it forwards what the policy below hands it.
    const forwarder = createProxy(createServer());
    const server = createServer();
    const proxy = new EgressProxy(server, onRecord);
    const decide = (req: IncomingMessage): EgressRecord | undefined => {
      const to = target(req);
      if (!to) return undefined;
      const ok = allowed.has(`${to.host}:${to.port}`);
      return proxy.record({ method: req.method ?? 'GET', host: to.host, port: to.port, allowed: ok, ...(ok ? {} : { reason: `${to.host}:${to.port} is not an allowed host` }) });
    };
    server.on('connect', (req: IncomingMessage, socket: Socket, head: Buffer) => {
      const decision = decide(req);
      if (!decision?.allowed) {
        socket.end(`HTTP/1.1 ${decision ? '403 Forbidden' : '400 Bad Request'}\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n${decision?.reason ?? 'not a proxy request'}\n`);
        return;
      }
      forwarder.emit('connect', req, socket, head);
    });
    server.on('request', (req, res) => {
      const decision = decide(req);
      if (!decision?.allowed) {
        res.writeHead(decision ? 403 : 400, { 'content-type': 'text/plain', connection: 'close' }).end(`${decision?.reason ?? 'not a proxy request: use an absolute http:// URL or CONNECT'}\n`);
        return;
      }
      forwarder.emit('request', req, res);
    });
    server.on('connection', (socket: Socket) => {
      proxy.sockets.add(socket);
      socket.on('close', () => proxy.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => resolve());
    });
    return proxy;
  }

  private record(entry: Omit<EgressRecord, 'at_ms'>): EgressRecord {
    const record = { at_ms: Math.round(performance.now() - this.started), ...entry };
    if (this.records.length < MAX_EGRESS_RECORDS) {
      this.records.push(record);
      this.onRecord?.(record);
    } else this.dropped++;
    return record;
  }

  /** The attempts so far, and how many more were not kept. */
  attempts(): { records: EgressRecord[]; dropped: number } {
    return { records: [...this.records], dropped: this.dropped };
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
