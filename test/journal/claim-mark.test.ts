import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createJournal, createOutboxWorker, type JournalStore } from '#oncely/journal/index.js';
import { createPostgresJournalStore } from '#oncely/stores/postgres/index.js';
import {
  createClaimMark,
  FULL_SCAN_EVERY_MS,
  INDEX_START,
  SLACK_MS,
  WIDE_SCAN_EVERY_MS,
  WIDE_SLACK_MS,
} from '#oncely/stores/journal/sql/claim-mark.js';
import { VirtualClock } from '#oncely/time/index.js';
import { describePostgres, suitePool } from '../stores/postgres-env.js';

const TARGET = 'http://receiver.test/hooks';
const START = Date.parse('2026-12-01T00:00:00Z');

describe('claim mark: where a PostgreSQL claim starts its index scan', () => {
  it('starts from the index start first, then from the lowest pending row it saw', () => {
    const mark = createClaimMark();
    assert.deepEqual(mark.startFor(START), INDEX_START, 'a new store scans all');
    mark.advance(START, INDEX_START, { at: START - 10_000, seq: 7 });
    assert.deepEqual(mark.startFor(START + 1), { at: START - 10_000, seq: 7 });
  });

  it('stays SLACK_MS behind the claim, however far ahead the lowest pending row is', () => {
    const mark = createClaimMark();
    mark.startFor(START);
    mark.advance(START, INDEX_START, { at: START + 60_000, seq: 3 });
    assert.deepEqual(mark.startFor(START + 1), { at: START - SLACK_MS, seq: 0 });
    mark.advance(START + 1, INDEX_START, undefined);
    assert.deepEqual(mark.startFor(START + 2), { at: START + 1 - SLACK_MS, seq: 0 });
  });

  it('starts WIDE_SLACK_MS behind every WIDE_SCAN_EVERY_MS, or at the mark if lower', () => {
    const mark = createClaimMark();
    mark.startFor(START);
    mark.advance(START, INDEX_START, undefined);
    const at = START + WIDE_SCAN_EVERY_MS;
    assert.deepEqual(mark.startFor(at - 1), { at: START - SLACK_MS, seq: 0 }, 'the mark');
    assert.deepEqual(mark.startFor(at), { at: at - WIDE_SLACK_MS, seq: 0 }, 'wide');
    mark.advance(at, { at: at - WIDE_SLACK_MS, seq: 0 }, undefined);
    assert.deepEqual(mark.startFor(at + 1), { at: at - SLACK_MS, seq: 0 }, 'the mark again');
    // A pending row far behind holds the mark there: a wide claim starts at it, not above it.
    const held = createClaimMark();
    held.startFor(START);
    held.advance(START, INDEX_START, { at: START - 30_000, seq: 4 });
    assert.deepEqual(held.startFor(START + WIDE_SCAN_EVERY_MS), { at: START - 30_000, seq: 4 });
  });

  it('scans from the start every FULL_SCAN_EVERY_MS, and when the clock went back', () => {
    const mark = createClaimMark();
    mark.startFor(START);
    mark.advance(START, INDEX_START, undefined);
    assert.notDeepEqual(mark.startFor(START + FULL_SCAN_EVERY_MS - 1), INDEX_START);
    assert.deepEqual(mark.startFor(START + FULL_SCAN_EVERY_MS), INDEX_START);
    assert.deepEqual(mark.startFor(START), INDEX_START, 'the clock went back');
  });
});

/** A worker on `store` whose sends answer `status` (or the next of a list) and are counted. */
function workerOn(store: JournalStore<unknown>, clock: VirtualClock, statuses: number[] = [200]) {
  const sent: string[] = [];
  const fetch = (async (_url: string, init?: RequestInit) => {
    sent.push(String(new Headers(init?.headers).get('idempotency-key')));
    return new Response('ok', { status: statuses.length > 1 ? statuses.shift()! : statuses[0]! });
  }) as unknown as typeof globalThis.fetch;
  return { worker: createOutboxWorker({ store, clock, fetch, leaseMs: 5_000 }), sent };
}

await describePostgres('PostgreSQL journal: the claim mark misses nothing', ({ url, options }) => {
  const { pool, schema } = suitePool(url, 'oncely_claim_mark');
  let n = 0;
  const open = () => {
    const clock = new VirtualClock({ startAt: START });
    const store = createPostgresJournalStore({
      pool: pool!,
      schema,
      table: `cm_${++n}`,
    }) as JournalStore<unknown>;
    return { clock, store, journal: createJournal({ store, clock }) };
  };
  /** A journal whose first intent, 'a', was sent: the first claim scanned all, then the mark
   * moved to SLACK_MS behind the clock. */
  const openPastFirst = async () => {
    const opened = open();
    const { worker, sent } = workerOn(opened.store, opened.clock);
    await opened.journal.record({ key: 'a', target: TARGET, body: '{}' });
    await worker.runOnce();
    await opened.clock.advance(10);
    await worker.runOnce();
    return { ...opened, worker, sent };
  };

  it(
    'an intent committed a few seconds after its stamp is sent by the next wide claim',
    options,
    async () => {
      const { clock, store, worker, sent } = await openPastFirst();
      // Stamped within WIDE_SLACK_MS (a transaction open that long): below the mark.
      const slow = new VirtualClock({ startAt: clock.now() - WIDE_SLACK_MS + 5_000 });
      await createJournal({ store, clock: slow }).record({
        key: 'slow',
        target: TARGET,
        body: '{}',
      });
      await clock.advance(10);
      assert.equal((await worker.runOnce()).claimed, 0, 'below the mark: not seen at once');
      await clock.advance(WIDE_SCAN_EVERY_MS);
      assert.equal((await worker.runOnce()).sent, 1, 'the wide claim finds it');
      assert.deepEqual(sent, ['a', 'slow']);
      await store.close();
    },
  );

  it(
    'an intent recorded with a due time before the mark is sent by the next full scan',
    options,
    async () => {
      const { clock, store, worker, sent } = await openPastFirst();
      // Stamped by a clock far behind (or a transaction open that long): below the mark.
      const late = createJournal({ store, clock: new VirtualClock({ startAt: START - 60_000 }) });
      await late.record({ key: 'late', target: TARGET, body: '{}' });
      await clock.advance(10);
      const early = await worker.runOnce();
      assert.equal(early.claimed, 0, 'below the mark: not seen before the full scan');
      await clock.advance(WIDE_SCAN_EVERY_MS);
      assert.equal((await worker.runOnce()).claimed, 0, 'below the wide claim, too');
      await clock.advance(FULL_SCAN_EVERY_MS);
      const full = await worker.runOnce();
      assert.equal(full.sent, 1);
      assert.deepEqual(sent, ['a', 'late']);
      assert.equal((await store.get('late'))?.state, 'delivered');
      await store.close();
    },
  );

  it(
    'an intent below the mark that the next-due reading finds is claimed next',
    options,
    async () => {
      const { clock, store, journal } = open();
      const { worker, sent } = workerOn(store, clock);
      await journal.record({ key: 'a', target: TARGET, body: '{}' });
      await worker.runOnce();
      await clock.advance(10);
      assert.equal(await store.nextDueAt(), undefined, 'nothing pending');
      const late = createJournal({ store, clock: new VirtualClock({ startAt: START - 60_000 }) });
      await late.record({ key: 'late', target: TARGET, body: '{}' });
      // The worker told it is due must not find nothing (and ask again) until the full scan.
      assert.equal(await store.nextDueAt(), START - 60_000);
      await clock.advance(10);
      assert.equal((await worker.runOnce()).sent, 1);
      assert.deepEqual(sent, ['a', 'late']);
      await store.close();
    },
  );

  it('a retried intent is claimed again when due, once', options, async () => {
    const { clock, store, journal } = open();
    const { worker, sent } = workerOn(store, clock, [503, 200]);
    await journal.record({ key: 'r', target: TARGET, body: '{}' });
    await journal.record({ key: 's', target: TARGET, body: '{}' });
    await worker.runOnce();
    assert.deepEqual((await store.get('r'))?.state, 'pending', 'a 503: retried later');
    for (let i = 0; i < 50 && (await store.get('r'))?.state === 'pending'; i++) {
      await clock.advance(200);
      await worker.runOnce();
    }
    assert.equal((await store.get('r'))?.state, 'delivered');
    assert.deepEqual(sent.sort(), ['r', 'r', 's'], 'each sent as often as answered');
    await store.close();
  });

  it('a reopened intent is claimed at once, past the mark', options, async () => {
    const { clock, store, journal } = open();
    const { worker, sent } = workerOn(store, clock, [400, 200]);
    await journal.record({ key: 'x', target: TARGET, body: '{}' });
    await worker.runOnce();
    assert.equal((await store.get('x'))?.state, 'refused');
    for (let i = 0; i < 5; i++) {
      await clock.advance(100);
      await journal.record({ key: `fill${i}`, target: TARGET, body: '{}' });
      await worker.runOnce(); // the mark moves on past x's old entry
    }
    await journal.retry('x');
    await clock.advance(1);
    const pass = await worker.runOnce();
    assert.equal(pass.sent, 1, 'not left for the full scan');
    assert.equal((await store.get('x'))?.state, 'delivered');
    assert.equal(sent.filter((k) => k === 'x').length, 2);
    await store.close();
  });

  it('an intent whose worker died is taken over when its lease ends', options, async () => {
    const { clock, store, journal } = open();
    await journal.record({ key: 'd', target: TARGET, body: '{}' });
    const dead = store.capabilities.claimStarting!;
    assert.equal((await dead.claim('dead', clock.now(), 5_000, 10)).length, 1);
    const { worker, sent } = workerOn(store, clock);
    for (let t = 0; t < 4_900; t += 700) {
      await clock.advance(700);
      await journal.record({ key: `n${t}`, target: TARGET, body: '{}' });
      await worker.runOnce();
    }
    assert.ok(!sent.includes('d'), 'leased: left alone');
    await clock.advance(200);
    const pass = await worker.runOnce();
    assert.equal(pass.claimed, 1, 'the lease ended: the pending row held the mark back');
    for (let i = 0; i < 50 && (await store.get('d'))?.state === 'pending'; i++) {
      await clock.advance(300); // its open attempt counted unknown: retried after a backoff
      await worker.runOnce();
    }
    assert.equal((await store.get('d'))?.state, 'delivered');
    assert.deepEqual(
      sent.filter((k) => k === 'd'),
      ['d'],
    );
    await store.close();
  });

  it(
    'an ordered intent is claimed as soon as the one before it is delivered',
    options,
    async () => {
      const { clock, store, journal } = open();
      const { worker, sent } = workerOn(store, clock);
      for (const key of ['o1', 'o2', 'o3'])
        await journal.record({ key, target: TARGET, body: '{}', orderingKey: 'k' });
      for (let i = 0; i < 3; i++) {
        await clock.advance(1);
        assert.equal((await worker.runOnce()).sent, 1, `pass ${i}: the next in order`);
      }
      assert.deepEqual(sent, ['o1', 'o2', 'o3']);
      await store.close();
    },
  );
});
