import type { EntryVersion, InFlightEntry } from '../../ledger/ledger-entry.js';

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
 */
interface PendingClaim {
  entry: InFlightEntry;
  readonly batch: object;
  /** Written as an in-flight row (its batch committed while it ran). */
  written: boolean;
  /** Completed or released: nothing left to write. */
  done: boolean;
}

/** How a completed claim's receipt is written. */
export type ReceiptWrite = 'insert' | 'update' | 'lost';

export class PendingClaims {
  readonly #claims = new Map<string, PendingClaim>();
  /** Claims of the open batch, in the order made: written before it commits unless done. */
  #unwritten: PendingClaim[] = [];
  readonly #writeRow: (entry: InFlightEntry) => void;

  /** `writeRow` inserts an in-flight row on the writer, inside the batch about to commit. */
  constructor(writeRow: (entry: InFlightEntry) => void) {
    this.#writeRow = writeRow;
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

  /**
   * Ends the claim matching `expected` and says how its receipt goes into `batch` (the open one):
   * an INSERT when it was never written and its batch is still open; 'lost' when its batch ended
   * without writing it (rolled back: nothing of it remains); else an UPDATE of its row.
   */
  complete(expected: EntryVersion, batch: object | undefined): ReceiptWrite {
    const claim = this.#take(expected);
    if (claim === undefined || claim.written) return 'update';
    return claim.batch === batch ? 'insert' : 'lost';
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
    this.#writeRow(claim.entry);
    claim.written = true;
  }

  /** Before the open batch commits: its claims still running become in-flight rows in it. */
  writeBeforeCommit(): void {
    const claims = this.#unwritten;
    if (claims.length === 0) return;
    this.#unwritten = [];
    for (const claim of claims) {
      if (claim.done || claim.written) continue;
      this.#writeRow(claim.entry);
      claim.written = true;
    }
  }

  /** A batch ended without committing: its claims are lost, and nothing of them was written. */
  dropUnwritten(): void {
    this.#unwritten = [];
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

function idOf(scope: string, key: string): string {
  return `${scope.length}:${scope}${key}`;
}
