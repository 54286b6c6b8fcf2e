import { describe, it } from 'node:test';
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { isInvalidOptionError } from '#oncely/contract/errors.js';
import { createLedger, jsonReceipt, type LedgerStore } from '#oncely/ledger/index.js';
import type { CompletedEntry } from '#oncely/ledger/ledger-entry.js';
import { ReceiptCache } from '#oncely/ledger/receipt-cache.js';
import { createMemoryStore, type MemoryTx } from '#oncely/stores/memory/index.js';
import { VirtualClock } from '#oncely/time/index.js';

/** A memory store that counts the claims it is asked for. */
function counting(store = createMemoryStore()): {
  store: LedgerStore<MemoryTx>;
  claims: () => number;
} {
  let claims = 0;
  return {
    // The store's methods are closures over its state, so a spread copy keeps working.
    store: { ...store, claim: (entry) => (claims++, store.claim(entry)) },
    claims: () => claims,
  };
}

const req = (key: string, fingerprint = 'fp') => ({ scope: 'alice', key, fingerprint });
const effect = async () => jsonReceipt(201, { ok: true });

function completed(key: string, bodyBytes: number, expiresAt = 10_000): CompletedEntry {
  return {
    scope: 'alice',
    key,
    fingerprint: 'fp',
    state: 'completed',
    token: 't',
    firstSeenAt: 0,
    completedAt: 0,
    expiresAt,
    receipt: { status: 201, headers: [], body: new Uint8Array(bodyBytes) },
  };
}

describe('the ledger remembers completed receipts', () => {
  it('keeps a receipt once a retry read it: later replays and conflicts are answered from memory', async () => {
    const { store, claims } = counting();
    const ledger = createLedger({ store });
    assert.equal((await ledger.execute(req('k1'), effect)).kind, 'executed');
    assert.equal(claims(), 1);
    // Not kept when written (most keys are never sent again): the first retry asks the store.
    assert.equal((await ledger.execute(req('k1'), effect)).kind, 'replayed');
    assert.equal(claims(), 2);
    assert.equal((await ledger.execute(req('k1'), effect)).kind, 'replayed');
    assert.equal((await ledger.execute(req('k1', 'other'), effect)).kind, 'conflict');
    assert.equal(claims(), 2);
  });

  it('remembers a receipt another process wrote, once it has read it from the store', async () => {
    const shared = createMemoryStore();
    await createLedger({ store: shared }).execute(req('k1'), effect);
    const { store, claims } = counting(shared);
    const ledger = createLedger({ store });
    assert.equal((await ledger.execute(req('k1'), effect)).kind, 'replayed');
    assert.equal((await ledger.execute(req('k1'), effect)).kind, 'replayed');
    assert.equal(claims(), 1);
  });

  it('never answers a receipt past its retention: the key runs again', async () => {
    const clock = new VirtualClock({ startAt: 1_000_000 });
    const { store, claims } = counting();
    const ledger = createLedger({ store, clock, leaseMs: 1_000, retentionMs: 5_000 });
    let runs = 0;
    const counted = async () => (runs++, effect());
    await ledger.execute(req('k1'), counted);
    await clock.advance(5_000);
    assert.equal((await ledger.execute(req('k1'), counted)).kind, 'executed');
    assert.equal(runs, 2);
    assert.equal(claims(), 2);
  });

  it('keeps nothing with receiptCacheBytes: 0; refuses a negative size', async () => {
    const { store, claims } = counting();
    const ledger = createLedger({ store, receiptCacheBytes: 0 });
    await ledger.execute(req('k1'), effect);
    await ledger.execute(req('k1'), effect);
    await ledger.execute(req('k1'), effect);
    assert.equal(claims(), 3, 'every retry asks the store');
    assert.throws(
      () => createLedger({ store, receiptCacheBytes: -1 }),
      (e) => isInvalidOptionError(e) && e.option === 'receiptCacheBytes',
    );
  });

  it('is bounded by bytes: the least recently used goes first, and one large body is not kept', () => {
    // Each entry costs 374 bytes here (body, keys and 256 of overhead): four fit in 1 500.
    const cache = new ReceiptCache(1_500);
    cache.put(completed('a', 100));
    cache.put(completed('b', 100));
    assert.ok(cache.get('alice', 'a', 0), 'a is used: b is now the oldest');
    for (const key of ['c', 'd', 'e']) cache.put(completed(key, 100));
    assert.equal(cache.get('alice', 'b', 0), undefined);
    for (const key of ['a', 'c', 'd', 'e']) assert.ok(cache.get('alice', key, 0), key);
    cache.put(completed('huge', 400));
    assert.equal(cache.get('alice', 'huge', 0), undefined, 'over a quarter of the budget');
    assert.equal(cache.get('alice', 'a', 10_000), undefined, 'retention over at 10 000');
  });

  it('keeps the entry it was just given even when every other entry was read since', () => {
    const cache = new ReceiptCache(1_500);
    for (const key of ['a', 'b', 'c', 'd']) cache.put(completed(key, 100));
    for (const key of ['d', 'c', 'b', 'a']) assert.ok(cache.get('alice', key, 0), key);
    cache.put(completed('e', 100));
    assert.ok(cache.get('alice', 'e', 0), 'the new entry stays');
    const kept = ['a', 'b', 'c', 'd'].filter((key) => cache.get('alice', key, 0) !== undefined);
    assert.equal(kept.length, 3, 'one of the four older entries made room');
  });
});

/**
 * The cache as it was kept before its eviction order moved out of the Map (receipt-cache.ts): the
 * Map's insertion order is the queue. Slow at scale, plain to read: the model the cache must agree
 * with, answer for answer.
 */
class MapOrderedCache {
  readonly #entries = new Map<string, { entry: CompletedEntry; bytes: number; used: boolean }>();
  #bytes = 0;
  constructor(readonly maxBytes: number) {}
  get(key: string, nowMs: number): CompletedEntry | undefined {
    const hit = this.#entries.get(key);
    if (hit === undefined) return undefined;
    if (hit.entry.expiresAt <= nowMs) {
      this.#entries.delete(key);
      this.#bytes -= hit.bytes;
      return undefined;
    }
    hit.used = true;
    return hit.entry;
  }
  put(entry: CompletedEntry, bytes: number): void {
    if (bytes > this.maxBytes / 4) return;
    const previous = this.#entries.get(entry.key);
    if (previous !== undefined) {
      this.#entries.delete(entry.key);
      this.#bytes -= previous.bytes;
    }
    this.#entries.set(entry.key, { entry, bytes, used: false });
    this.#bytes += bytes;
    while (this.#bytes > this.maxBytes) {
      const [oldest, slot] = this.#entries.entries().next().value!;
      this.#entries.delete(oldest);
      if (slot.used || oldest === entry.key) {
        slot.used = false;
        this.#entries.set(oldest, slot);
      } else this.#bytes -= slot.bytes;
    }
  }
}

describe("the receipt cache's eviction order at scale", () => {
  it('survives the compaction of its queue: the oldest entry still goes first', () => {
    const cache = new ReceiptCache(1_500); // four of these entries fit (374 bytes each)
    cache.put(completed('e', 100));
    // Replaced 2 000 times: the queue fills with replaced slots and is compacted.
    for (let i = 0; i < 2_000; i++) cache.put(completed('a', 100));
    for (const key of ['b', 'c', 'd']) cache.put(completed(key, 100));
    assert.equal(cache.get('alice', 'e', 0), undefined, 'the oldest went first');
    for (const key of ['a', 'b', 'c', 'd']) assert.ok(cache.get('alice', key, 0), key);
  });

  it('evicts a full cache of small entries, entry after entry, the oldest first', () => {
    const cache = new ReceiptCache(382_000); // a thousand entries of k1000 … k4999 (382 bytes)
    for (let i = 1000; i < 5_000; i++) cache.put(completed(`k${i}`, 100));
    assert.equal(cache.get('alice', 'k3999', 0), undefined);
    for (const i of [4000, 4500, 4999]) assert.ok(cache.get('alice', `k${i}`, 0), `k${i}`);
  });
});

describe('the receipt cache agrees with a Map-ordered model', () => {
  it('answers every get as the model does, over long runs of puts, hits, re-puts and expiries', () => {
    const put = (keys: number, body: number) =>
      fc.record({
        put: fc.integer({ min: 0, max: keys }),
        body: fc.integer({ min: 0, max: body }),
        expiresAt: fc.integer({ min: 1, max: 100 }),
      });
    const get = fc.record({
      get: fc.integer({ min: 0, max: 40 }),
      at: fc.integer({ min: 0, max: 100 }),
    });
    // First re-puts of six small entries, which fit: the queue fills with replaced slots and is
    // compacted (more than 1 024 of them). Then puts of 41 keys, larger, and gets: eviction on
    // most puts, the queue's head past 1 024 slots.
    const run = fc.tuple(
      fc.array(put(5, 100), { minLength: 1200, maxLength: 2500 }),
      fc.array(fc.oneof({ arbitrary: put(40, 600), weight: 3 }, { arbitrary: get, weight: 1 }), {
        minLength: 2000,
        maxLength: 4000,
      }),
    );
    fc.assert(
      fc.property(run, ([fill, churn]) => {
        const cache = new ReceiptCache(3_000);
        const model = new MapOrderedCache(3_000);
        for (const o of [...fill, ...churn]) {
          if ('put' in o) {
            const entry = completed(`k${o.put}`, o.body, o.expiresAt);
            cache.put(entry);
            // The cache's own size of it: 256 + body + twice the key's, token's and fingerprint's.
            model.put(entry, 256 + o.body + 2 * ('alice'.length + entry.key.length + 2 + 1));
          } else {
            const key = `k${o.get}`;
            assert.equal(cache.get('alice', key, o.at), model.get(key, o.at), `get ${key}`);
          }
        }
      }),
      { numRuns: 40 },
    );
  });
});
