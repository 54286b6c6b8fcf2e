import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createJournal, createOutboxWorker, type JournalStore } from '#oncely/journal/index.js';
import { createPostgresJournalStore } from '#oncely/stores/postgres/index.js';
import {
  createClaimMark,
  type ClaimMark,
  type ClaimPosition,
  FULL_SCAN_EVERY_MS,
  HEARD_FULL_SCAN_EVERY_MS,
  HEARD_WIDE_SCAN_EVERY_MS,
  INDEX_START,
  SLACK_MS,
  WIDE_SCAN_EVERY_MS,
  WIDE_SLACK_MS,
} from '#oncely/stores/journal/sql/claim-mark.js';
import { positionOf } from '#oncely/stores/journal/postgres/postgres-journal-wake.js';
import { VirtualClock } from '#oncely/time/index.js';
import { describePostgres, suitePool } from '../stores/postgres-env.js';

const TARGET = 'http://receiver.test/hooks';
const START = Date.parse('2026-12-01T00:00:00Z');

describe('claim mark: where a PostgreSQL claim starts its index scan', () => {
  /** A claim at `nowMs` on `mark` that saw `lowest`: where it started. */
  const claim = (mark: ClaimMark, nowMs: number, lowest?: ClaimPosition): ClaimPosition => {
    const start = mark.startFor(nowMs);
    mark.advance(nowMs, start, lowest);
    return start.from;
  };

  it('starts from the index start first, then from the lowest pending row it saw', () => {
    const mark = createClaimMark();
    assert.deepEqual(claim(mark, START, { at: START - 10_000, seq: 7 }), INDEX_START, 'all');
    assert.deepEqual(mark.startFor(START + 1).from, { at: START - 10_000, seq: 7 });
  });

  it('stays SLACK_MS behind the claim, however far ahead the lowest pending row is', () => {
    const mark = createClaimMark();
    claim(mark, START, { at: START + 60_000, seq: 3 });
    assert.deepEqual(claim(mark, START + 1), { at: START - SLACK_MS, seq: 0 });
    assert.deepEqual(mark.startFor(START + 2).from, { at: START + 1 - SLACK_MS, seq: 0 });
  });

  it('starts WIDE_SLACK_MS behind every WIDE_SCAN_EVERY_MS, or at the mark if lower', () => {
    const mark = createClaimMark();
    claim(mark, START);
    const at = START + WIDE_SCAN_EVERY_MS;
    assert.deepEqual(claim(mark, at - 1), { at: START - SLACK_MS, seq: 0 }, 'the mark');
    assert.deepEqual(claim(mark, at), { at: at - WIDE_SLACK_MS, seq: 0 }, 'wide');
    assert.deepEqual(mark.startFor(at + 1).from, { at: at - SLACK_MS, seq: 0 }, 'the mark again');
    // A pending row far behind holds the mark there: a wide claim starts at it, not above it.
    const held = createClaimMark();
    claim(held, START, { at: START - 30_000, seq: 4 });
    assert.deepEqual(held.startFor(START + WIDE_SCAN_EVERY_MS).from, {
      at: START - 30_000,
      seq: 4,
    });
  });

  it('scans from the start every FULL_SCAN_EVERY_MS, and when the clock went back', () => {
    const mark = createClaimMark();
    claim(mark, START);
    assert.notDeepEqual(claim(mark, START + FULL_SCAN_EVERY_MS - 1), INDEX_START);
    assert.deepEqual(claim(mark, START + FULL_SCAN_EVERY_MS), INDEX_START);
    assert.deepEqual(mark.startFor(START).from, INDEX_START, 'the clock went back');
  });

  it("listening, the mark is the lowest pending row itself, or the claim's instant", () => {
    const mark = createClaimMark();
    mark.listening(true);
    claim(mark, START, { at: START - 300, seq: 9 });
    assert.deepEqual(mark.position(), { at: START - 300, seq: 9 }, 'no slack below it');
    claim(mark, START + 1, { at: START + 50, seq: 10 });
    assert.deepEqual(mark.position(), { at: START + 1, seq: 0 }, 'the next one not yet due');
    claim(mark, START + 2);
    assert.deepEqual(mark.startFor(START + 3).from, { at: START + 2, seq: 0 }, 'none pending');
  });

  it('listening, the wide and full claims come round less often', () => {
    const mark = createClaimMark();
    mark.listening(true);
    claim(mark, START);
    assert.deepEqual(claim(mark, START + WIDE_SCAN_EVERY_MS), { at: START, seq: 0 }, 'the mark');
    const wideAt = START + HEARD_WIDE_SCAN_EVERY_MS;
    assert.deepEqual(claim(mark, wideAt), { at: wideAt - WIDE_SLACK_MS, seq: 0 }, 'wide');
    assert.notDeepEqual(claim(mark, START + FULL_SCAN_EVERY_MS), INDEX_START);
    assert.deepEqual(claim(mark, START + HEARD_FULL_SCAN_EVERY_MS), INDEX_START, 'full');
    mark.listening(false);
    const at = START + HEARD_FULL_SCAN_EVERY_MS + WIDE_SCAN_EVERY_MS;
    assert.deepEqual(mark.startFor(at).from, { at: at - WIDE_SLACK_MS, seq: 0 }, 'not listening');
  });

  it('a position heard lowers the mark, and the mark of a claim in flight when it ends', () => {
    const mark = createClaimMark();
    mark.listening(true);
    claim(mark, START);
    const inFlight = mark.startFor(START + 10);
    mark.heard({ at: START + 5, seq: 3 }); // committed after the claim's snapshot, maybe
    mark.advance(START + 10, inFlight, { at: START + 8, seq: 4 });
    assert.deepEqual(mark.position(), { at: START + 5, seq: 3 }, 'not raised past it');
    claim(mark, START + 20, { at: START + 15, seq: 6 }); // began after: its snapshot has the row
    assert.deepEqual(mark.position(), { at: START + 15, seq: 6 });
    mark.heard({ at: START + 1, seq: 8 });
    assert.deepEqual(mark.startFor(START + 30).from, { at: START + 1, seq: 8 }, 'heard between');
  });

  it('a claim that failed gives up nothing heard while it ran', () => {
    const mark = createClaimMark();
    mark.listening(true);
    claim(mark, START);
    const failed = mark.startFor(START + 10);
    const other = mark.startFor(START + 10);
    mark.heard({ at: START + 2, seq: 5 });
    mark.abandon(failed);
    mark.advance(START + 10, other, undefined);
    assert.deepEqual(mark.position(), { at: START + 2, seq: 5 });
  });

  it('without a position, or when listening stops, SLACK_MS behind the latest claim', () => {
    const mark = createClaimMark();
    mark.listening(true);
    claim(mark, START);
    claim(mark, START + 100);
    mark.heard(undefined); // a reopening, an endpoint woken, an older writer
    assert.deepEqual(mark.position(), { at: START + 100 - SLACK_MS, seq: 0 });
    claim(mark, START + 200);
    assert.deepEqual(mark.position(), { at: START + 200, seq: 0 });
    const inFlight = mark.startFor(START + 300);
    mark.listening(false);
    assert.deepEqual(mark.position(), { at: START + 300 - SLACK_MS, seq: 0 }, 'unheard from here');
    mark.advance(START + 300, inFlight, undefined);
    assert.deepEqual(mark.position(), { at: START + 300 - SLACK_MS, seq: 0 }, 'no tight mark');
  });

  it("reads a position from a record's notification, none from any other", () => {
    assert.deepEqual(positionOf(`${START} 42`), { at: START, seq: 42 });
    assert.deepEqual(positionOf('-5 1'), { at: -5, seq: 1 });
    assert.equal(positionOf(''), undefined);
    assert.equal(positionOf(undefined), undefined);
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
    'listening, an intent heard below the mark is sent by the next claim, not the full scan',
    options,
    async () => {
      const { clock, store, journal } = open();
      const { worker, sent } = workerOn(store, clock);
      let heard = 0;
      let onHeard = (): void => undefined;
      const unwatch = await store.watch(() => {
        heard++;
        onHeard();
      });
      const hearing = (n: number): Promise<void> =>
        new Promise((resolve) => {
          onHeard = () => heard >= n && resolve();
          onHeard();
        });
      try {
        await journal.record({ key: 'a', target: TARGET, body: '{}' });
        await hearing(1);
        await worker.runOnce();
        await clock.advance(10);
        await worker.runOnce();
        // Stamped a minute behind: not listening, only the full scan would find it.
        const late = createJournal({ store, clock: new VirtualClock({ startAt: START - 60_000 }) });
        await late.record({ key: 'late', target: TARGET, body: '{}' });
        await hearing(2);
        await clock.advance(10);
        assert.equal((await worker.runOnce()).sent, 1, 'its position heard: claimed at once');
        assert.deepEqual(sent, ['a', 'late']);
      } finally {
        unwatch(); // the listening connection back to the pool, or its end waits for it
        await store.close();
      }
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
