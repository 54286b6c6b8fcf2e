import { OncelyError } from '../../../contract/errors.js';
import type { CompletedEntry, EntryVersion, InFlightEntry } from '../../../ledger/ledger-entry.js';

/**
 * A claim of this process, held in memory while the batch it was made in is open.
 *
 * Why: a claim is made while this process holds the file's write lock (its batch is open), so no
 * other process can write the key until that batch commits. When the receipt comes before the
 * commit (most requests: the effect and the receipt run within the same turn of the event loop),
 * the in-flight row would only ever be seen by this process, and it was written for nothing and
 * then overwritten by the receipt: two B-tree writes of the same row where one will do. So the
 * claim stays here, and the receipt is one INSERT. A claim still running when its batch commits
 * is written as an in-flight row just before COMMIT (`writeBeforeCommit`), so other processes see
 * it exactly as before; from then on it is an ordinary row.
 *
 * The receipt of such a claim is not written in its section either, but kept with the batch once
 * the section is kept, and the batch's receipts are written one after another just before COMMIT.
 * Written at the end of each request, the INSERT found the B-trees it walks gone from the CPU's
 * caches (the request's JavaScript had run in between) and cost three times what it costs among
 * the other receipts (docs/performance.md). Nothing else writes the key meanwhile: this process
 * holds the write lock and the claim, and a duplicate is held off until the batch has committed.
 */
interface PendingClaim {
  entry: InFlightEntry;
  readonly batch: object;
  /** Written as an in-flight row (its batch committed while it ran). */
  written: boolean;
  /** Completed or released: nothing left to write. */
  done: boolean;
}

/**
 * How a completed claim's receipt is written: 'deferred', kept with the batch (written just before
 * its COMMIT); 'update' of its in-flight row; 'lost' with its rolled-back batch.
 */
export type ReceiptWrite = 'deferred' | 'update' | 'lost';

/** How the store writes the rows this keeps, on the writer, inside the open batch. */
export interface PendingRowWrites {
  /** Inserts an in-flight row. */
  inFlight(entry: InFlightEntry): void;
  /** Inserts a receipt row; answers how many rows it inserted (1, or 0 when the key has a row). */
  receipt(entry: CompletedEntry): number;
}

export class PendingClaims {
  readonly #claims = new Map<string, PendingClaim>();
  /** Claims of the open batch, in the order made: written before it commits unless done. */
  #unwritten: PendingClaim[] = [];
  /** Receipts completed in the section held now: the batch's once that section is kept. */
  #sectionReceipts: CompletedEntry[] = [];
  /** Receipts of the open batch's kept sections, written just before it commits. */
  #receipts: CompletedEntry[] = [];
  /** The keys of both lists above. */
  readonly #receiptKeys = new Set<string>();
  readonly #write: PendingRowWrites;

  constructor(write: PendingRowWrites) {
    this.#write = write;
  }

  /** Keeps `entry` as claimed in `batch` (the open batch, whose lock this process holds). */
  add(entry: InFlightEntry, batch: object): void {
    const claim: PendingClaim = { entry, batch, written: false, done: false };
    this.#claims.set(idOf(entry.scope, entry.key), claim);
    this.#unwritten.push(claim);
  }

  /** The in-flight entry of a claim not yet written, for a duplicate to be told to wait. */
  unwritten(scope: string, key: string): InFlightEntry | undefined {
    const claim = this.#claims.get(idOf(scope, key));
    return claim !== undefined && !claim.written ? claim.entry : undefined;
  }

  /** True while the key's receipt waits to be written with its batch: it is no longer free. */
  receiptPending(scope: string, key: string): boolean {
    return this.#receiptKeys.has(idOf(scope, key));
  }

  /**
   * Ends the claim matching `expected` and says how its receipt `next` goes into `batch` (the
   * open one): kept here ('deferred') when the claim was never written and its batch is still
   * open; 'lost' when its batch ended without writing it (rolled back: nothing of it remains);
   * else an UPDATE of its row. Called in a held section: see {@link sectionEnded}.
   */
  complete(expected: EntryVersion, batch: object | undefined, next: CompletedEntry): ReceiptWrite {
    const claim = this.#take(expected);
    if (claim === undefined || claim.written) return 'update';
    if (claim.batch !== batch) return 'lost';
    this.#sectionReceipts.push(next);
    this.#receiptKeys.add(idOf(next.scope, next.key));
    return 'deferred';
  }

  /**
   * The held section ended: its receipts join the batch when it was kept, and are forgotten when
   * it was undone (its effect is gone, and its claim with it).
   */
  sectionEnded(kept: boolean): void {
    const receipts = this.#sectionReceipts;
    if (receipts.length === 0) return;
    this.#sectionReceipts = [];
    if (kept) this.#receipts.push(...receipts);
    else for (const entry of receipts) this.#receiptKeys.delete(idOf(entry.scope, entry.key));
  }

  /** Ends the claim matching `expected`: true when it was never written (nothing to delete). */
  release(expected: EntryVersion): boolean {
    const claim = this.#take(expected);
    return claim !== undefined && !claim.written;
  }

  /** Moves an unwritten claim's lease (written at the commit with it): false when not one. */
  renew(expected: EntryVersion, leaseExpiresAt: number): boolean {
    const claim = this.#claims.get(idOf(expected.scope, expected.key));
    if (claim === undefined || claim.written || claim.entry.token !== expected.token) return false;
    claim.entry = { ...claim.entry, leaseExpiresAt };
    return true;
  }

  /** Writes the claim matching `expected` now, if it is still only here (before a takeover). */
  writeRow(expected: EntryVersion): void {
    const claim = this.#claims.get(idOf(expected.scope, expected.key));
    if (claim === undefined || claim.written || claim.entry.token !== expected.token) return;
    this.#write.inFlight(claim.entry);
    claim.written = true;
  }

  /**
   * Before the open batch commits (no section is held): its receipts, then its claims still
   * running as in-flight rows. A receipt that inserts nothing throws, and the batch rolls back:
   * an effect must not commit without its receipt.
   */
  writeBeforeCommit(): void {
    const receipts = this.#receipts;
    this.#receipts = [];
    for (const entry of receipts)
      if (this.#write.receipt(entry) !== 1) throw new ReceiptNotWrittenError(entry.key);
    this.#receiptKeys.clear();
    const claims = this.#unwritten;
    if (claims.length === 0) return;
    this.#unwritten = [];
    for (const claim of claims) {
      if (claim.done || claim.written) continue;
      this.#write.inFlight(claim.entry);
      claim.written = true;
    }
  }

  /** A batch ended without committing: its claims and receipts are lost, none of them written. */
  dropUnwritten(): void {
    this.#unwritten = [];
    this.#sectionReceipts = [];
    this.#receipts = [];
    this.#receiptKeys.clear();
  }

  #take(expected: EntryVersion): PendingClaim | undefined {
    const id = idOf(expected.scope, expected.key);
    const claim = this.#claims.get(id);
    if (claim === undefined || claim.entry.token !== expected.token) return undefined;
    this.#claims.delete(id);
    claim.done = true;
    return claim;
  }
}

/** A receipt row that SQLite did not insert: its batch is rolled back, effects and all. */
export class ReceiptNotWrittenError extends OncelyError {
  constructor(key: string) {
    super(
      'receipt_not_written',
      `the receipt of key ${key} could not be inserted (a row for that key is there already), so its batch is rolled back, effects included`,
    );
    this.name = 'ReceiptNotWrittenError';
  }
}

function idOf(scope: string, key: string): string {
  return `${scope.length}:${scope}${key}`;
}
