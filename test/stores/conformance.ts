import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Receipt } from '#oncely/contract/receipt.js';
import { createLedger, type Ledger, type LedgerOptions } from '#oncely/ledger/index.js';
import type { LedgerStore } from '#oncely/ledger/ledger-store.js';
import { versionOf, type InFlightEntry } from '#oncely/ledger/ledger-entry.js';
import { VirtualClock } from '#oncely/time/virtual-clock.js';
import type { Clock } from '#oncely/time/clock.js';
import { bindStore } from '../support/bind-store.js';

/** What the suite needs from one backend: a fresh store, and a way to write and count effects. */
export interface ConformanceHarness<Tx> {
  readonly store: LedgerStore<Tx>;
  /** Writes one effect row (id) through the transaction handle: it must commit or roll back with the receipt. */
  writeEffect(tx: Tx, id: string): Promise<void>;
  /** How many committed effect rows have this id. */
  countEffects(id: string): Promise<number>;
  close(): Promise<void>;
}

export interface ConformanceOptions {
  /** A reason to skip the whole suite (printed by the runner), or undefined to run it. */
  readonly skip?: string | undefined;
}

const START_AT = 1_700_000_000_000;
const LEASE_MS = 30_000;
const RETENTION_MS = 86_400_000;
const TOMBSTONE_MS = 3_600_000;
const FP = 'fp-one';

/** Every byte value, so a driver that mangles binary (or trims, or decodes as text) shows it. */
const ALL_BYTES = Uint8Array.from({ length: 256 }, (_, i) => i);

function receipt(
  status = 201,
  body: Uint8Array = new TextEncoder().encode('{"ok":true}'),
): Receipt {
  return {
    status,
    headers: [
      ['content-type', 'application/json'],
      ['etag', '"v1" ; weird=\u00e9'],
    ],
    body,
  };
}

/** Lets other requests' promises run, so concurrent requests really overlap inside the effect. */
const yieldTurns = async (n = 3): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};

/**
 * The one suite every LedgerStore passes (docs/design.md, habit 5). Each test gets
 * a fresh harness; time is a VirtualClock, tokens a counter, so runs are reproducible.
 */
export function runLedgerConformance<Tx>(
  name: string,
  makeHarness: () => Promise<ConformanceHarness<Tx>>,
  options: ConformanceOptions = {},
): void {
  // One test at a time inside a run, even when runs go side by side (orm-conformance).
  const suite = { skip: options.skip ?? false, concurrency: false };
  describe(`ledger conformance: ${name}`, suite, () => {
    async function setUp(overrides: Partial<LedgerOptions<Tx>> = {}) {
      const h = await makeHarness();
      const clock = new VirtualClock({ startAt: START_AT });
      let n = 0;
      const ledger: Ledger<Tx> = createLedger({
        store: h.store,
        clock,
        leaseMs: LEASE_MS,
        retentionMs: RETENTION_MS,
        tombstoneMs: TOMBSTONE_MS,
        generateToken: () => `token-${++n}`,
        ...overrides,
      });
      let effects = 0;
      const effect =
        (id: string, answer: Receipt = receipt()) =>
        async (tx: Tx) => {
          effects++;
          await h.writeEffect(tx, id);
          return answer;
        };
      return { h, clock, ledger, effect, effectsRun: () => effects };
    }

    async function withSetUp(
      fn: (s: Awaited<ReturnType<typeof setUp>>) => Promise<void>,
      overrides?: Partial<LedgerOptions<Tx>>,
    ): Promise<void> {
      const s = await setUp(overrides);
      try {
        await fn(s);
      } finally {
        await s.h.close();
      }
    }

    const req = (key: string, fingerprint = FP, scope = 'alice') => ({ scope, key, fingerprint });

    it('runs a new key once, commits its effect with the receipt, and finds it by lookup', () =>
      withSetUp(async ({ h, clock, ledger, effect }) => {
        const result = await ledger.execute(req('k1'), effect('e1'));
        assert.equal(result.kind, 'executed');
        assert.equal(await h.countEffects('e1'), 1);
        const found = await ledger.lookup('alice', 'k1');
        assert.equal(found.kind, 'found');
        if (found.kind !== 'found') return;
        assert.equal(found.fingerprint, FP);
        assert.equal(found.firstSeenAt, START_AT);
        assert.equal(found.expiresAt, clock.now() + RETENTION_MS);
        assert.deepEqual(found.receipt, receipt());
      }));

    it('replays a completed key byte for byte without running the effect again', () =>
      withSetUp(async ({ h, ledger, effect, effectsRun }) => {
        const original = receipt(200, ALL_BYTES);
        const first = await ledger.execute(req('k-bytes'), effect('e', original));
        const again = await ledger.execute(req('k-bytes'), effect('e', receipt(500)));
        assert.equal(first.kind, 'executed');
        assert.equal(again.kind, 'replayed');
        if (again.kind !== 'replayed' || first.kind !== 'executed') return;
        assert.deepEqual(again.receipt, original);
        assert.ok(again.receipt.body instanceof Uint8Array);
        assert.deepEqual([...again.receipt.body], [...ALL_BYTES]);
        assert.equal(effectsRun(), 1);
        assert.equal(await h.countEffects('e'), 1);
      }));

    it('refuses a different fingerprint on a completed key, and on an in-flight key before the lease check', () =>
      withSetUp(async ({ h, ledger, effect }) => {
        await ledger.execute(req('k-done'), effect('e'));
        const onCompleted = await ledger.execute(req('k-done', 'fp-other'), effect('e2'));
        assert.deepEqual(onCompleted, {
          kind: 'conflict',
          state: 'completed',
          firstSeenAt: START_AT,
        });

        await h.store.claim(inFlight('alice', 'k-busy', 'dead-token', START_AT));
        const onInFlight = await ledger.execute(req('k-busy', 'fp-other'), effect('e3'));
        assert.deepEqual(onInFlight, {
          kind: 'conflict',
          state: 'in_flight',
          firstSeenAt: START_AT,
        });
        assert.equal((await h.countEffects('e2')) + (await h.countEffects('e3')), 0);
      }));

    it('two concurrent claims of one key: exactly one wins', () =>
      withSetUp(async ({ h, ledger }) => {
        const run = (tag: string) =>
          ledger.execute(req('k-race'), async (tx) => {
            await yieldTurns();
            await h.writeEffect(tx, 'race');
            await yieldTurns();
            return receipt(201, new TextEncoder().encode(tag));
          });
        const results = await Promise.all([run('a'), run('b')]);
        const kinds = results.map((r) => r.kind).sort();
        assert.equal(kinds.filter((k) => k === 'executed').length, 1, `kinds: ${kinds.join(',')}`);
        assert.ok(
          kinds.every((k) => k === 'executed' || k === 'in_flight' || k === 'replayed'),
          kinds.join(','),
        );
        assert.equal(await h.countEffects('race'), 1);
      }));

    it('twenty concurrent requests on one key run one effect; the rest wait or replay', () =>
      withSetUp(async ({ h, ledger }) => {
        let ran = 0;
        const results = await Promise.all(
          Array.from({ length: 20 }, () =>
            ledger.execute(req('k-crowd'), async (tx) => {
              ran++;
              await yieldTurns();
              await h.writeEffect(tx, 'crowd');
              return receipt();
            }),
          ),
        );
        assert.equal(ran, 1);
        assert.equal(results.filter((r) => r.kind === 'executed').length, 1);
        assert.ok(results.every((r) => ['executed', 'in_flight', 'replayed'].includes(r.kind)));
        assert.equal(await h.countEffects('crowd'), 1);
      }));

    it('a forced receipt-write failure rolls back the effect and releases the key (the notes story)', () =>
      withSetUp(async ({ h, clock, effect }) => {
        const diskFull = new Error('forced receipt-write failure');
        const failing: LedgerStore<Tx> = {
          ...bindStore(h.store),
          complete: async () => {
            throw diskFull;
          },
        };
        const broken = createLedger({ store: failing, clock, generateToken: () => 'token-f' });
        const result = await broken.execute(req('k-fail'), effect('edit'));
        assert.deepEqual(result, { kind: 'unavailable', stage: 'transaction', cause: diskFull });
        assert.equal(await h.countEffects('edit'), 0, 'the effect rolled back with the receipt');
        const healthy = createLedger({ store: h.store, clock });
        assert.deepEqual(await healthy.lookup('alice', 'k-fail'), { kind: 'never_seen' });
        assert.equal((await healthy.execute(req('k-fail'), effect('edit'))).kind, 'executed');
        assert.equal(await h.countEffects('edit'), 1);
      }));

    it('an effect that throws rolls back, releases the key and rethrows; a retry runs again', () =>
      withSetUp(async ({ h, ledger, effect }) => {
        const boom = new Error('handler failed');
        await assert.rejects(
          ledger.execute(req('k-throw'), async (tx) => {
            await h.writeEffect(tx, 'partial');
            throw boom;
          }),
          (error) => error === boom,
        );
        assert.equal(await h.countEffects('partial'), 0);
        assert.equal((await ledger.execute(req('k-throw'), effect('partial'))).kind, 'executed');
        assert.equal(await h.countEffects('partial'), 1);
      }));

    it('a 5xx outcome is not stored: the effect rolls back, the key is released, a retry runs again', () =>
      withSetUp(async ({ h, ledger, effect }) => {
        const first = await ledger.execute(req('k-5xx'), effect('e5', receipt(503)));
        assert.equal(first.kind, 'not_stored');
        if (first.kind === 'not_stored') assert.equal(first.receipt.status, 503);
        assert.equal(await h.countEffects('e5'), 0);
        assert.deepEqual(await ledger.lookup('alice', 'k-5xx'), { kind: 'never_seen' });
        assert.equal(
          (await ledger.execute(req('k-5xx'), effect('e5', receipt(422)))).kind,
          'executed',
        );
        assert.equal((await ledger.execute(req('k-5xx'), effect('e5'))).kind, 'replayed');
        assert.equal(await h.countEffects('e5'), 1);
      }));

    it("a dead worker's lease blocks its key only until the lease expires, not for the retention", () =>
      withSetUp(async ({ h, clock, ledger }) => {
        await h.store.claim(inFlight('alice', 'k-dead', 'dead-token', START_AT));
        await clock.advance(LEASE_MS - 1);
        const waiting = await ledger.execute(req('k-dead'), async () =>
          assert.fail('must not run while the lease lives'),
        );
        assert.deepEqual(waiting, {
          kind: 'in_flight',
          retryAfterMs: 1,
          leaseExpiresAt: START_AT + LEASE_MS,
          firstSeenAt: START_AT,
        });
        const seen = await ledger.lookup('alice', 'k-dead');
        assert.equal(seen.kind === 'in_flight' && seen.leaseExpired, false);

        await clock.advance(1);
        let tookOver: boolean | undefined;
        const result = await ledger.execute(req('k-dead'), async (tx, claim) => {
          tookOver = claim.tookOver;
          await h.writeEffect(tx, 'late');
          return receipt();
        });
        assert.equal(result.kind, 'executed');
        assert.equal(tookOver, true);
        if (result.kind === 'executed')
          assert.equal(result.firstSeenAt, START_AT, 'a takeover continues the same request');
        assert.equal(await h.countEffects('late'), 1);
      }));

    it('a completion or release by a worker that lost its lease is refused', () =>
      withSetUp(async ({ h, clock }) => {
        const a = inFlight('alice', 'k-owner', 'token-A', START_AT);
        assert.deepEqual(await h.store.claim(a), { won: true });
        await clock.advance(LEASE_MS);
        const b: InFlightEntry = { ...a, token: 'token-B', leaseExpiresAt: clock.now() + LEASE_MS };
        assert.equal(await h.store.swap(versionOf(a), b), true, 'takeover after the lease');
        assert.equal(
          await h.store.swap(versionOf(a), { ...a, token: 'token-C' }),
          false,
          'a second takeover from the stale version',
        );
        const completedByA = {
          ...a,
          state: 'completed' as const,
          completedAt: clock.now(),
          receipt: receipt(),
        };
        const refused = await h.store.transaction(async (tx) =>
          h.store.complete(tx, versionOf(a), completedByA),
        );
        assert.equal(refused, false);
        assert.equal(await h.store.remove(versionOf(a)), false);
        assert.equal(
          await h.store.renew(versionOf(a), clock.now() + LEASE_MS),
          false,
          'a heartbeat of the old owner',
        );
        assert.deepEqual(await h.store.get('alice', 'k-owner'), b);
      }));

    it('a worker whose heartbeat cannot land is taken over; its receipt is refused and its effect rolls back (lease_lost)', () =>
      withSetUp(async ({ h, clock, effect }) => {
        let openGate!: () => void;
        const gate = new Promise<void>((resolve) => {
          openGate = resolve;
        });
        let entered!: () => void;
        const claimed = new Promise<void>((resolve) => {
          entered = resolve;
        });
        // A paused or partitioned worker: alive, but none of its renewals reach the store.
        const deaf: LedgerStore<Tx> = { ...bindStore(h.store), renew: async () => true };
        const stalled = createLedger({
          store: deaf,
          clock,
          leaseMs: LEASE_MS,
          generateToken: () => 'token-slow',
        });
        const fast = createLedger({
          store: h.store,
          clock,
          leaseMs: LEASE_MS,
          generateToken: () => 'token-fast',
        });
        const pending = stalled.execute(req('k-gate'), async (tx) => {
          entered();
          await gate;
          return effect('stalled')(tx);
        });
        await claimed;
        await clock.advance(LEASE_MS);
        assert.equal((await fast.execute(req('k-gate'), effect('fast'))).kind, 'executed');
        openGate();
        assert.equal((await pending).kind, 'lease_lost');
        assert.equal(await h.countEffects('stalled'), 0);
        assert.equal(await h.countEffects('fast'), 1);
        assert.equal(
          (await fast.execute(req('k-gate'), effect('fast'))).kind,
          'replayed',
          'the loser did not release the winner',
        );
      }));

    it('an in-flight duplicate is told to come back when the lease ends, whatever the store', () =>
      withSetUp(async ({ h, clock, ledger }) => {
        const { gate, entered, run } = gated(h, clock);
        const first = ledger.execute(req('k-dup'), run('dup'));
        await entered;
        await clock.advance(100);
        const duplicate = await ledger.execute(req('k-dup'), async () =>
          assert.fail('the duplicate must not run'),
        );
        assert.deepEqual(duplicate, {
          kind: 'in_flight',
          retryAfterMs: LEASE_MS - 100,
          leaseExpiresAt: START_AT + LEASE_MS,
          firstSeenAt: START_AT,
        });
        gate.open();
        assert.equal((await first).kind, 'executed');
        assert.equal(
          (await ledger.execute(req('k-dup'), async () => assert.fail('must replay'))).kind,
          'replayed',
        );
        assert.equal(await h.countEffects('dup'), 1);
      }));

    it('heartbeats: a live slow effect is never taken over; a killed owner is taken over within two heartbeats', () =>
      withSetUp(async ({ h, clock, ledger }) => {
        const heartbeatMs = LEASE_MS / 2;
        const slow = gated(h, clock);
        const running = ledger.execute(req('k-slow'), slow.run('slow'));
        await slow.entered;
        for (let beat = 1; beat <= 6; beat++) {
          await clock.advance(heartbeatMs);
          await renewedTo(h.store, 'k-slow', clock.now() + LEASE_MS);
          const other = await ledger.execute(req('k-slow'), async () =>
            assert.fail('a live owner is never taken over'),
          );
          assert.equal(other.kind, 'in_flight', `after ${beat} heartbeats`);
        }
        slow.gate.open();
        assert.equal((await running).kind, 'executed');

        // The owner is killed right after a heartbeat: its timers never fire again.
        const killable = killableClock(clock);
        const owner = createLedger({
          store: h.store,
          clock: killable,
          leaseMs: LEASE_MS,
          heartbeatMs,
          generateToken: () => 'token-killed',
        });
        const dead = gated(h, clock);
        void owner.execute(req('k-killed'), dead.run('killed'));
        await dead.entered;
        await clock.advance(heartbeatMs);
        await renewedTo(h.store, 'k-killed', clock.now() + LEASE_MS);
        killable.kill();
        await clock.advance(2 * heartbeatMs - 1);
        assert.equal(
          (await ledger.execute(req('k-killed'), async () => assert.fail('not yet'))).kind,
          'in_flight',
        );
        await clock.advance(1);
        let tookOver = false;
        const taken = await ledger.execute(req('k-killed'), async (tx, claim) => {
          tookOver = claim.tookOver;
          await h.writeEffect(tx, 'killed');
          return receipt();
        });
        assert.equal(
          taken.kind,
          'executed',
          'two heartbeat intervals after the kill, the key is free',
        );
        assert.equal(tookOver, true);
        assert.equal(await h.countEffects('killed'), 1);
      }));

    it('retention: replayed until retentionMs, then the key is new; lookup says expired, then never seen', () =>
      withSetUp(async ({ h, clock, ledger, effect }) => {
        await ledger.execute(req('k-old'), effect('old'));
        const completedAt = clock.now();
        await clock.advance(RETENTION_MS - 1);
        assert.equal((await ledger.execute(req('k-old'), effect('old'))).kind, 'replayed');
        await clock.advance(1);
        assert.deepEqual(await ledger.lookup('alice', 'k-old'), {
          kind: 'expired',
          fingerprint: FP,
          firstSeenAt: START_AT,
          expiredAt: completedAt + RETENTION_MS,
          completedAt,
        });
        await clock.advance(TOMBSTONE_MS - 1);
        assert.equal((await ledger.lookup('alice', 'k-old')).kind, 'expired');
        await clock.advance(1);
        assert.deepEqual(await ledger.lookup('alice', 'k-old'), { kind: 'never_seen' });
        assert.equal(
          await h.store.get('alice', 'k-old'),
          undefined,
          'the tombstone was purged on access',
        );

        await ledger.execute(req('k-new'), effect('renew'));
        await clock.advance(RETENTION_MS);
        const renewed = await ledger.execute(req('k-new', 'fp-changed'), effect('renew'));
        assert.equal(
          renewed.kind,
          'executed',
          'after retention even another payload is a new request',
        );
        assert.equal(await h.countEffects('renew'), 2);
      }));

    it('purgeExpired tombstones receipts past retention and deletes old tombstones', () =>
      withSetUp(async ({ h, clock, ledger, effect }) => {
        await ledger.execute(req('p1'), effect('p'));
        await ledger.execute(req('p2'), effect('p'));
        await clock.advance(RETENTION_MS / 2);
        await ledger.execute(req('p3'), effect('p'));
        await clock.advance(RETENTION_MS / 2);
        assert.deepEqual(await ledger.purgeExpired(), { tombstoned: 2, deleted: 0 });
        const p1 = await h.store.get('alice', 'p1');
        assert.equal(p1?.state, 'expired');
        assert.equal((await ledger.lookup('alice', 'p1')).kind, 'expired');
        assert.equal((await ledger.lookup('alice', 'p3')).kind, 'found');
        await clock.advance(TOMBSTONE_MS);
        assert.deepEqual(await ledger.purgeExpired(), { tombstoned: 0, deleted: 2 });
        assert.deepEqual(await ledger.lookup('alice', 'p2'), { kind: 'never_seen' });
        assert.equal(await h.countEffects('p'), 3, 'purging the ledger never touches the effects');
      }));

    it('keys are scoped: the same key in another scope is another request', () =>
      withSetUp(async ({ h, ledger, effect }) => {
        await ledger.execute(
          req('shared', FP, 'alice'),
          effect('s', receipt(201, new TextEncoder().encode('alice'))),
        );
        const bob = await ledger.execute(
          req('shared', FP, 'bob'),
          effect('s', receipt(201, new TextEncoder().encode('bob'))),
        );
        assert.equal(bob.kind, 'executed');
        assert.deepEqual(await ledger.lookup('carol', 'shared'), { kind: 'never_seen' });
        assert.equal(await h.countEffects('s'), 2);
      }));

    it('a transaction handle is refused after its transaction ended', () =>
      withSetUp(async ({ h, ledger }) => {
        let kept: Tx | undefined;
        await ledger.execute(req('k-leak'), async (tx) => {
          kept = tx;
          return receipt();
        });
        await assert.rejects(async () => h.writeEffect(kept as Tx, 'leak'), /transaction ended/);
        assert.equal(await h.countEffects('leak'), 0);
      }));

    it('an unreachable store answers unavailable and never runs the effect', () =>
      withSetUp(async ({ h, clock }) => {
        const down = new Error('connection refused');
        const failing: LedgerStore<Tx> = {
          ...bindStore(h.store),
          get: async () => {
            throw down;
          },
          claim: async () => {
            throw down;
          },
        };
        const ledger = createLedger({ store: failing, clock });
        const result = await ledger.execute(req('k-down'), async () =>
          assert.fail('must not run unguarded'),
        );
        assert.deepEqual(result, { kind: 'unavailable', stage: 'claim', cause: down });
        assert.deepEqual(await ledger.lookup('alice', 'k-down'), {
          kind: 'unavailable',
          cause: down,
        });
      }));
  });
}

/** An effect that waits for a gate before its write: `entered` resolves once it runs. */
function gated<Tx>(h: ConformanceHarness<Tx>, _clock: VirtualClock) {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  let enter!: () => void;
  const entered = new Promise<void>((resolve) => {
    enter = resolve;
  });
  const run = (id: string) => async (tx: Tx) => {
    enter();
    await opened;
    await h.writeEffect(tx, id);
    return receipt();
  };
  return { gate: { open }, entered, run };
}

/**
 * Waits until the key's lease reads `leaseExpiresAt` (the heartbeat's write landed; on
 * PostgreSQL it is a round trip). Bounded: a renewal that never lands fails the test. The bound
 * counts reads, each a round trip on PostgreSQL: 200 of them were too few on a machine loaded
 * to 9 (the renewal, queued behind the same busy server, had not landed yet); 5,000 are about a
 * second and a half there, and a few milliseconds on the in-process stores.
 */
async function renewedTo<Tx>(
  store: LedgerStore<Tx>,
  key: string,
  leaseExpiresAt: number,
): Promise<void> {
  for (let i = 0; i < 5000; i++) {
    const entry = await store.get('alice', key);
    if (entry?.state === 'in_flight' && entry.leaseExpiresAt === leaseExpiresAt) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  assert.fail(`the lease of ${key} was never renewed to ${leaseExpiresAt}`);
}

/** The shared clock as a killed process sees it: after kill(), its timers never fire. */
function killableClock(clock: VirtualClock): Clock & { kill(): void } {
  let killed = false;
  const never = new Promise<never>(() => {});
  return {
    now: () => clock.now(),
    sleep: (ms, signal) => clock.sleep(ms, signal),
    sleepInBackground: async (ms, signal) => {
      if (killed) return never;
      await clock.sleepInBackground(ms, signal);
      if (killed) return never;
    },
    kill: () => void (killed = true),
  };
}

/** A dead worker's leftover: an in-flight row whose owner will never come back. */
export function inFlight(
  scope: string,
  key: string,
  token: string,
  at: number,
  fingerprint = FP,
): InFlightEntry {
  return {
    scope,
    key,
    fingerprint,
    token,
    state: 'in_flight',
    firstSeenAt: at,
    leaseExpiresAt: at + LEASE_MS,
    expiresAt: at + RETENTION_MS,
  };
}
