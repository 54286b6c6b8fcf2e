/**
 * bench/outbox's contenders and the messages between its harness, its receiver and its worker
 * processes (IPC of child_process.fork).
 */

/** CLOCK_MONOTONIC in ms: one clock for every process on the machine (Linux), unlike Date.now. */
export const monotonicMs = (): number => Number(process.hrtime.bigint()) / 1e6;

export const CONTENDERS = [
  'oncely-sqlite',
  'oncely-postgres',
  'graphile-worker',
  'pg-boss',
  'oncely-sqlite-noop',
  'oncely-postgres-noop',
  'graphile-worker-noop',
] as const;
export type Contender = (typeof CONTENDERS)[number];
export type Engine = 'oncely-sqlite' | 'oncely-postgres' | 'graphile-worker' | 'pg-boss';

/** The queue a contender runs on, and whether its sends are no-ops (claim and settle only). */
export function engineOf(contender: Contender): { engine: Engine; noop: boolean } {
  const noop = contender.endsWith('-noop');
  return { engine: contender.replace(/-noop$/, '') as Engine, noop };
}
export const onPostgres = (contender: Contender): boolean =>
  engineOf(contender).engine !== 'oncely-sqlite';

/** A worker process's settings, passed as its one argument (JSON). */
export interface WorkerConfig {
  readonly contender: Contender;
  /** PostgreSQL URL with this worker's application_name (its backends are found by it). */
  readonly pgUrl: string;
  /** The bench's own schema prefix: oncely's tables, `<schema>_gw`, `<schema>_boss`. */
  readonly schema: string;
  /** Where the SQLite journals are. */
  readonly dir: string;
  /** The receiver's URL. */
  readonly target: string;
  /** Intents claimed (oncely, pg-boss) per batch. */
  readonly batchSize: number;
}

/** A set of intents: a table (oncely), a file (SQLite), a queue (pg-boss); a key prefix for all. */
export type WorkerRequest =
  | { readonly type: 'prepare'; readonly set: string }
  | { readonly type: 'go'; readonly set: string }
  | { readonly type: 'stop' }
  /** Stop, close every connection and exit (a --cpu-prof profile is written then). */
  | { readonly type: 'exit' }
  /** No-op senders: tell the harness when `count` keys of `prefix` are handled. */
  | { readonly type: 'expect'; readonly prefix: string; readonly count: number }
  | { readonly type: 'report'; readonly prefix: string };

export type WorkerReply =
  | { readonly type: 'ready' }
  | { readonly type: 'prepared' }
  | { readonly type: 'started' }
  | { readonly type: 'stopped' }
  | { readonly type: 'failed'; readonly message: string }
  | ArrivalReply;

export type ReceiverRequest =
  | { readonly type: 'expect'; readonly prefix: string; readonly count: number }
  | { readonly type: 'report'; readonly prefix: string };

export type ReceiverReply = { readonly type: 'listening'; readonly url: string } | ArrivalReply;

export type ArrivalReply =
  | { readonly type: 'reached'; readonly prefix: string; readonly atMs: number }
  /** Per key of the prefix: [key, first arrival (monotonicMs), requests]. */
  | {
      readonly type: 'report';
      readonly prefix: string;
      readonly arrivals: readonly (readonly [string, number, number])[];
    };
