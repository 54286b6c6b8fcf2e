/** What bench/ledger and its server thread (bench/ledger-server) say to each other. */
export type BenchTarget =
  | {
      readonly kind: 'sqlite';
      /** The durable database (synchronous = FULL). */
      readonly file: string;
      /** The 'process' durability's database (synchronous = NORMAL): a file of its own. */
      readonly processFile: string;
    }
  | {
      readonly kind: 'postgres';
      readonly url: string;
      readonly schema: string;
      /** Every pool of the server says this, so the bench can find their backends. */
      readonly applicationName: string;
    };

export type ServerMessage =
  | { type: 'listening'; port: number }
  | { type: 'count'; rows: number }
  | { type: 'closed' };
export type ClientMessage = { type: 'count' } | { type: 'close' };

/** The bearer token the bench sends: the ledger's scope. */
export const BENCH_TOKEN = 'bench';

/** The durability a route runs at: the middleware's store, or the bare handler's connection. */
export type BenchDurability = 'durable' | 'process';
