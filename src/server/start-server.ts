import { createServer, STATUS_CODES, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { InvalidOptionError, OncelyError } from '../contract/errors.js';
import { toNodeListener } from '../http/node-listener.js';
import { problemDetails, type ProblemKind } from '../http/problem.js';
import { PROBLEM_JSON } from '../contract/headers.js';
import { systemClock } from '../time/clock.js';
import { createServerApp, type ServerApp, type ServerAppDeps } from './create-server-app.js';
import { openBackend, type AnyBackend, type Backend, type BackendOptions } from './open-backend.js';
import { createRequestLog } from './request-log.js';
import { startRetentionSweep } from './retention-sweep.js';

export interface ServerOptions extends BackendOptions, Omit<ServerAppDeps<unknown>, 'backend' | 'log' | 'onError'> {
  /** 0 picks a free port; the real one is in the result. @default 8787 */
  readonly port?: number;
  /** The address to bind. Loopback unless told otherwise: the dev token guards a local server. @default '127.0.0.1' */
  readonly host?: string;
  /** Receives one JSON line per request. @default nothing */
  readonly log?: (line: string) => void;
  /** How long a shutdown waits for requests in flight before cutting them. @default 10000 */
  readonly graceMs?: number;
  /**
   * How often expired receipts are purged in the background, on `clock`; null turns the sweep
   * off (a lookup still purges what it finds). @default 60000
   */
  readonly purgeIntervalMs?: number | null;
  /**
   * Told about failures the client sees only as 500 or 503 (the request, when one is known), and
   * about background purges that failed (a `purge_failed` OncelyError, no request). @default nothing
   */
  readonly onError?: (error: unknown, request?: Request) => void;
}

export const DEFAULT_SERVER_OPTIONS = {
  port: 8787,
  host: '127.0.0.1',
  graceMs: 10_000,
  purgeIntervalMs: 60_000,
} as const;

export interface RunningServer {
  /** `http://host:port`, without a trailing slash; the real port when 0 was asked. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** False when bound to an address other than loopback: the CLI warns. */
  readonly loopback: boolean;
  readonly backend: AnyBackend;
  readonly app: ServerApp<unknown>;
  readonly server: Server;
  /** Requests received and not yet answered. */
  inFlight(): number;
  /**
   * Graceful stop: stops accepting, lets the requests in flight finish (up to graceMs, then cuts
   * them), closes the store. Resolves `drained: false` when some had to be cut. Idempotent.
   */
  close(): Promise<{ readonly drained: boolean }>;
}

/** True for addresses only this machine can reach. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127(?:\.\d{1,3}){3}$/.test(host);
}

/**
 * Opens the store, builds the app, listens, and purges expired receipts every purgeIntervalMs.
 * Failures are one-line OncelyErrors: a bad port or host (InvalidOptionError), a store that does
 * not answer (`store_unavailable`), a port in use (`port_in_use`), a port not allowed
 * (`port_forbidden`), an address not on this machine.
 */
export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const port = options.port ?? DEFAULT_SERVER_OPTIONS.port;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new InvalidOptionError('--port', port, 'an integer from 0 to 65535 (0 picks a free port)');
  const host = options.host ?? DEFAULT_SERVER_OPTIONS.host;
  if (typeof host !== 'string' || host.trim() === '') throw new InvalidOptionError('--host', host, 'an address or host name, e.g. 127.0.0.1');
  const graceMs = options.graceMs ?? DEFAULT_SERVER_OPTIONS.graceMs;
  if (!Number.isSafeInteger(graceMs) || graceMs < 0) throw new InvalidOptionError('graceMs', graceMs, 'a whole number of milliseconds >= 0');
  const purgeIntervalMs = options.purgeIntervalMs === undefined ? DEFAULT_SERVER_OPTIONS.purgeIntervalMs : options.purgeIntervalMs;
  if (purgeIntervalMs !== null && (!Number.isSafeInteger(purgeIntervalMs) || purgeIntervalMs < 1)) {
    throw new InvalidOptionError('purgeIntervalMs', purgeIntervalMs, 'a whole number of milliseconds >= 1, or null for no background purge');
  }
  const clock = options.clock ?? systemClock;
  const log = createRequestLog({ clock, ...(options.log ? { write: options.log } : {}) });

  const backend = await openBackend(options);
  let app: ServerApp<unknown>;
  try {
    app = await createServerApp<unknown>({ ...options, backend: backend as Backend<unknown>, clock, log });
  } catch (error) {
    await backend.close().catch(() => {});
    throw error;
  }

  let active = 0;
  let closing = false;
  const idleWaiters = new Set<() => void>();
  const onError = options.onError ?? (() => {});
  const listener = toNodeListener(app.fetch, { onError: (error) => onError(error) });
  const server = createServer((req, res) => {
    active++;
    // During a shutdown, a kept-alive connection gets its answer and is then closed.
    if (closing) res.setHeader('connection', 'close');
    res.once('close', () => {
      active--;
      if (active === 0) for (const wake of idleWaiters) wake();
    });
    listener(req, res);
  });
  server.on('clientError', answerClientError);

  try {
    await listen(server, port, host);
  } catch (error) {
    await backend.close().catch(() => {});
    throw error;
  }
  // Retention holds for keys nobody asks about again; stopped (a purge under way finished) before the store closes.
  // Receipts and hook hits share one retention: both are purged at each turn of the sweep.
  const retention = {
    async purgeExpired() {
      const swept = await app.ledger.purgeExpired();
      await app.hooks.service.purgeExpired();
      return swept;
    },
  };
  const sweep = purgeIntervalMs === null ? undefined : startRetentionSweep({ ledger: retention, clock, intervalMs: purgeIntervalMs, onError: (error) => onError(error) });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  let closed: Promise<{ drained: boolean }> | undefined;
  async function shutDown(): Promise<{ drained: boolean }> {
    closing = true;
    const swept = sweep?.stop();
    const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    let drained = active === 0;
    if (!drained) {
      const timeout = new AbortController();
      drained = await Promise.race([
        new Promise<boolean>((resolve) => idleWaiters.add(() => resolve(true))),
        // Real time, whatever the app's clock: the grace is for real sockets.
        systemClock.sleep(graceMs, timeout.signal).then(() => false, () => false),
      ]);
      timeout.abort();
    }
    server.closeAllConnections();
    await stopped;
    await swept;
    await backend.close();
    return { drained };
  }

  return {
    url: `http://${shownHost}:${address.port}`,
    host: address.address,
    port: address.port,
    loopback: isLoopback(host),
    backend,
    app,
    server,
    inFlight: () => active,
    close: () => (closed ??= shutDown()),
  };
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      const where = `${host}:${port}`;
      switch (error.code) {
        case 'EADDRINUSE':
          reject(new OncelyError('port_in_use', `port ${port} on ${host} is in use; stop the other server or pick another port with --port (0 picks a free one)`, { cause: error }));
          return;
        case 'EACCES':
          reject(new OncelyError('port_forbidden', `not allowed to listen on ${where} (ports below 1024 need privileges); pick another port with --port`, { cause: error }));
          return;
        case 'EADDRNOTAVAIL':
        case 'ENOTFOUND':
        case 'EAI_AGAIN':
          reject(new OncelyError('host_unavailable', `cannot listen on ${host}: not an address of this machine (${error.code})`, { cause: error }));
          return;
        default:
          reject(new OncelyError('listen_failed', `cannot listen on ${where}: ${error.message}`, { cause: error }));
      }
    };
    server.once('error', onError);
    server.listen({ port, host }, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

/**
 * A request node's parser refused (a bad request line, headers too large, too slow): answered in
 * problem+json like every other refusal, instead of node's bare status line.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const kind: ProblemKind =
    error.code === 'HPE_HEADER_OVERFLOW' ? 'headers_too_large' : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'request_timeout' : 'malformed_request';
  const details = problemDetails(kind, `the server could not read the request (${error.code ?? 'parse error'})`);
  const body = Buffer.from(JSON.stringify(details));
  socket.end(
    `HTTP/1.1 ${details.status} ${STATUS_CODES[details.status] ?? ''}\r\ncontent-type: ${PROBLEM_JSON}\r\ncontent-length: ${body.byteLength}\r\nconnection: close\r\n\r\n${body.toString()}`,
  );
}
