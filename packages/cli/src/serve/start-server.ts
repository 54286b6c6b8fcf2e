import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock, type Clock } from 'oncely';
import { toNodeListener } from 'oncely/http';
import { createServerApp, type ServerApp } from './create-server-app.js';
import { openNotificationOutbox, type NotificationOutbox } from './notification-outbox.js';
import { openBackend, type AnyBackend, type Backend } from './open-backend.js';
import { listen } from './listen.js';
import { resolveServerOptions, type ServerOptions } from './server-options.js';

export { DEFAULT_SERVER_OPTIONS, type ServerOptions } from './server-options.js';
import { createRequestLog, type RequestLog } from './request-log.js';
import { createRequestGate } from './request-gate.js';
import { answerClientError, refuseConnect } from './raw-answer.js';
import { startRetentionSweep } from './retention-sweep.js';

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
  const { port, host, graceMs, settleMs, purgeIntervalMs, ...timeouts } =
    resolveServerOptions(options);
  const { requestTimeoutMs, headersTimeoutMs, keepAliveTimeoutMs } = timeouts;
  const clock = options.clock ?? systemClock;
  const log = createRequestLog({ clock, ...(options.log ? { write: options.log } : {}) });
  const { backend, app, outbox } = await openServerApp(options, clock, log);

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

/** The store, the app on it and, with --notify-url, the outbox: all open, or none left open. */
async function openServerApp(
  options: ServerOptions,
  clock: Clock,
  log: RequestLog,
): Promise<{
  backend: AnyBackend;
  app: ServerApp<unknown>;
  outbox: NotificationOutbox | undefined;
}> {
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
  return { backend, app, outbox };
}
