import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isInvalidOptionError } from '../../src/contract/errors.js';
import { createLedger, jsonReceipt, type LedgerStore } from '../../src/ledger/index.js';
import type { CompletedEntry } from '../../src/ledger/ledger-entry.js';
import { ReceiptCache } from '../../src/ledger/receipt-cache.js';
import { createMemoryStore, type MemoryTx } from '../../src/stores/memory/index.js';
import { VirtualClock } from '../../src/time/index.js';

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
  it('answers a replay and a conflict from memory: the store is asked once, by the first request', async () => {
    const { store, claims } = counting();
    const ledger = createLedger({ store });
    assert.equal((await ledger.execute(req('k1'), effect)).kind, 'executed');
    assert.equal((await ledger.execute(req('k1'), effect)).kind, 'replayed');
    assert.equal((await ledger.execute(req('k1', 'other'), effect)).kind, 'conflict');
    assert.equal(claims(), 1);
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
    assert.equal(claims(), 2);
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
