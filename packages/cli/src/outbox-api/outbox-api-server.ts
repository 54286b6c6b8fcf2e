import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOutboxWorker, systemClock, type Clock, type Journal, type Ledger } from 'oncely';
import { toNodeListener } from 'oncely/http';
import type { Callers } from '../serve/callers.js';
import { listen } from '../serve/listen.js';
import { startRetentionSweep } from '../serve/retention-sweep.js';
import { createOutboxApiApp } from './outbox-api-app.js';
import { createOutboxMetrics } from './outbox-metrics.js';

export interface OutboxApiServerOptions {
  readonly journal: Journal<unknown>;
  readonly ledger: Ledger<unknown>;
  readonly callers: Callers;
  /** @default '127.0.0.1' */
  readonly host?: string;
  /** @default 0 (a free port) */
  readonly port?: number;
  /**
   * Runs an outbox worker in this process too (`--worker`): it sends what the API records, and
   * its attempts are counted in /metrics. Endpoints sign with their own secrets.
   */
  readonly worker?: boolean;
  /** Sends the worker's attempts. @default node:http */
  readonly fetch?: typeof globalThis.fetch;
  /** Told about a pass the worker could not finish, or a purge of receipts that failed. @default nothing */
  readonly onError?: (error: unknown) => void;
  /** @default systemClock */
  readonly clock?: Clock;
  /** How often expired receipts of the API's ledger are purged (as `oncely serve`). @default 60000 */
  readonly purgeIntervalMs?: number;
}

export interface OutboxApiServer {
  readonly origin: string;
  close(): Promise<void>;
}

/** Serves the outbox API (and a worker when asked) until close(). */
export async function startOutboxApi(options: OutboxApiServerOptions): Promise<OutboxApiServer> {
  const clock = options.clock ?? systemClock;
  const host = options.host ?? '127.0.0.1';
  const metrics = createOutboxMetrics(options.journal, clock);
  const app = createOutboxApiApp({ ...options, metrics, clock });
  const server = createServer(toNodeListener(app.fetch));
  await listen(server, options.port ?? 0, host);
  const stop = new AbortController();
  const working = options.worker
    ? createOutboxWorker({
        store: options.journal.store,
        clock,
        ...(options.fetch ? { fetch: options.fetch } : {}),
        onSettled: metrics.onSettled,
        ...(options.onError ? { onError: options.onError } : {}),
      }).run(stop.signal)
    : Promise.resolve();
  // The receipts are kept for the ledger's retention, then purged: the table does not grow for ever.
  const sweep = startRetentionSweep({
    ledger: options.ledger,
    clock,
    intervalMs: options.purgeIntervalMs ?? 60_000,
    ...(options.onError ? { onError: options.onError } : {}),
  });
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    async close() {
      stop.abort();
      await sweep.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await working; // the batch in flight finishes and is written down
    },
  };
}
