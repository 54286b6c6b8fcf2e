import { InvalidOptionError } from 'oncely';
import type { ServerAppDeps } from './create-server-app.js';
import type { BackendOptions } from './open-backend.js';

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

/** The options' numbers, checked (a bad one is an InvalidOptionError naming its flag), defaults in. */
export function resolveServerOptions(options: ServerOptions) {
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
  return {
    port,
    host,
    graceMs,
    settleMs,
    requestTimeoutMs,
    headersTimeoutMs,
    keepAliveTimeoutMs,
    purgeIntervalMs,
  };
}

function wholeMs(option: string, value: number, min: number): number {
  if (!Number.isSafeInteger(value) || value < min)
    throw new InvalidOptionError(option, value, `a whole number of milliseconds >= ${min}`);
  return value;
}
