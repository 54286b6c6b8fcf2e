import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decideClaim, type LedgerEntry } from '#oncely/ledger/index.js';

const base = {
  scope: 's',
  key: 'k',
  fingerprint: 'fp',
  token: 't',
  firstSeenAt: 0,
  expiresAt: 1000,
};
const inFlight: LedgerEntry = { ...base, state: 'in_flight', leaseExpiresAt: 100 };
const completed: LedgerEntry = {
  ...base,
  state: 'completed',
  completedAt: 10,
  receipt: { status: 201, headers: [], body: new Uint8Array() },
};
const tombstone: LedgerEntry = {
  ...base,
  state: 'expired',
  expiredAt: 1000,
  completedAt: 10,
  expiresAt: 5000,
};

describe('decideClaim (the claim rules, no store, no clock)', () => {
  it('claims a key never seen', () => {
    assert.deepEqual(decideClaim(undefined, 'fp', 0), { action: 'insert' });
  });

  it('replays a completed key with the same fingerprint; refuses another fingerprint', () => {
    assert.equal(decideClaim(completed, 'fp', 500).action, 'replay');
    assert.equal(decideClaim(completed, 'other', 500).action, 'conflict');
  });

  it('checks the fingerprint before the lease: a live or dead lease with another payload is a conflict', () => {
    assert.equal(decideClaim(inFlight, 'other', 50).action, 'conflict');
    assert.equal(decideClaim(inFlight, 'other', 150).action, 'conflict');
  });

  it('waits for a live lease, for exactly the rest of it; takes over from the instant it ends', () => {
    assert.deepEqual(decideClaim(inFlight, 'fp', 99), {
      action: 'wait',
      entry: inFlight,
      retryAfterMs: 1,
    });
    assert.deepEqual(decideClaim(inFlight, 'fp', 100), {
      action: 'take_over',
      reason: 'lease_expired',
      previous: inFlight,
    });
  });

  it('treats a key past retention, or a tombstone, as new whatever the fingerprint', () => {
    assert.equal(decideClaim(completed, 'fp', 999).action, 'replay');
    assert.deepEqual(decideClaim(completed, 'other', 1000), {
      action: 'take_over',
      reason: 'retention_expired',
      previous: completed,
    });
    assert.deepEqual(decideClaim(tombstone, 'other', 1001), {
      action: 'take_over',
      reason: 'retention_expired',
      previous: tombstone,
    });
  });

  it('property: never replays or waits on another fingerprint, never claims over a live entry of the same one', () => {
    const entry = fc.oneof(fc.constant(inFlight), fc.constant(completed), fc.constant(tombstone));
    fc.assert(
      fc.property(
        entry,
        fc.constantFrom('fp', 'other'),
        fc.integer({ min: 0, max: 6000 }),
        (e, fp, now) => {
          const d = decideClaim(e, fp, now);
          const live = e.state !== 'expired' && now < e.expiresAt;
          if (fp !== e.fingerprint && live) return d.action === 'conflict';
          if (!live) return d.action === 'take_over' && d.reason === 'retention_expired';
          if (e.state === 'completed') return d.action === 'replay';
          return (
            e.state === 'in_flight' &&
            (now < e.leaseExpiresAt ? d.action === 'wait' : d.action === 'take_over')
          );
        },
      ),
    );
  });
});
