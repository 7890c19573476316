/**
 * The egress proxy of a confined command agent: the one way out of its sandbox besides the gateway. An HTTP
 * proxy (CONNECT tunnels for HTTPS, absolute-URI requests for plain HTTP) that forwards only to the hosts the
 * user allowed (`--agent-allow-host api.example.com:443`), refuses everything else with 403, and records
 * every attempt, allowed or refused, for the episode's trace.
 *
 * It listens on a Unix socket that is bound into the sandbox (the agent has no network of its own); the
 * forwarding of plain HTTP requests is the `proxy` package's, the policy, the target parser and the CONNECT
 * tunnel are here; whatever the library throws is caught, traced as a refused attempt and ends only that
 * client's connection.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect as netConnect, type Socket } from 'node:net';
import { createProxy } from 'proxy';
import type { EgressRecord } from '../../record/schema.ts';
import { McpbenchError } from '../../errors.ts';

/** Attempts recorded at most per episode (the count of the rest is kept). */
export const MAX_EGRESS_RECORDS = 200;

export class AllowHostError extends McpbenchError {
  static override readonly code: string = 'allow-host';
}

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

/** A proxy request's target: its host (lower-cased, IPv6 in brackets) and integer port, and the request URL as the forwarder is handed it. */
export interface ProxyTarget {
  host: string;
  port: number;
  /** `host:port` for CONNECT, `http://host:port/path` for an absolute URI: the only form the forwarder sees. */
  url: string;
}

/**
 * The one parser of a proxy request's target, used for the decision and for the forwarding alike: CONNECT's
 * `host:port` and an absolute `http://` URI's authority must both be `host:port` as an allowed host is (an
 * integer port of 1-65535, no user info, no other characters); anything else (`host:4777.9e1`, `host:+80`,
 * `user@host`, an `https://` URI) is undefined, refused.
 */
export function parseProxyTarget(method: string, raw: string): ProxyTarget | undefined {
  if (raw.length > 4096) return undefined;
  if (method === 'CONNECT') {
    const hostPort = normalAllowHost(raw);
    if (hostPort === undefined || raw.trim() !== raw) return undefined;
    const at = hostPort.lastIndexOf(':');
    return { host: hostPort.slice(0, at), port: Number(hostPort.slice(at + 1)), url: hostPort };
  }
  const match = /^http:\/\/([^/?#]+)([/?][^#]*)?$/i.exec(raw);
  if (!match) return undefined;
  const authority = match[1]!;
  const hasPort = /:[^\]]*$/.test(authority);
  const hostPort = normalAllowHost(hasPort ? authority : `${authority}:80`);
  if (hostPort === undefined) return undefined;
  const at = hostPort.lastIndexOf(':');
  const path = match[2] ?? '/';
  return { host: hostPort.slice(0, at), port: Number(hostPort.slice(at + 1)), url: `http://${hostPort}${path.startsWith('/') ? path : `/${path}`}` };
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
    // The library's request handler, called directly so that whatever they throw (an assertion, a rejected promise)
    // is caught here: traced as a refused attempt and the client's connection closed, never the runner's end.
    const [onRequest] = forwarder.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => unknown)[];
    const failed = (req: IncomingMessage, to: ProxyTarget, error: unknown, end: () => void) => {
      proxy.record({ method: req.method ?? 'GET', host: to.host, port: to.port, allowed: false, reason: `the proxy failed: ${error instanceof Error ? error.message : String(error)}` });
      end();
    };
    const forward = (req: IncomingMessage, to: ProxyTarget, call: () => unknown, end: () => void) => {
      try {
        Promise.resolve(call()).catch((error: unknown) => failed(req, to, error, end));
      } catch (error) {
        failed(req, to, error, end);
      }
    };
    const decide = (req: IncomingMessage): { to?: ProxyTarget; record: EgressRecord } => {
      const method = req.method ?? 'GET';
      const to = parseProxyTarget(method, req.url ?? '');
      if (!to) return { record: proxy.record({ method, host: (req.url ?? '').slice(0, 200), port: 0, allowed: false, reason: `not a proxy target: ${ALLOW_HOST_FORMAT} (CONNECT), or an absolute http:// URL` }) };
      const ok = allowed.has(`${to.host}:${to.port}`);
      return { to, record: proxy.record({ method, host: to.host, port: to.port, allowed: ok, ...(ok ? {} : { reason: `${to.host}:${to.port} is not an allowed host` }) }) };
    };
    server.on('connect', (req: IncomingMessage, socket: Socket, head: Buffer) => {
      socket.on('error', () => socket.destroy());
      const { to, record } = decide(req);
      if (!to || !record.allowed) {
        socket.end(`HTTP/1.1 ${to ? '403 Forbidden' : '400 Bad Request'}\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n${record.reason ?? 'refused'}\n`);
        return;
      }
      // The tunnel is ours (the library's CONNECT handler asserts that nothing follows the header and reads
      // the port its own way): bytes sent right after the header (a TLS hello) go through once it is up.
      const upstream = netConnect({ host: to.host.replace(/^\[|\]$/g, ''), port: to.port });
      const drop = (error?: unknown) => {
        if (error !== undefined && !socket.destroyed && !tunnelled) {
          proxy.record({ method: 'CONNECT', host: to.host, port: to.port, allowed: false, reason: `the proxy failed: ${error instanceof Error ? error.message : String(error)}` });
          socket.end('HTTP/1.1 502 Bad Gateway\r\nconnection: close\r\n\r\n');
        } else socket.destroy();
        upstream.destroy();
      };
      let tunnelled = false;
      upstream.on('error', drop);
      socket.on('close', () => upstream.destroy());
      upstream.on('close', () => socket.destroy());
      upstream.on('connect', () => {
        tunnelled = true;
        socket.write('HTTP/1.1 200 Connection established\r\n\r\n');
        if (head.length) upstream.write(head);
        socket.pipe(upstream);
        upstream.pipe(socket);
      });
    });
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const { to, record } = decide(req);
      if (!to || !record.allowed) {
        res.writeHead(to ? 403 : 400, { 'content-type': 'text/plain', connection: 'close' }).end(`${record.reason ?? 'refused'}\n`);
        return;
      }
      req.url = to.url;
      forward(req, to, () => onRequest!.call(forwarder, req, res), () => (res.headersSent ? res.destroy() : res.writeHead(502, { connection: 'close' }).end('the proxy failed\n')));
    });
    // A request Node's parser refuses never reaches the handlers above: traced as refused all the same.
    server.on('clientError', (error: Error, socket: Socket) => {
      proxy.record({ method: '?', host: '', port: 0, allowed: false, reason: `not an HTTP request: ${error.message}` });
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
      else socket.destroy();
    });
    server.on('connection', (socket: Socket) => {
      proxy.sockets.add(socket);
      socket.on('error', () => socket.destroy());
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
