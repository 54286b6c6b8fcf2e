/** What bench/anchors and its server process (bench/anchors-server) say to each other. */
import type { VariantId } from './anchors-variants.js';

export interface ServerSetup {
  /** A fresh directory for the SQLite files (one per variant). */
  readonly dir: string;
  readonly variants: readonly VariantId[];
  /** Redis for the Redis rows, with the key prefix this run writes under. */
  readonly redis?: { readonly url: string; readonly prefix: string };
  /** PostgreSQL for the oncely PostgreSQL row, with the schema this run creates and drops. */
  readonly postgres?: { readonly url: string; readonly schema: string };
}

export type ServerMessage =
  | {
      type: 'listening';
      port: number;
      /** Variants that could not be set up, and why (the bench prints it and skips them). */
      skipped: Array<{ variant: VariantId; reason: string }>;
    }
  | { type: 'count'; variant: VariantId; rows: number; cpuMicros: number }
  | { type: 'closed' };
export type ClientMessage = { type: 'count'; variant: VariantId } | { type: 'close' };
