import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isInvalidKeyError, isInvalidOptionError } from '#oncely/contract/errors.js';
import {
  createLedger,
  isBusinessAnswer,
  jsonReceipt,
  receiptJson,
  DEFAULT_LEDGER_OPTIONS,
  type LedgerOptions,
  type Receipt,
} from '#oncely/ledger/index.js';
import { createMemoryStore, type MemoryTx } from '#oncely/stores/memory/index.js';
import { VirtualClock } from '#oncely/time/index.js';

const req = { scope: 'alice', key: 'k1', fingerprint: 'fp' };

describe('createLedger', () => {
  it('has visible defaults: 2 s lease renewed every second, 24 h retention, 7 days of tombstones', () => {
    const ledger = createLedger({ store: createMemoryStore() });
    assert.equal(ledger.options.leaseMs, 2_000);
    assert.equal(ledger.options.heartbeatMs, 1_000);
    assert.equal(
      createLedger({ store: createMemoryStore(), leaseMs: 30_000 }).options.heartbeatMs,
      15_000,
      'half the lease',
    );
    assert.equal(ledger.options.retentionMs, 86_400_000);
    assert.equal(ledger.options.tombstoneMs, DEFAULT_LEDGER_OPTIONS.tombstoneMs);
  });

  it('validates options once, naming the option and the allowed range', () => {
    const store = createMemoryStore();
    const bad: Array<[Partial<LedgerOptions<MemoryTx>>, string, RegExp]> = [
      [{ leaseMs: 0 }, 'leaseMs', />= 2/],
      [{ leaseMs: 1000, heartbeatMs: 1000 }, 'heartbeatMs', /less than leaseMs \(1000\)/],
      [{ heartbeatMs: 0 }, 'heartbeatMs', />= 1/],
      [{ leaseMs: 1.5 }, 'leaseMs', /whole number/],
      [{ leaseMs: 10_000, retentionMs: 5_000 }, 'retentionMs', />= leaseMs \(10000\)/],
      [{ tombstoneMs: -1 }, 'tombstoneMs', />= 0/],
      [{ shouldStore: 'yes' as never }, 'shouldStore', /function/],
      [{ store: {} as never }, 'store', /missing get\(\)/],
      [{ store: { ...store, capabilities: undefined } as never }, 'store', /missing capabilities/],
    ];
    for (const [options, name, allowed] of bad) {
      assert.throws(
        () => createLedger({ store, ...options }),
        (e) => isInvalidOptionError(e) && e.option === name && allowed.test(e.message),
        name,
      );
    }
  });

  it('refuses a malformed request at the edge: bad key, empty scope or fingerprint', async () => {
    const ledger = createLedger({ store: createMemoryStore() });
    const ok = async () => jsonReceipt(201, {});
    await assert.rejects(
      ledger.execute({ ...req, key: '' }, ok),
      (e) => isInvalidKeyError(e) && /empty idempotency key/.test(e.message),
    );
    await assert.rejects(
      ledger.execute({ ...req, scope: '' }, ok),
      (e) => isInvalidOptionError(e) && e.option === 'scope',
    );
    await assert.rejects(
      ledger.execute({ ...req, fingerprint: '' }, ok),
      (e) => isInvalidOptionError(e) && e.option === 'fingerprint',
    );
  });

  it('stores 2xx, 3xx and business 4xx by default, not 5xx nor "come back later" 4xx', () => {
    const r = (status: number): Receipt => ({ status, headers: [], body: new Uint8Array() });
    assert.deepEqual(
      [200, 201, 204, 303, 400, 404, 409, 422, 408, 425, 429, 500, 503].map((s) => [
        s,
        isBusinessAnswer(r(s)),
      ]),
      [
        [200, true],
        [201, true],
        [204, true],
        [303, true],
        [400, true],
        [404, true],
        [409, true],
        [422, true],
        [408, false],
        [425, false],
        [429, false],
        [500, false],
        [503, false],
      ],
    );
  });

  it('takes a storage policy: here 409 is not stored, so a retry runs again', async () => {
    const ledger = createLedger({
      store: createMemoryStore(),
      shouldStore: (r) => r.status !== 409 && isBusinessAnswer(r),
    });
    let runs = 0;
    const effect = async () => (runs++, jsonReceipt(409, { error: 'version conflict' }));
    assert.equal((await ledger.execute(req, effect)).kind, 'not_stored');
    assert.equal((await ledger.execute(req, effect)).kind, 'not_stored');
    assert.equal(runs, 2);
  });

  it('an effect that returns something other than a Receipt rolls back and rethrows a TypeError', async () => {
    const store = createMemoryStore();
    const ledger = createLedger({ store });
    await assert.rejects(
      ledger.execute(req, (tx) => (tx.set('t', 'x', 1), { status: 'ok' }) as never),
      (e) => e instanceof TypeError && /status must be an integer/.test(e.message),
    );
    assert.equal(store.read('t', 'x'), undefined);
    assert.deepEqual(await ledger.lookup('alice', 'k1'), { kind: 'never_seen' });
  });

  it('copies the receipt: changing the returned buffer later does not change what is replayed', async () => {
    const ledger = createLedger({ store: createMemoryStore() });
    const body = new TextEncoder().encode('original');
    await ledger.execute(req, () => ({
      status: 200,
      headers: [['Content-Type', 'text/plain']],
      body,
    }));
    body.fill(0);
    const again = await ledger.execute(req, () => assert.fail('must replay'));
    assert.equal(again.kind, 'replayed');
    if (again.kind !== 'replayed') return;
    assert.equal(new TextDecoder().decode(again.receipt.body), 'original');
    assert.deepEqual(
      again.receipt.headers,
      [['content-type', 'text/plain']],
      'header names are lower-cased',
    );
  });

  it('tells the effect about its claim, and issues a fresh random token per claim', async () => {
    const tokens = ['t-1', 't-2'];
    const store = createMemoryStore();
    const clock = new VirtualClock({ startAt: 5_000 });
    const ledger = createLedger({ store, clock, generateToken: () => tokens.shift()! });
    let seen: unknown;
    await ledger.execute(req, (_tx, claim) => ((seen = claim), jsonReceipt(500, {})));
    assert.deepEqual(seen, {
      scope: 'alice',
      key: 'k1',
      fingerprint: 'fp',
      firstSeenAt: 5_000,
      leaseExpiresAt: 7_000,
      tookOver: false,
    });
    await ledger.execute(req, async () => jsonReceipt(201, {}));
    assert.equal((await store.get('alice', 'k1'))?.token, 't-2');
  });

  it('jsonReceipt and receiptJson round-trip a JSON body', () => {
    const receipt = jsonReceipt(201, { version: 2 }, [['Location', '/notes/1']]);
    assert.deepEqual(receipt.headers, [
      ['content-type', 'application/json'],
      ['location', '/notes/1'],
    ]);
    assert.deepEqual(receiptJson(receipt), { version: 2 });
  });
});
