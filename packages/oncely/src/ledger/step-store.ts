/**
 * One finished step of a request: its recovery point (brandur's "atomic phases"). A request's
 * run is named by (scope, key, runAt): `runAt` is the key's first sighting, which a lease
 * takeover keeps and a new life of the key (after retention) does not, so a retry finds the
 * steps of its own request and never those of an earlier one with the same key.
 */
export interface StepRecord {
  readonly scope: string;
  readonly key: string;
  /** The run's first sighting (Claim.firstSeenAt). */
  readonly runAt: number;
  /** Where the step came in the run, from 0: a retry must call the same names in the same order. */
  readonly position: number;
  readonly name: string;
  /** The step's result as JSON text, or null for `undefined`. */
  readonly result: string | null;
  readonly recordedAt: number;
  /**
   * When the sweep may delete it: the end of the key's retention (extended when a retry
   * resumes). A store may delete it sooner, with the request's receipt (StepStore.forget).
   */
  readonly expiresAt: number;
}

/**
 * Where a ledger keeps its steps' recovery points. `record` writes inside the step's own store
 * transaction (`Tx`, the ledger store's handle), so what the step wrote and its recovery point
 * commit together or not at all. A store is dumb like a LedgerStore: the rules (order, names,
 * first writer wins) live in the ledger's step runner (steps.ts).
 */
export interface StepStore<Tx> {
  /** For messages: 'memory', 'sqlite', 'postgres'. */
  readonly name: string;
  /**
   * The recorded steps of one run, by position, and moves their end to at least `expiresAt`
   * (a resumed request lives on for another retention period, so do its steps). Committed on
   * its own.
   */
  resume(scope: string, key: string, runAt: number, expiresAt: number): Promise<StepRecord[]>;
  /**
   * Adds `step` inside `tx`. False, changing nothing, when the run already has a step at that
   * position: another worker recorded it first (a lease taken over while both ran).
   */
  record(tx: Tx, step: StepRecord): Promise<boolean>;
  /**
   * Adds a step whose function wrote nothing in its transaction, committed on its own before it
   * resolves; a store may write concurrent ones in one transaction. False as for `record`.
   */
  recordAlone(step: StepRecord): Promise<boolean>;
  /**
   * Inside the request's own transaction, just before its receipt: the run is over (a retry is
   * answered from the receipt and never reads its steps again). Called only for a run that one
   * claim held from its start (none taken over): no other worker can still record one of its
   * steps, so no record is needed as a fence against a second effect. A store may delete the run's
   * steps here, so they commit gone with the receipt, or leave them to the sweep. SQLite and
   * memory delete them: their table then holds only runs that can still be resumed, so each
   * step's record touches a few hot pages (a third of the WAL a step wrote when every run was
   * kept). PostgreSQL keeps them for the sweep: one statement more in every request's
   * transaction cost more than the rows.
   */
  forget(tx: Tx, scope: string, key: string, runAt: number): Promise<void>;
  /** Deletes at most `limit` steps with expiresAt <= nowMs, oldest first; how many it deleted. */
  sweep(nowMs: number, limit: number): Promise<number>;
  /** Sets up the table now (also done on first use); rejects when the database cannot be reached. */
  ready(): Promise<void>;
}
