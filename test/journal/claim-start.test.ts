import { join } from 'node:path';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createJournal, createOutboxWorker, type JournalStore } from '#oncely/journal/index.js';
import { createPostgresJournalStore } from '#oncely/stores/postgres/index.js';
import { createSqliteJournalStore, openSqliteDatabase } from '#oncely/stores/sqlite/index.js';
import { VirtualClock } from '#oncely/time/index.js';
import { describePostgres, suitePool } from '../stores/postgres-env.js';
import { tempDir } from '../support/temp-dir.js';

const TARGET = 'http://receiver.test/hooks';

/**
 * claimStarting: the claim and the attempt's start in one write (PostgreSQL: one statement;
 * SQLite: one transaction), and the attempts of intents the worker then does not send given
 * back, so a claim never counts an attempt that did not leave.
 */
function runClaimStart(
  openStore: () => JournalStore<unknown>,
  options: { skip?: string | boolean } = {},
): void {
  const open = () => {
    const clock = new VirtualClock({ startAt: Date.parse('2026-12-01T00:00:00Z') });
    const store = openStore();
    return { clock, store, journal: createJournal({ store, clock }) };
  };

  it('claimStarting starts each attempt; unstart takes one back', options, async () => {
    const { clock, store, journal } = open();
    for (const key of ['k1', 'k2']) await journal.record({ key, target: TARGET, body: '{}' });
    const claimed = await store.capabilities.claimStarting!.claim('w1', clock.now(), 60_000, 10);
    assert.deepEqual(
      claimed.map((c) => [c.intent.key, c.started, c.interrupted, c.intent.attemptCount]),
      [
        ['k1', true, false, 0],
        ['k2', true, false, 0],
      ],
      'each intent as before its attempt, the attempt started',
    );
    assert.equal((await store.get('k1'))?.attemptCount, 1);
    const [entry] = await store.attempts('k1');
    assert.deepEqual([entry?.attempt, entry?.worker, entry?.endedAt], [1, 'w1', null]);

    const k2 = claimed[1]!;
    const start = { key: 'k2', token: k2.token, attempt: 1, worker: 'w1', startedAt: clock.now() };
    assert.deepEqual(await store.capabilities.claimStarting!.unstart([start]), [true]);
    assert.deepEqual(
      await store.capabilities.claimStarting!.unstart([start]),
      [false],
      'only once',
    );
    assert.equal((await store.get('k2'))?.attemptCount, 0);
    assert.deepEqual(await store.attempts('k2'), []);
    await store.close();
  });

  it('an attempt started and never settled is interrupted at the next claim', options, async () => {
    const { clock, store, journal } = open();
    await journal.record({ key: 'k1', target: TARGET, body: '{}' });
    await store.capabilities.claimStarting!.claim('w1', clock.now(), 1000, 10);
    await clock.advance(1001); // w1 died: its lease runs out
    const [again] = await store.capabilities.claimStarting!.claim('w2', clock.now(), 1000, 10);
    assert.deepEqual(
      [again?.interrupted, again?.started, again?.intent.attemptCount],
      [true, false, 1],
    );
    assert.equal((await store.attempts('k1')).length, 1, 'no second attempt started');
    await store.close();
  });

  it(
    'an attempt is listed open until settled; its row keeps its worker and start',
    options,
    async () => {
      const { clock, store, journal } = open();
      await journal.record({ key: 'k1', target: TARGET, body: '{}' });
      const startedAt = clock.now();
      await store.capabilities.claimStarting!.claim('w1', startedAt, 1000, 10);
      const open1 = { attempt: 1, worker: 'w1', startedAt, endedAt: null, outcome: null };
      const seen = async () =>
        (await store.attempts('k1')).map((a) => ({
          attempt: a.attempt,
          worker: a.worker,
          startedAt: a.startedAt,
          endedAt: a.endedAt,
          outcome: a.outcome,
        }));
      assert.deepEqual(await seen(), [open1], 'in flight: listed open');
      await clock.advance(1001); // w1 died mid-send
      const fetch = (async () => new Response('ok')) as typeof globalThis.fetch;
      const worker = createOutboxWorker({ store, clock, fetch, owner: 'w2' });
      await worker.runOnce(); // settles the interrupted attempt
      const [closed] = await seen();
      assert.deepEqual(
        [closed?.worker, closed?.startedAt, closed?.endedAt, closed?.outcome],
        ['w1', startedAt, clock.now(), 'unknown'],
        "the interrupted attempt, closed by w2, is w1's",
      );
      await clock.advance(24 * 3600_000);
      await worker.runOnce(); // the next attempt, sent and settled
      const attempts = await seen();
      assert.deepEqual(
        attempts.map((a) => [a.attempt, a.worker, a.outcome]),
        [
          [1, 'w1', 'unknown'],
          [2, 'w2', 'ok'],
        ],
      );
      assert.equal(attempts[1]?.startedAt, clock.now());
      await store.close();
    },
  );

  it('an intent its endpoint holds back is not counted as attempted', options, async () => {
    const { clock, store, journal } = open();
    await journal.endpoints.add({ id: 'e1', url: TARGET });
    await journal.endpoints.pause('e1');
    await journal.record({ key: 'k1', endpoint: 'e1', body: '{}' });
    const fetch = (async () => new Response('ok')) as typeof globalThis.fetch;
    const pass = await createOutboxWorker({ store, clock, fetch }).runOnce();
    assert.deepEqual([pass.claimed, pass.sent], [1, 0]);
    assert.equal((await store.get('k1'))?.attemptCount, 0);
    assert.deepEqual(await store.attempts('k1'), []);
    await store.close();
  });
}

await describePostgres('PostgreSQL journal: claim and start in one write', ({ url, options }) => {
  const { pool, schema } = suitePool(url, 'oncely_claim_start');
  let n = 0;
  runClaimStart(
    () => createPostgresJournalStore({ pool: pool!, schema, table: `cs_${++n}` }) as JournalStore,
    options,
  );
});

describe('SQLite journal: claim and start in one write', () => {
  const dir = tempDir('oncely-claim-start-');
  let n = 0;
  runClaimStart(
    () =>
      createSqliteJournalStore({
        database: () => openSqliteDatabase(join(dir, `cs-${++n}.db`)),
      }) as JournalStore,
  );
});
