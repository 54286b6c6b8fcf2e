import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLedger, jsonReceipt, type LedgerStore } from '#oncely/ledger/index.js';
import { createMemoryStore, type MemoryTx } from '#oncely/stores/memory/index.js';
import { VirtualClock } from '#oncely/time/index.js';

const LEASE_MS = 2_000;
const HEARTBEAT_MS = 1_000;

/** An effect that runs until its gate opens. */
function gated() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let enter!: () => void;
  const entered = new Promise<void>((resolve) => (enter = resolve));
  const effect = async () => (enter(), await opened, jsonReceipt(201, {}));
  return { open, entered, effect };
}

/** The lease of `key` as stored, once the renewals in flight have landed. */
async function leaseOf(store: LedgerStore<MemoryTx>, key: string): Promise<number | undefined> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
  const entry = await store.get('alice', key);
  return entry?.state === 'in_flight' ? entry.leaseExpiresAt : undefined;
}

describe('one heartbeat for every running effect', () => {
  it('renews each held claim at every beat, keeps beating while one is held, and stops at the first beat after the last', async () => {
    const clock = new VirtualClock({ startAt: 0 });
    const store = createMemoryStore();
    const ledger = createLedger({ store, clock, leaseMs: LEASE_MS, heartbeatMs: HEARTBEAT_MS });
    const req = (key: string) => ({ scope: 'alice', key, fingerprint: 'fp' });

    const a = gated();
    const runningA = ledger.execute(req('a'), a.effect);
    await a.entered;
    await clock.advance(500);
    const b = gated();
    const runningB = ledger.execute(req('b'), b.effect);
    await b.entered;
    assert.equal(await leaseOf(store, 'b'), 500 + LEASE_MS, 'as claimed');

    await clock.advance(500); // the beat at 1 000 renews both, b half a beat after its claim
    assert.equal(await leaseOf(store, 'a'), 1_000 + LEASE_MS);
    assert.equal(await leaseOf(store, 'b'), 1_000 + LEASE_MS);

    a.open();
    assert.equal((await runningA).kind, 'executed');
    for (const at of [2_000, 3_000, 4_000]) {
      await clock.advance(HEARTBEAT_MS);
      assert.equal(await leaseOf(store, 'b'), at + LEASE_MS, `b still renewed at ${at}`);
      const other = await ledger.execute(req('b'), async () => assert.fail('b is alive'));
      assert.equal(other.kind, 'in_flight');
    }

    b.open();
    assert.equal((await runningB).kind, 'executed');
    // The beat due at 5 000 finds nothing held and ends: no renewal, no timer left after it.
    assert.equal(clock.backgroundCount, 1, 'the next beat is still due');
    let renewals = 0;
    const renew = store.renew.bind(store);
    store.renew = (...args) => (renewals++, renew(...args));
    await clock.advance(HEARTBEAT_MS);
    assert.equal(renewals, 0, 'nothing held: nothing renewed');
    assert.equal(clock.backgroundCount, 0, 'no timer left once a beat finds nothing held');
  });
});
