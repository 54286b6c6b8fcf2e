import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InvalidOptionError } from '../../contract/errors.js';
import { createHookService, type HookService, type HookServiceOptions } from './hook-service.js';

export interface HookServerOptions extends HookServiceOptions {
  /** 0 picks a free port. @default 0 */
  readonly port?: number;
  /** @default '127.0.0.1' */
  readonly host?: string;
}

export interface HookServer {
  /** `http://host:port`, without a trailing slash. */
  readonly url: string;
  readonly port: number;
  readonly service: HookService;
  readonly server: Server;
  /** Stops listening and closes every open connection, kept-alive ones included. */
  close(): Promise<void>;
}

/**
 * Runs the hook service on a real socket, for `oncely hook` and for tests that must see real
 * connections (a swallowed ack is a dropped TCP connection, not a status code).
 */
export async function startHookServer(options: HookServerOptions = {}): Promise<HookServer> {
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new InvalidOptionError('port', port, 'an integer from 0 to 65535');
  const host = options.host ?? '127.0.0.1';
  const service = createHookService(options);
  const server = createServer(nodeListener(service));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost}:${address.port}`,
    port: address.port,
    service,
    server,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/**
 * A minimal node:http adapter for the web-standard handler, plus the one thing the web standard
 * lacks: a way to drop the socket. (When the shared src/http adapters land, this can use them.)
 */
export function nodeListener(service: Pick<HookService, 'handle'>): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    void serve(service, req, res).catch((error: unknown) => {
      if (res.headersSent || req.socket.destroyed) {
        req.socket.destroy();
        return;
      }
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`hook: ${error instanceof Error ? error.message : String(error)}`);
    });
  };
}

async function serve(service: Pick<HookService, 'handle'>, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  const method = req.method ?? 'GET';
  const request = new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, {
    method,
    headers,
    ...(method === 'GET' || method === 'HEAD' ? {} : { body: Buffer.concat(chunks) }),
  });
  let dropped = false;
  const response = await service.handle(request, {
    drop: () => {
      dropped = true;
      req.socket.destroy();
    },
  });
  if (dropped) return;
  const body = method === 'HEAD' || response.body === null ? undefined : Buffer.from(await response.arrayBuffer());
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(body);
}
