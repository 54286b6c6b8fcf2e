/** What bench/anchors and its server process (bench/anchors-server) say to each other. */
import type { AnchorsRowId } from './anchors-variants.js';

export interface ServerSetup {
  /** A fresh directory for the SQLite files (one per row). */
  readonly dir: string;
  /** The rows to mount, each at `POST /<table>/<variant>` (rowKey). */
  readonly rows: readonly AnchorsRowId[];
  /** Redis for the Redis rows, with the key prefix this run writes under. */
  readonly redis?: { readonly url: string; readonly prefix: string };
  /** PostgreSQL for the oncely PostgreSQL row, with the schema this run creates and drops. */
  readonly postgres?: { readonly url: string; readonly schema: string };
}

export type ServerMessage =
  | {
      type: 'listening';
      port: number;
      /** Rows (by rowKey) that could not be set up, and why (the bench prints it and skips them). */
      skipped: Array<{ row: string; reason: string }>;
    }
  | { type: 'count'; row: string; rows: number; cpuMicros: number }
  | { type: 'closed' };
/** `row`: a rowKey. */
export type ClientMessage = { type: 'count'; row: string } | { type: 'close' };
