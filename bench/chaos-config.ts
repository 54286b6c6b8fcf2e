/** What bench/chaos hands its child processes (as JSON in argv[2]), and the effect's table. */

export interface ReceiverConfig {
  readonly store: 'postgres' | 'sqlite';
  /** The PostgreSQL URL, or the SQLite file. */
  readonly where: string;
  readonly port: number;
  /** The broken mode: the effect written on a connection of its own, outside the transaction. */
  readonly effectOutsideTransaction: boolean;
}

export interface WorkerConfig {
  readonly url: string;
  readonly name: string;
  /** Shorter than the default minute, so a killed worker's claims come free during a short run. */
  readonly leaseMs: number;
}

/** The effect's table: no unique key on purpose, so a second effect is a second row to count. */
export const EFFECTS_DDL =
  'CREATE TABLE IF NOT EXISTS chaos_effects (scope TEXT NOT NULL, key TEXT NOT NULL, pid INTEGER NOT NULL)';
