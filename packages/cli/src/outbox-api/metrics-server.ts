import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock, type Journal, type SettledEvent } from 'oncely';
import { problemResponse, toNodeListener } from 'oncely/http';
import { listen } from '../serve/listen.js';
import { createOutboxMetrics } from './outbox-metrics.js';

export interface MetricsServer {
  /** `http://host:port`: the metrics are at `${origin}/metrics`. */
  readonly origin: string;
  /** The worker's `onSettled` part: counts its attempts and finished messages. */
  onSettled(event: SettledEvent): void;
  close(): Promise<void>;
}

/**
 * The outbox's Prometheus metrics (outbox-metrics.ts) on a port of their own, for a worker that
 * serves no API (`oncely outbox run --metrics-port`): GET /metrics, nothing else.
 */
export async function startMetricsServer(
  journal: Journal<unknown>,
  port: number,
  host: string,
): Promise<MetricsServer> {
  const metrics = createOutboxMetrics(journal, systemClock);
  const server = createServer(
    toNodeListener(async (request: Request) => {
      const path = new URL(request.url).pathname;
      if (path === '/metrics' && request.method === 'GET') return metrics.respond();
      return problemResponse('not_found', `nothing at ${path}: the metrics are at GET /metrics`);
    }),
  );
  await listen(server, port, host);
  const bound = (server.address() as AddressInfo).port;
  return {
    origin: `http://${host.includes(':') ? `[${host}]` : host}:${bound}`,
    onSettled: metrics.onSettled,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
