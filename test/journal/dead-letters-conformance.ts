import { it } from 'node:test';
import assert from 'node:assert/strict';
import { createJournal, createOutboxWorker, type JournalStore } from '#oncely/journal/index.js';
import type { VirtualClock } from '#oncely/time/index.js';
import { routedFetch, SEED_TARGETS, seedDeadLetters } from './dead-letter-seed.js';

type WithStore = (
  fn: (fixture: { store: JournalStore<unknown> }, clock: VirtualClock) => Promise<void>,
) => () => Promise<void>;

const keys = (intents: readonly { key: string }[]): string[] => intents.map((i) => i.key);

/** Dead letters and replay, on each journal store (called inside the journal conformance suite). */
export function runDeadLetterConformance(withFixture: WithStore): void {
  it(
    'filters a listing by states, exact target, target prefix and finished-since, newest first',
    withFixture(async ({ store }, clock) => {
      const t = await seedDeadLetters(store, clock);
      const journal = createJournal({ store, clock });
      assert.deepEqual(keys(await journal.list({ state: ['refused', 'gave_up', 'unknown'] })), [
        'u1',
        'g1',
        'r1',
      ]);
      assert.deepEqual(keys(await journal.list({ state: 'cancelled' })), ['c1']);
      assert.deepEqual(keys(await journal.list({ target: SEED_TARGETS.refused })), ['r1']);
      assert.deepEqual(keys(await journal.list({ targetPrefix: 'http://a.test/' })), [
        'p1',
        'd1',
        'g1',
        'r1',
      ]);
      assert.deepEqual(
        keys(await journal.list({ targetPrefix: 'http://b.test/', state: ['unknown'] })),
        ['u1'],
      );
      assert.deepEqual(
        keys(await journal.list({ finishedSince: t + 1000 })),
        ['c1', 'd1', 'u1', 'g1'],
        'a pending intent has not finished',
      );
      assert.deepEqual(keys(await journal.list({ targetPrefix: 'http://a%' })), [], 'no wildcards');
      assert.deepEqual(keys(await journal.list({ targetPrefix: 'HTTP://A.TEST/' })), []);
    }),
  );

  it(
    'lists and replays the dead letters of one endpoint, leaving the others alone',
    withFixture(async ({ store }, clock) => {
      const journal = createJournal({ store, clock });
      await journal.endpoints.add({ id: 'orders', url: 'http://a.test/orders' });
      await journal.endpoints.add({ id: 'users', url: 'http://a.test/users' });
      for (const [key, endpoint] of [
        ['o1', 'orders'],
        ['o2', 'orders'],
        ['x1', 'users'],
      ] as const)
        await journal.record({ key, endpoint, body: '{}' });
      const claims = await store.claim('W', clock.now(), 1000, 10);
      const final = { stopReason: 'fatal_status' as const, status: 400, body: null, detail: null };
      await store.settle(
        claims.map((c) => ({
          key: c.intent.key,
          token: c.token,
          next: {
            state: 'refused',
            sawUnknown: false,
            final: { ...final, finishedAt: clock.now() },
          },
        })),
      );
      assert.deepEqual(keys(await journal.list({ endpoint: 'orders' })), ['o2', 'o1']);
      await assert.rejects(journal.list({ endpoint: '' }), /non-empty string/);
      const result = await journal.replay({ endpoint: 'orders' });
      assert.deepEqual([...result.reopened].sort(), ['o1', 'o2']);
      assert.equal((await journal.report('x1'))?.intent.state, 'refused');
    }),
  );

  it(
    'pages by key: each page starts after the last key of the one before',
    withFixture(async ({ store }, clock) => {
      await seedDeadLetters(store, clock);
      const journal = createJournal({ store, clock });
      const pages: string[][] = [];
      for (let after: string | undefined; ; ) {
        const page = await journal.list({ limit: 2, after });
        if (page.length === 0) break;
        pages.push(keys(page));
        after = page[page.length - 1]!.key;
      }
      assert.deepEqual(pages, [
        ['p1', 'c1'],
        ['d1', 'u1'],
        ['g1', 'r1'],
      ]);
      assert.deepEqual(keys(await journal.list({ after: 'no-such-key' })), []);
      assert.deepEqual(keys(await journal.list({ state: ['gave_up', 'refused'], after: 'u1' })), [
        'g1',
        'r1',
      ]);
    }),
  );

  it(
    'refuses a bad filter before reading or changing anything',
    withFixture(async ({ store }, clock) => {
      await seedDeadLetters(store, clock);
      const journal = createJournal({ store, clock });
      const before = await journal.counts();
      for (const filter of [
        { state: 'nope' },
        { state: [] },
        { limit: 0 },
        { after: '' },
        { finishedSince: 1.5 },
      ])
        await assert.rejects(journal.list(filter as never), { code: 'invalid_option' });
      for (const filter of [{ state: 'delivered' }, { state: ['pending'] }, { state: 'x' }])
        await assert.rejects(journal.replay(filter as never), { code: 'invalid_option' });
      assert.deepEqual(await journal.counts(), before);
    }),
  );

  it(
    'replays the dead since an instant under their own keys; the attempts made stay listed',
    withFixture(async ({ store }, clock) => {
      const t = await seedDeadLetters(store, clock);
      const journal = createJournal({ store, clock });
      const dry = await journal.replay({ finishedSince: t + 1000 }, { dryRun: true });
      assert.deepEqual([keys(dry.selected), dry.reopened], [['u1', 'g1'], []]);
      assert.equal(dry.selected[0]!.body.byteLength, 0, 'a long selection keeps no payloads');
      assert.equal((await journal.get('u1'))?.state, 'unknown', 'a dry run changes nothing');
      const progress: string[] = [];
      const result = await journal.replay(
        { finishedSince: t + 1000 },
        { onProgress: (done, total) => progress.push(`${done}/${total}`) },
      );
      assert.deepEqual([result.reopened, result.skipped, progress], [['u1', 'g1'], [], ['2/2']]);
      assert.equal((await journal.get('r1'))?.state, 'refused', 'finished before: left alone');
      const g1 = (await journal.report('g1'))!;
      assert.deepEqual(
        [g1.intent.state, g1.intent.policy.maxAttempts, g1.attempts.length],
        ['pending', 2, 1],
      );
      const { fetch, calls } = routedFetch({});
      await createOutboxWorker({ store, clock, fetch }).resume();
      assert.deepEqual(
        calls.map((c) => c.key).sort(),
        ['g1', 'p1', 'u1'],
        'the same keys again (and p1, pending all along)',
      );
      assert.deepEqual(
        (await journal.report('u1'))!.attempts.map((a) => [a.attempt, a.outcome]),
        [
          [1, 'unknown'],
          [2, 'ok'],
        ],
      );
    }),
  );

  it(
    'replays all for a target; cancelled only when named; skips what changed meanwhile',
    withFixture(async ({ store }, clock) => {
      await seedDeadLetters(store, clock);
      const journal = createJournal({ store, clock });
      const onB = await journal.replay({ targetPrefix: 'http://b.test/' }, { dryRun: true });
      assert.deepEqual(keys(onB.selected), ['u1'], 'the cancelled c1 is not a dead letter');
      const cancelled = await journal.replay({ target: SEED_TARGETS.unknown, state: 'cancelled' });
      assert.deepEqual(cancelled.reopened, ['c1']);
      // Between this replay's listing and its write, another replay reopens g1 (still pending),
      // and r1 is reopened, sent once more and refused again (dead, with one attempt more).
      const racing: JournalStore<unknown> = {
        ...store,
        async reopenMany(reopenings) {
          await journal.retry('g1');
          await journal.retry('r1');
          const { fetch } = routedFetch({ [SEED_TARGETS.refused]: 400 });
          const worker = createOutboxWorker({ store, clock, fetch });
          await worker.runOnce();
          return store.reopenMany(reopenings);
        },
      };
      const raced = await createJournal({ store: racing, clock }).replay({
        targetPrefix: 'http://a.test/',
      });
      assert.deepEqual(keys(raced.selected), ['g1', 'r1']);
      assert.deepEqual([raced.reopened, raced.skipped], [[], ['g1', 'r1']]);
      const r1 = (await journal.get('r1'))!;
      assert.deepEqual([r1.state, r1.attemptCount], ['refused', 2], 'left as it ended');
      assert.equal((await journal.get('d1'))?.state, 'delivered', 'never replayed');
    }),
  );

  it(
    'a replayed unknown intent keeps its lost answer: out of budget again it ends unknown, not gave_up',
    withFixture(async ({ store }, clock) => {
      await seedDeadLetters(store, clock);
      const journal = createJournal({ store, clock });
      await journal.replay({ state: 'unknown' });
      const { fetch } = routedFetch({ [SEED_TARGETS.unknown]: 503 });
      await createOutboxWorker({ store, clock, fetch }).resume();
      const u1 = (await journal.get('u1'))!;
      assert.deepEqual([u1.state, u1.sawUnknown, u1.attemptCount], ['unknown', true, 2]);
    }),
  );
}
