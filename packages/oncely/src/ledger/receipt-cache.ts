import type { CompletedEntry } from './ledger-entry.js';

/** What an entry costs the cache besides its body and headers: the Map slot and the object. */
const ENTRY_OVERHEAD_BYTES = 256;

/** One kept entry: its id, its size, and whether it was read since eviction last passed it. */
interface Slot {
  readonly id: string;
  readonly entry: CompletedEntry;
  readonly bytes: number;
  used: boolean;
}

/**
 * Completed entries this process committed or read, so a replay is answered without a trip to the
 * store. Safe because a completed entry never changes before its retention ends (expiresAt): only
 * then may a sweep bury it or a new claim take the key over (decide-claim.ts), and an entry past
 * its retention on the ledger's clock is dropped here, never answered. Bounded by bytes (bodies,
 * headers, keys); 0 bytes keeps nothing.
 *
 * Eviction is least recently used in the "second chance" form (CLOCK): a hit only marks its entry
 * used, and eviction, oldest first, spares a used entry once (it goes to the back, unmarked).
 * The order lives in an array of its own (a queue: a head index, slots pushed at the back), not in
 * the Map's: V8 leaves a deleted entry in the Map's table until the table is next rebuilt, and an
 * iterator walks past every one of them, so taking the Map's first entry after evicting from its
 * front cost in proportion to the entries evicted since (12 µs a new key at ten thousand entries,
 * 60 at a hundred thousand: every new key once the cache is full; docs/performance.md). Likewise a
 * hit never deletes and sets its key again (that made the key's hash chain as long as the replays
 * since the last rebuild). A slot the Map no longer holds (replaced, or dropped past retention)
 * stays in the queue until eviction reaches it, and is skipped then; the queue is compacted when
 * such slots outnumber the live ones.
 */
export class ReceiptCache {
  readonly #entries = new Map<string, Slot>();
  /** Eviction order, oldest first from #head; may hold slots the Map no longer has. */
  #order: Slot[] = [];
  #head = 0;
  readonly #maxBytes: number;
  #bytes = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** The completed entry for (scope, key) while its retention lasts at `nowMs`, or undefined. */
  get(scope: string, key: string, nowMs: number): CompletedEntry | undefined {
    const id = idOf(scope, key);
    const hit = this.#entries.get(id);
    if (hit === undefined) return undefined;
    if (hit.entry.expiresAt <= nowMs) {
      this.#entries.delete(id);
      this.#bytes -= hit.bytes;
      return undefined;
    }
    hit.used = true;
    return hit.entry;
  }

  put(entry: CompletedEntry): void {
    const bytes = sizeOf(entry);
    if (bytes > this.#maxBytes / 4) return; // one large body must not empty the cache
    const id = idOf(entry.scope, entry.key);
    const previous = this.#entries.get(id);
    if (previous !== undefined) this.#bytes -= previous.bytes;
    const slot: Slot = { id, entry, bytes, used: false };
    this.#entries.set(id, slot);
    this.#order.push(slot);
    this.#bytes += bytes;
    while (this.#bytes > this.#maxBytes) {
      const oldest = this.#order[this.#head]!;
      this.#head++;
      if (this.#entries.get(oldest.id) !== oldest) continue; // replaced or dropped already
      if (oldest.used || oldest === slot) {
        // Its second chance, to the back; the entry just put is never the one to go.
        oldest.used = false;
        this.#order.push(oldest);
      } else {
        this.#entries.delete(oldest.id);
        this.#bytes -= oldest.bytes;
      }
    }
    this.#compact();
  }

  /**
   * Drops the queue's passed slots once they are at least half of it, and its stale ones once
   * they outnumber the live ones (each pass is paid for by the puts that made what it drops).
   */
  #compact(): void {
    const queued = this.#order.length - this.#head;
    const manyPassed = this.#head >= COMPACT_AT && this.#head >= queued;
    const manyStale = queued > 2 * this.#entries.size + COMPACT_AT;
    if (!manyPassed && !manyStale) return;
    const rest = this.#order.slice(this.#head);
    this.#order = manyStale ? rest.filter((slot) => this.#entries.get(slot.id) === slot) : rest;
    this.#head = 0;
  }
}

/** Below this many passed or stale slots the queue is not compacted: copying it would cost more. */
const COMPACT_AT = 1024;

/** Length-prefixed, so no (scope, key) pair can spell another's id. */
function idOf(scope: string, key: string): string {
  return `${scope.length}:${scope}${key}`;
}

function sizeOf(entry: CompletedEntry): number {
  let bytes = ENTRY_OVERHEAD_BYTES + entry.receipt.body.byteLength;
  bytes +=
    2 * (entry.scope.length + entry.key.length + entry.fingerprint.length + entry.token.length);
  for (const [name, value] of entry.receipt.headers) bytes += 2 * (name.length + value.length);
  return bytes;
}
