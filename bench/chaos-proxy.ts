/**
 * bench/chaos's round-robin TCP proxy in front of the PostgreSQL receivers, with three faults a
 * network makes: a response dropped after its request was forwarded (the swallowed ack: the
 * effect happened, the sender never hears of it), a connection reset, and delay. It speaks TCP,
 * not HTTP: a fault strikes the chunks of a connection, whatever requests they carry.
 */
import { connect, createServer, type Socket } from 'node:net';
import type { Random } from 'oncely';

export interface ProxyFaults {
  /** Chance that an answer chunk from a receiver is dropped and both sockets destroyed. */
  swallowRate: number;
  /** Chance that a request chunk resets the connection before it is forwarded. */
  resetRate: number;
  /** Added before each chunk goes on, both ways (order kept). */
  delayMs: number;
}

export const NO_PROXY_FAULTS: ProxyFaults = { swallowRate: 0, resetRate: 0, delayMs: 0 };

export interface ChaosProxy {
  readonly port: number;
  faults: ProxyFaults;
  /** How many answers were swallowed and connections reset so far. */
  readonly counts: { swallowed: number; reset: number; connections: number };
  close(): Promise<void>;
}

export function startChaosProxy(
  upstreamPorts: readonly number[],
  random: Random,
): Promise<ChaosProxy> {
  let next = 0;
  const counts = { swallowed: 0, reset: 0, connections: 0 };
  const sockets = new Set<Socket>();
  const proxy: { faults: ProxyFaults } = { faults: NO_PROXY_FAULTS };

  const server = createServer((client) => {
    counts.connections++;
    const port = upstreamPorts[next++ % upstreamPorts.length]!;
    const upstream = connect(port, '127.0.0.1');
    sockets.add(client).add(upstream);
    const end = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    // Each direction keeps its order: a delayed chunk holds the ones behind it.
    let toUpstream = Promise.resolve();
    let toClient = Promise.resolve();
    const later = (ms: number): Promise<void> =>
      ms === 0 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, ms));
    client.on('data', (chunk) => {
      if (random.next() < proxy.faults.resetRate) {
        counts.reset++;
        client.resetAndDestroy();
        end();
        return;
      }
      const delayMs = proxy.faults.delayMs;
      toUpstream = toUpstream.then(() => later(delayMs)).then(() => void upstream.write(chunk));
    });
    upstream.on('data', (chunk) => {
      if (random.next() < proxy.faults.swallowRate) {
        counts.swallowed++;
        end();
        return;
      }
      const delayMs = proxy.faults.delayMs;
      toClient = toClient.then(() => later(delayMs)).then(() => void client.write(chunk));
    });
  });

  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve({
        port: (server.address() as { port: number }).port,
        get faults() {
          return proxy.faults;
        },
        set faults(faults: ProxyFaults) {
          proxy.faults = faults;
        },
        counts,
        close: () =>
          new Promise((done) => {
            for (const socket of sockets) socket.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}
