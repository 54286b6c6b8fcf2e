// Found and lost, said with rows: a receipt whose key was taken over while its effect's writes
// were already in the transaction rolls those writes back; a deferred commit whose key has a row
// writes nothing. On pipelined and one-at-a-time pools, and on every pg ONCELY_TEST_PG_MODULE names.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLedger, jsonReceipt, versionOf } from '#oncely/ledger/index.js';
import type { CompletedEntry, InFlightEntry } from '#oncely/ledger/ledger-entry.js';
import type { PgTx, PostgresStore } from '#oncely/stores/postgres/index.js';
import { VirtualClock } from '#oncely/time/virtual-clock.js';
import { bindStore } from '../support/bind-store.js';
import { PG_MODULE, describePostgres, storeInFreshSchema } from './postgres-env.js';

const LEASE_MS = 1000;

await describePostgres(`found and lost as rows (${PG_MODULE})`, ({ url, options }) => {
  for (const pipeline of [true, false]) {
    describe(pipeline ? 'pipeline: true' : 'one statement at a time', options, () => {
      const made = url ? storeInFreshSchema(url, 'oncely_found', { pipeline }) : undefined;
      const store = made?.store as PostgresStore;
      after(() => made?.close());
      const count = async (id: string): Promise<number> =>
        store.transaction(async (tx: PgTx) => {
          const { rows } = await tx.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM effects WHERE id = $1',
            [id],
          );
          return rows[0]!.n;
        });

      it('sets up', async () => {
        await store.ready();
        await store.transaction((tx: PgTx) =>
          tx.query('CREATE TABLE IF NOT EXISTS effects (id TEXT NOT NULL)'),
        );
      });

      it('a receipt whose key was taken over after the effect wrote: lease_lost, the write rolled back, the client reusable', async () => {
        const clock = new VirtualClock({ startAt: 1_000_000 });
        // A paused worker: alive, but its heartbeats never reach the store.
        const deaf = { ...bindStore(store), renew: async () => true };
        const slow = createLedger({ store: deaf, clock, leaseMs: LEASE_MS });
        const fast = createLedger({ store, clock, leaseMs: LEASE_MS });
        const request = { scope: 's', key: `taken-${pipeline}`, fingerprint: 'f' };
        let wrote!: () => void;
        const written = new Promise<void>((resolve) => (wrote = resolve));
        let release!: () => void;
        const gate = new Promise<void>((resolve) => (release = resolve));
        const pending = slow.execute(request, async (tx: PgTx) => {
          await tx.query('INSERT INTO effects (id) VALUES ($1)', [`slow-${pipeline}`]);
          wrote();
          await gate;
          return jsonReceipt(201, { by: 'slow' });
        });
        await written;
        await clock.advance(LEASE_MS); // the slow owner's lease ran out: the key may be taken over
        const taken = await fast.execute(request, async (tx: PgTx) => {
          await tx.query('INSERT INTO effects (id) VALUES ($1)', [`fast-${pipeline}`]);
          return jsonReceipt(201, { by: 'fast' });
        });
        assert.equal(taken.kind, 'executed');
        release();
        assert.equal((await pending).kind, 'lease_lost');
        assert.equal(await count(`slow-${pipeline}`), 0, 'the lost receipt rolled the effect back');
        assert.equal(await count(`fast-${pipeline}`), 1);
        const replay = await slow.execute(request, () => jsonReceipt(500, {}));
        assert.equal(replay.kind, 'replayed');
      });

      it('complete with a version that is not the row: false, and the transaction rolls back', async () => {
        const entry: InFlightEntry = {
          scope: 's',
          key: `gone-${pipeline}`,
          fingerprint: 'f',
          state: 'in_flight',
          token: 'mine',
          firstSeenAt: 5_000,
          leaseExpiresAt: 6_000,
          expiresAt: 100_000,
        };
        assert.deepEqual(await store.claim(entry), { won: true });
        const done: CompletedEntry = {
          ...entry,
          state: 'completed',
          completedAt: 5_500,
          receipt: { status: 201, headers: [], body: new Uint8Array([1]) },
        };
        const completed = await store.transaction(async (tx: PgTx) => {
          await tx.query('INSERT INTO effects (id) VALUES ($1)', [`gone-${pipeline}`]);
          return store.complete(tx, { ...versionOf(entry), token: 'not-mine' }, done);
        });
        assert.equal(completed, false);
        assert.equal(await count(`gone-${pipeline}`), 0);
        assert.equal((await store.get('s', `gone-${pipeline}`))?.state, 'in_flight');
      });

      it('a deferred commit whose key has a row: false, its writes not run; a free key: true, written', async () => {
        const entry = (key: string): CompletedEntry => ({
          scope: 's',
          key,
          fingerprint: 'f',
          state: 'completed',
          token: `t-${key}`,
          firstSeenAt: 7_000,
          completedAt: 7_001,
          expiresAt: 100_000,
          receipt: { status: 201, headers: [], body: new Uint8Array([2]) },
        });
        const write = (id: string) => [
          { sql: 'INSERT INTO effects (id) VALUES ($1)', params: [id] },
        ];
        const free = `deferred-free-${pipeline}`;
        const held = `deferred-held-${pipeline}`;
        assert.equal(await store.capabilities.deferredCommit(entry(free), write(free)), true);
        assert.equal(await count(free), 1);
        assert.equal(await store.capabilities.deferredCommit(entry(held), []), true);
        assert.equal(await store.capabilities.deferredCommit(entry(held), write(held)), false);
        assert.equal(await count(held), 0, 'nothing of the loser was written');
        // Together in one group: the loser found, the rest committed again without it.
        const [a, b] = await Promise.all([
          store.capabilities.deferredCommit(entry(held), write(`${held}-again`)),
          store.capabilities.deferredCommit(entry(`${free}-2`), write(`${free}-2`)),
        ]);
        assert.deepEqual([a, b], [false, true]);
        assert.deepEqual([await count(`${held}-again`), await count(`${free}-2`)], [0, 1]);
      });
    });
  }
});
