import type { CompletedEntry } from './ledger-entry.js';

/** What an entry costs the cache besides its body and headers: the Map slot and the object. */
const ENTRY_OVERHEAD_BYTES = 256;

/**
 * Completed entries this process committed or read, so a replay is answered without a trip to the
 * store. Safe because a completed entry never changes before its retention ends (expiresAt): only
 * then may a sweep bury it or a new claim take the key over (decide-claim.ts), and an entry past
 * its retention on the ledger's clock is dropped here, never answered. Bounded by bytes (bodies,
 * headers, keys), the least recently used going first; 0 bytes keeps nothing.
 */
export class ReceiptCache {
  readonly #entries = new Map<string, { readonly entry: CompletedEntry; readonly bytes: number }>();
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
    this.#entries.delete(id);
    if (hit.entry.expiresAt <= nowMs) {
      this.#bytes -= hit.bytes;
      return undefined;
    }
    this.#entries.set(id, hit); // the most recently used goes last
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
    this.#entries.set(id, { entry, bytes });
    this.#bytes += bytes;
    for (const [oldest, { bytes: freed }] of this.#entries) {
      if (this.#bytes <= this.#maxBytes) break;
      this.#entries.delete(oldest);
      this.#bytes -= freed;
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
