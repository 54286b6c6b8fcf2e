import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InvalidOptionError, OncelyError, systemClock } from '../../src/index.js';
import { toNodeListener } from '../../src/http/index.js';
import { createServerApp, type ServerApp, type ServerAppDeps } from './create-server-app.js';
import { openNotificationOutbox, type NotificationOutbox } from './notification-outbox.js';
import { openBackend, type AnyBackend, type Backend, type BackendOptions } from './open-backend.js';
import { createRequestLog } from './request-log.js';
import { createRequestGate } from './request-gate.js';
import { answerClientError, refuseConnect } from './raw-answer.js';
import { startRetentionSweep } from './retention-sweep.js';

export interface ServerOptions
  extends BackendOptions,
    Omit<ServerAppDeps<unknown>, 'backend' | 'log' | 'onError' | 'notifications'> {
  /**
   * Where the hook receiver's notifications go (`--notify-url`): one per completed arrival,
   * recorded with its ack in a journal beside the ledger, delivered by an outbox worker that runs
   * with the server. @default none
   */
  readonly notifyUrl?: string | undefined;
  /** 0 picks a free port; the real one is in the result. @default 8787 */
  readonly port?: number;
  /** The address to bind. Loopback unless told otherwise: the dev token guards a local server. @default '127.0.0.1' */
  readonly host?: string;
  /** Receives one JSON line per request. @default nothing */
  readonly log?: (line: string) => void;
  /**
   * How long a shutdown lets requests in flight run (`--grace`); past it they are answered 503
   * and rolled back. @default 10000
   */
  readonly graceMs?: number;
  /**
   * How long a shutdown waits, once nothing is in flight, for nothing new to arrive before it
   * stops answering: a request already on its way gets a 503 rather than a reset. @default 100
   */
  readonly settleMs?: number;
  /**
   * Longest time to receive a whole request, headers and body (`--request-timeout`); past it the
   * answer is 408 and the connection closes. Node's own default is 300 s. @default 30000
   */
  readonly requestTimeoutMs?: number;
  /** Longest time to receive the request line and headers (`--headers-timeout`); then 408. @default 10000 */
  readonly headersTimeoutMs?: number;
  /** How long an idle kept-alive connection stays open (node's default). @default 5000 */
  readonly keepAliveTimeoutMs?: number;
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
  settleMs: 100,
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5000,
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
   * Graceful stop: answers what arrives 503 + Retry-After + Connection: close, lets the requests
   * in flight finish (up to graceMs; then they are answered the same 503 and rolled back), stops
   * listening once nothing came for settleMs, closes the store. Resolves `drained: false` when
   * some had to be cut. Idempotent.
   */
  close(): Promise<{ readonly drained: boolean }>;
}

/** True for addresses only this machine can reach. */
export function isLoopback(host: string): boolean {
  return (
    host === 'localhost' || host === '::1' || host === '[::1]' || /^127(?:\.\d{1,3}){3}$/.test(host)
  );
}

/**
 * Opens the store, builds the app, listens, and purges expired receipts every purgeIntervalMs.
 * Failures are one-line OncelyErrors: a bad port or host (InvalidOptionError), a store that does
 * not answer (`store_unavailable`), a port in use (`port_in_use`), a port not allowed
 * (`port_forbidden`), an address not on this machine.
 */
export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const port = options.port ?? DEFAULT_SERVER_OPTIONS.port;
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new InvalidOptionError(
      '--port',
      port,
      'an integer from 0 to 65535 (0 picks a free port)',
    );
  const host = options.host ?? DEFAULT_SERVER_OPTIONS.host;
  if (typeof host !== 'string' || host.trim() === '')
    throw new InvalidOptionError('--host', host, 'an address or host name, e.g. 127.0.0.1');
  const graceMs = wholeMs('graceMs', options.graceMs ?? DEFAULT_SERVER_OPTIONS.graceMs, 0);
  const settleMs = wholeMs('settleMs', options.settleMs ?? DEFAULT_SERVER_OPTIONS.settleMs, 0);
  const requestTimeoutMs = wholeMs(
    'requestTimeoutMs',
    options.requestTimeoutMs ?? DEFAULT_SERVER_OPTIONS.requestTimeoutMs,
    1,
  );
  const headersTimeoutMs = wholeMs(
    'headersTimeoutMs',
    options.headersTimeoutMs ?? DEFAULT_SERVER_OPTIONS.headersTimeoutMs,
    1,
  );
  const keepAliveTimeoutMs = wholeMs(
    'keepAliveTimeoutMs',
    options.keepAliveTimeoutMs ?? DEFAULT_SERVER_OPTIONS.keepAliveTimeoutMs,
    1,
  );
  // Node refuses a headers timeout longer than the request timeout; say so in our words.
  if (headersTimeoutMs > requestTimeoutMs)
    throw new InvalidOptionError(
      'headersTimeoutMs',
      headersTimeoutMs,
      `at most the request timeout (${requestTimeoutMs} ms)`,
    );
  const purgeIntervalMs =
    options.purgeIntervalMs === undefined
      ? DEFAULT_SERVER_OPTIONS.purgeIntervalMs
      : options.purgeIntervalMs;
  if (purgeIntervalMs !== null && (!Number.isSafeInteger(purgeIntervalMs) || purgeIntervalMs < 1)) {
    throw new InvalidOptionError(
      'purgeIntervalMs',
      purgeIntervalMs,
      'a whole number of milliseconds >= 1, or null for no background purge',
    );
  }
  const clock = options.clock ?? systemClock;
  const log = createRequestLog({ clock, ...(options.log ? { write: options.log } : {}) });

  const backend = await openBackend(options);
  let app: ServerApp<unknown>;
  let outbox: NotificationOutbox | undefined;
  try {
    if (options.notifyUrl !== undefined)
      outbox = await openNotificationOutbox(backend as Backend<unknown>, options, clock, (error) =>
        options.onError?.(error),
      );
    // A request whose client left, or that the server cut (a timeout, the end of the grace), was
    // rolled back on purpose: not a failure to report.
    const appOnError = (error: unknown, request: Request): void => {
      if (!request.signal.aborted) options.onError?.(error, request);
    };
    app = await createServerApp<unknown>({
      ...options,
      backend: backend as Backend<unknown>,
      clock,
      log,
      onError: appOnError,
      ...(outbox === undefined || options.notifyUrl === undefined
        ? {}
        : { notifications: { store: outbox.store, target: options.notifyUrl } }),
    });
    // Only now: the app's set-up above writes its tables (outbox.start says why it waits).
    outbox?.start();
  } catch (error) {
    await outbox?.stop().catch(() => {});
    await backend.close().catch(() => {});
    throw error;
  }

  const onError = options.onError ?? (() => {});
  const refused = (method: string, target: string, status: number): void =>
    log.refused({ method, target, status });
  const listener = toNodeListener(app.fetch, {
    onError: (error) => onError(error),
    onRefused: ({ method, target, status }) => refused(method, target, status),
  });
  const gate = createRequestGate(listener, (req, status) =>
    refused(req.method ?? 'GET', req.url ?? '', status),
  );
  const server = createServer(
    {
      // The Host check is the listener's, so its 400 is problem+json too (RFC 9112 section 3.2).
      requireHostHeader: false,
      requestTimeout: requestTimeoutMs,
      headersTimeout: headersTimeoutMs,
      keepAliveTimeout: keepAliveTimeoutMs,
      // Node checks the timeouts every 30 s by default, so a 10 s limit could take 40 s to act.
      connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(headersTimeoutMs / 4))),
    },
    gate.listener,
  );
  server.on('clientError', (error: NodeJS.ErrnoException, socket) =>
    answerClientError(error, socket, gate),
  );
  server.on('connect', refuseConnect);

  try {
    await listen(server, port, host);
  } catch (error) {
    await outbox?.stop().catch(() => {});
    await backend.close().catch(() => {});
    throw error;
  }
  // Retention holds for keys nobody asks about again; stopped (a purge under way finished) before the store closes.
  // Receipts and hook hits share one retention: both are purged at each turn of the sweep.
  const retention = {
    async purgeExpired(signal?: AbortSignal) {
      const swept = await app.ledger.purgeExpired(signal);
      await app.hooks.service.purgeExpired();
      return swept;
    },
  };
  const sweep =
    purgeIntervalMs === null
      ? undefined
      : startRetentionSweep({
          ledger: retention,
          clock,
          intervalMs: purgeIntervalMs,
          onError: (error) => onError(error),
        });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  let closed: Promise<{ drained: boolean }> | undefined;
  async function shutDown(): Promise<{ drained: boolean }> {
    const swept = sweep?.stop();
    // Still listening while draining: what arrives now is answered 503, not reset.
    const drained = await gate.drain({ graceMs, settleMs });
    const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await stopped;
    await swept;
    await outbox?.stop();
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
    inFlight: () => gate.inFlight(),
    close: () => (closed ??= shutDown()),
  };
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      const where = `${host}:${port}`;
      switch (error.code) {
        case 'EADDRINUSE':
          reject(
            new OncelyError(
              'port_in_use',
              `port ${port} on ${host} is in use; stop the other server or pick another port with --port (0 picks a free one)`,
              { cause: error },
            ),
          );
          return;
        case 'EACCES':
          reject(
            new OncelyError(
              'port_forbidden',
              `not allowed to listen on ${where} (ports below 1024 need privileges); pick another port with --port`,
              { cause: error },
            ),
          );
          return;
        case 'EADDRNOTAVAIL':
        case 'ENOTFOUND':
        case 'EAI_AGAIN':
          reject(
            new OncelyError(
              'host_unavailable',
              `cannot listen on ${host}: not an address of this machine (${error.code})`,
              { cause: error },
            ),
          );
          return;
        default:
          reject(
            new OncelyError('listen_failed', `cannot listen on ${where}: ${error.message}`, {
              cause: error,
            }),
          );
      }
    };
    server.once('error', onError);
    server.listen({ port, host }, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

function wholeMs(option: string, value: number, min: number): number {
  if (!Number.isSafeInteger(value) || value < min)
    throw new InvalidOptionError(option, value, `a whole number of milliseconds >= ${min}`);
  return value;
}
