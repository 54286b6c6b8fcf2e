import type { CompletedEntry } from './ledger-entry.js';

/** What an entry costs the cache besides its body and headers: the Map slot and the object. */
const ENTRY_OVERHEAD_BYTES = 256;

/** One kept entry: its size, and whether it was read since eviction last passed it. */
interface Slot {
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
 * used, and eviction, oldest first, spares a used entry once (it goes to the back, unmarked). A hit
 * must not move its entry in the Map: V8 leaves a deleted entry in its hash bucket's chain until
 * the table is next rebuilt, so deleting and setting one key on every replay made that key's chain,
 * and every later `set` of it, as long as the replays since the last rebuild (25 µs a hit at ten
 * thousand entries; docs/performance.md).
 */
export class ReceiptCache {
  readonly #entries = new Map<string, Slot>();
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
    if (previous !== undefined) {
      this.#entries.delete(id);
      this.#bytes -= previous.bytes;
    }
    this.#entries.set(id, { entry, bytes, used: false });
    this.#bytes += bytes;
    while (this.#bytes > this.#maxBytes) {
      const [oldest, slot] = this.#entries.entries().next().value!;
      this.#entries.delete(oldest);
      if (slot.used || oldest === id) {
        // Its second chance, to the back; the entry just put is never the one to go.
        slot.used = false;
        this.#entries.set(oldest, slot);
      } else {
        this.#bytes -= slot.bytes;
      }
    }
  }
}

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
