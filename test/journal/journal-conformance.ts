import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createJournal, createOutboxWorker, type JournalStore } from '#oncely/journal/index.js';
import { VirtualClock, seededRandom } from '#oncely/time/index.js';
import { runDeadLetterConformance } from './dead-letters-conformance.js';
import { runOrderingConformance } from './journal-ordering-conformance.js';
import { runWakeConformance } from './journal-wake-conformance.js';
import { runPublishConformance } from './publish-conformance.js';
import { runAttemptLogConformance } from './attempt-log-conformance.js';

/** A backend under test: its store, and a way to run the app's own transaction around recordWithin. */
export interface JournalFixture<Tx> {
  readonly store: JournalStore<Tx>;
  /** Runs `fn` in the app's transaction and commits, or rolls back when `fn` throws. Absent: no transactions (memory). */
  readonly appTransaction?: (fn: (tx: Tx) => Promise<void>) => Promise<void>;
  /** Rows in the app's own table (written by appTransaction callers). */
  readonly countOrders?: () => Promise<number>;
  readonly writeOrder?: (tx: Tx, id: string) => Promise<void>;
  close(): Promise<void>;
}

const START_AT = 1_700_000_000_000;
const TARGET = 'http://receiver.test/hooks';

/** A fetch that answers from a script of statuses ('throw' = a reset after the request left) and counts calls per key. */
export function scriptedFetch(script: (string | number)[]) {
  const calls: { key: string | null; headers: Headers; body: string }[] = [];
  let i = 0;
  const fetch = (async (_url: string | URL | Request, init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    calls.push({
      key: headers.get('idempotency-key'),
      headers,
      body: new TextDecoder().decode(init?.body as Uint8Array),
    });
    const step = script[Math.min(i++, script.length - 1)]!;
    if (step === 'throw')
      throw Object.assign(new TypeError('fetch failed'), {
        cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
      });
    return new Response(step === 200 ? '{"ok":true}' : 'no', { status: Number(step) });
  }) as typeof globalThis.fetch;
  return { fetch, calls };
}

export function runJournalConformance<Tx>(
  name: string,
  open: () => Promise<JournalFixture<Tx>>,
  options: { skip?: string } = {},
): void {
  const withFixture =
    (fn: (f: JournalFixture<Tx>, clock: VirtualClock) => Promise<void>) => async () => {
      const fixture = await open();
      try {
        await fn(fixture, new VirtualClock({ startAt: START_AT }));
      } finally {
        await fixture.close();
      }
    };

  runOrderingConformance(name, open, options);
  runAttemptLogConformance(name, open, options);
  describe(`journal conformance: ${name}`, options, () => {
    runDeadLetterConformance(
      withFixture as unknown as Parameters<typeof runDeadLetterConformance>[0],
    );
    runWakeConformance(withFixture);
    runPublishConformance(withFixture);
    it(
      'records an intent whole before anything is sent, secrets left out; the same key again is a no-op',
      withFixture(async ({ store }, clock) => {
        const journal = createJournal({ store, clock });
        const body = new Uint8Array([0, 1, 2, 255, 10]);
        const input = {
          key: 'order-1',
          target: TARGET,
          headers: { 'Content-Type': 'application/octet-stream', Authorization: 'Bearer s3cret' },
          secretHeaders: ['authorization'],
          body,
          deadlineAt: START_AT + 60_000,
          createdBy: 'shop',
        };
        const first = await journal.record(input);
        assert.equal(first.created, true);
        assert.deepEqual(first.intent.body, body);
        assert.deepEqual(first.intent.headers, { 'content-type': 'application/octet-stream' });
        assert.deepEqual(first.intent.secretHeaders, ['authorization']);
        assert.equal(first.intent.state, 'pending');
        assert.equal(first.intent.deadlineAt, START_AT + 60_000);
        assert.equal(first.intent.createdBy, 'shop');
        assert.equal(
          JSON.stringify(await journal.report('order-1')).includes('s3cret'),
          false,
          'the secret is never written',
        );
        const again = await journal.record(input);
        assert.equal(again.created, false);
        await assert.rejects(journal.record({ ...input, body: 'other' }), {
          code: 'intent_conflict',
        });
        assert.equal((await journal.counts()).pending, 1);
      }),
    );

    it(
      'backlog: the pending count and the oldest pending record time; none pending is null',
      withFixture(async ({ store }, clock) => {
        const journal = createJournal({ store, clock });
        assert.deepEqual(await journal.backlog(), { pending: 0, oldestPendingAt: null });
        await journal.record({ key: 'b1', target: TARGET, body: '1' });
        await clock.advance(5000);
        await journal.record({ key: 'b2', target: TARGET, body: '2' });
        await journal.record({ key: 'b3', target: TARGET, body: '3' });
        await journal.cancel('b1');
        assert.deepEqual(await journal.backlog(), {
          pending: 2,
          oldestPendingAt: START_AT + 5000,
        });
      }),
    );

    it(
      'leases an intent to one worker at a time, and fences a worker whose lease was taken over',
      withFixture(async ({ store }, clock) => {
        const journal = createJournal({ store, clock });
        await journal.record({ key: 'k1', target: TARGET, body: '{}' });
        const [a] = await store.claim('A', clock.now(), 1000, 10);
        assert.ok(a);
        assert.equal(a.interrupted, false);
        assert.deepEqual(
          await store.claim('B', clock.now(), 1000, 10),
          [],
          'leased: B gets nothing',
        );
        assert.deepEqual(
          await store.startAttempts([
            { key: 'k1', token: a.token, attempt: 1, worker: 'A', startedAt: clock.now() },
          ]),
          [true],
        );
        await clock.advance(1000);
        const [b] = await store.claim('B', clock.now(), 1000, 10);
        assert.ok(b, 'the lease ran out: B takes it');
        assert.equal(b.interrupted, true, "A's attempt never settled");
        assert.equal(b.intent.attemptCount, 1);
        const late = {
          key: 'k1',
          token: a.token,
          next: {
            state: 'gave_up' as const,
            sawUnknown: false,
            final: {
              stopReason: 'budget_exhausted' as const,
              status: null,
              body: null,
              detail: null,
              finishedAt: clock.now(),
            },
          },
        };
        assert.deepEqual(await store.settle([late]), [false], "A's late write is refused");
        assert.equal((await store.get('k1'))?.state, 'pending');
      }),
    );

    it(
      'delivers through the worker: 503, reset, 200 under one key; every attempt and the receipt are kept',
      withFixture(async ({ store }, clock) => {
        const journal = createJournal({ store, clock });
        await journal.record({ key: 'k2', target: TARGET, body: '{"n":2}', maxAttempts: 5 });
        const { fetch, calls } = scriptedFetch([503, 'throw', 200]);
        const worker = createOutboxWorker({
          store,
          clock,
          fetch,
          random: seededRandom(1),
          owner: 'w1',
        });
        const counts = await worker.resume();
        assert.equal(counts.delivered, 1);
        assert.deepEqual(
          calls.map((c) => c.key),
          ['k2', 'k2', 'k2'],
        );
        const report = (await journal.report('k2'))!;
        assert.equal(report.intent.state, 'delivered');
        assert.equal(report.intent.outcome?.status, 200);
        assert.equal(new TextDecoder().decode(report.intent.outcome!.body!), '{"ok":true}');
        assert.deepEqual(
          report.attempts.map((a) => [a.attempt, a.outcome, a.status]),
          [
            [1, 'retry', 503],
            [2, 'unknown', null],
            [3, 'ok', 200],
          ],
        );
        assert.ok(report.attempts.every((a) => a.worker === 'w1' && a.endedAt !== null));
      }),
    );

    it(
      'a restarted worker counts the interrupted attempt: budget 2, one lost mid-flight, one more, then unknown',
      withFixture(async ({ store }, clock) => {
        const journal = createJournal({ store, clock });
        await journal.record({ key: 'k3', target: TARGET, body: '{}', maxAttempts: 2 });
        const [dead] = await store.claim('dead', clock.now(), 500, 1);
        await store.startAttempts([
          { key: 'k3', token: dead!.token, attempt: 1, worker: 'dead', startedAt: clock.now() },
        ]);
        await clock.advance(500);
        const { fetch, calls } = scriptedFetch([503]);
        const counts = await createOutboxWorker({
          store,
          clock,
          fetch,
          random: seededRandom(2),
        }).resume();
        assert.equal(calls.length, 1, 'one attempt left in the budget');
        assert.equal(counts.unknown, 1, 'the lost attempt may have happened: unknown, not gave_up');
        const report = (await journal.report('k3'))!;
        assert.equal(report.intent.outcome?.stopReason, 'budget_exhausted');
        assert.deepEqual(
          report.attempts.map((a) => a.outcome),
          ['unknown', 'retry'],
        );
      }),
    );

    it(
      'honours the deadline across restarts and refuses on a fatal status',
      withFixture(async ({ store }, clock) => {
        const journal = createJournal({ store, clock });
        await journal.record({ key: 'late', target: TARGET, deadlineAt: START_AT + 100 });
        await journal.record({ key: 'bad', target: TARGET });
        await clock.advance(100);
        const { fetch, calls } = scriptedFetch([400]);
        await createOutboxWorker({ store, clock, fetch, random: seededRandom(3) }).resume();
        assert.deepEqual(
          calls.map((c) => c.key),
          ['bad'],
          'nothing starts at or after the deadline',
        );
        assert.equal((await journal.get('late'))?.state, 'gave_up');
        assert.equal((await journal.get('late'))?.outcome?.stopReason, 'deadline_passed');
        assert.equal((await journal.get('bad'))?.state, 'refused');
      }),
    );

    it(
      're-supplies secret headers at send time and sends nothing without them',
      withFixture(async ({ store }, clock) => {
        const journal = createJournal({ store, clock });
        await journal.record({
          key: 'sec',
          target: TARGET,
          headers: { authorization: 'Bearer old' },
          secretHeaders: ['Authorization'],
        });
        const { fetch, calls } = scriptedFetch([200]);
        const without = await createOutboxWorker({ store, clock, fetch, leaseMs: 100 }).runOnce();
        assert.deepEqual([without.sent, without.missingSecrets], [0, ['sec']]);
        await clock.advance(100);
        await createOutboxWorker({
          store,
          clock,
          fetch,
          secrets: { authorization: 'Bearer fresh' },
        }).resume();
        assert.equal(calls.length, 1);
        assert.equal(calls[0]!.headers.get('authorization'), 'Bearer fresh');
        assert.equal((await journal.get('sec'))?.state, 'delivered');
      }),
    );

    it(
      'cancels a pending intent and retries a dead one under the same key',
      withFixture(async ({ store }, clock) => {
        const journal = createJournal({ store, clock });
        await journal.record({ key: 'c1', target: TARGET });
        assert.equal((await journal.cancel('c1', 'not needed')).state, 'cancelled');
        await assert.rejects(journal.cancel('c1'), { code: 'intent_state' });
        const reopened = await journal.retry('c1', { maxAttempts: 1 });
        assert.equal(reopened.state, 'pending');
        const { fetch, calls } = scriptedFetch([200]);
        await createOutboxWorker({ store, clock, fetch }).resume();
        assert.deepEqual(
          calls.map((c) => c.key),
          ['c1'],
        );
        await assert.rejects(
          journal.retry('c1'),
          { code: 'intent_state' },
          'a delivered intent is never sent again',
        );
      }),
    );

    it('transactional outbox: a rolled-back transaction leaves no intent, a committed one exactly one', async (t) => {
      const fixture = await open();
      try {
        if (!fixture.appTransaction) return t.skip(`${name} has no transactions`);
        const journal = createJournal({
          store: fixture.store,
          clock: new VirtualClock({ startAt: START_AT }),
        });
        await fixture.store.ready();
        for (let i = 0; i < 5; i++) {
          await assert.rejects(
            fixture.appTransaction(async (tx) => {
              await fixture.writeOrder!(tx, `o-${i}`);
              assert.equal(
                await journal.recordWithin(tx, {
                  key: `rolled-${i}`,
                  target: TARGET,
                  body: `{"order":${i}}`,
                }),
                true,
              );
              throw new Error('payment declined');
            }),
            /payment declined/,
          );
          await fixture.appTransaction(async (tx) => {
            await fixture.writeOrder!(tx, `c-${i}`);
            await journal.recordWithin(tx, {
              key: `committed-${i}`,
              target: TARGET,
              body: `{"order":${i}}`,
            });
          });
        }
        const all = await journal.list({ limit: 100 });
        assert.deepEqual(
          all.map((x) => x.key).sort(),
          [0, 1, 2, 3, 4].map((i) => `committed-${i}`),
        );
        assert.equal(
          await fixture.countOrders!(),
          5,
          'the orders and the intents committed together',
        );
      } finally {
        await fixture.close();
      }
    });
  });
}
