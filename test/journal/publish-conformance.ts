import { it } from 'node:test';
import assert from 'node:assert/strict';
import { createJournal, createOutboxWorker } from '#oncely/journal/index.js';
import type { VirtualClock } from '#oncely/time/index.js';
import type { JournalFixture } from './journal-conformance.js';
import { scriptedFetch } from './journal-conformance.js';

const ORDER = { id: 'o-1', total: 12 };

/** Six endpoints that want different parts of what is published. */
async function subscribers<Tx>(journal: ReturnType<typeof createJournal<Tx>>) {
  const url = (id: string) => `http://receiver.test/${id}`;
  await journal.endpoints.add({ id: 'orders', url: url('orders'), eventTypes: ['order.*'] });
  await journal.endpoints.add({
    id: 'created',
    url: url('created'),
    eventTypes: ['order.created'],
  });
  await journal.endpoints.add({ id: 'invoices', url: url('invoices'), eventTypes: ['invoice.*'] });
  await journal.endpoints.add({ id: 'all', url: url('all') });
  await journal.endpoints.add({ id: 'tenant-1', url: url('tenant-1'), channels: ['tenant-1'] });
  await journal.endpoints.add({ id: 'off', url: url('off') });
  await journal.endpoints.disable('off', 'not wanted');
}

/** Event types and fan-out (`journal.publish`), on every backend. */
export function runPublishConformance<Tx>(
  withFixture: (
    fn: (f: JournalFixture<Tx>, clock: VirtualClock) => Promise<void>,
  ) => () => Promise<void>,
): void {
  it(
    'publish fans a message out to the endpoints subscribed to its type and channels, once',
    withFixture(async ({ store }, clock) => {
      const journal = createJournal({ store, clock });
      await subscribers(journal);
      const first = await journal.publish({ id: 'm1', type: 'order.created', data: ORDER });
      assert.deepEqual([...first.endpoints].sort(), ['all', 'created', 'orders']);
      assert.equal(first.created, 3);
      const intent = await journal.get('m1:orders');
      assert.equal(intent?.endpoint, 'orders');
      assert.deepEqual(JSON.parse(new TextDecoder().decode(intent?.body)), {
        type: 'order.created',
        timestamp: new Date(clock.now()).toISOString(),
        data: ORDER,
      });
      // Published again later (a retried call): nothing new; other data under the id: refused.
      await clock.advance(5_000);
      const again = await journal.publish({ id: 'm1', type: 'order.created', data: ORDER });
      assert.equal(again.created, 0);
      await assert.rejects(
        journal.publish({ id: 'm1', type: 'order.created', data: { ...ORDER, total: 13 } }),
        { code: 'intent_conflict' },
      );
      // A tagged message: the tenant's endpoint too; a family that is not a prefix match: no.
      const tagged = await journal.publish({
        id: 'm2',
        type: 'invoice.paid',
        data: {},
        channels: ['tenant-1'],
      });
      assert.deepEqual([...tagged.endpoints].sort(), ['all', 'invoices', 'tenant-1']);
      const bare = await journal.publish({ id: 'm3', type: 'order', data: {} });
      assert.deepEqual(bare.endpoints, ['all'], 'order.* is the family below order, not order');
      assert.equal((await journal.counts()).pending, 7);
    }),
  );

  it(
    'publish refuses a bad type, id or channel and records nothing',
    withFixture(async ({ store }, clock) => {
      const journal = createJournal({ store, clock });
      await subscribers(journal);
      for (const bad of [
        { type: 'order created', data: {} },
        { type: '', data: {} },
        { type: 'order.created', data: {}, id: 'a:b' },
        { type: 'order.created', data: {}, channels: ['a b'] },
        { type: 'order.created', data: {}, channels: [] },
      ])
        await assert.rejects(journal.publish(bad), { code: 'invalid_option' }, JSON.stringify(bad));
      await assert.rejects(
        journal.endpoints.add({ id: 'x', url: 'http://r.test/x', eventTypes: ['order.*.late'] }),
        { code: 'invalid_option' },
      );
      assert.equal((await journal.counts()).pending, 0);
    }),
  );

  it(
    "publishWithin commits the message's intents with the app's writes, or none of them",
    withFixture(async ({ store, appTransaction, writeOrder, countOrders }, clock) => {
      if (appTransaction === undefined || writeOrder === undefined || countOrders === undefined)
        return; // memory: no transactions
      const journal = createJournal({ store, clock });
      await subscribers(journal);
      await assert.rejects(
        appTransaction(async (tx) => {
          await writeOrder(tx, 'rolled');
          await journal.publishWithin(tx, { id: 'r1', type: 'order.created', data: ORDER });
          throw new Error('the app gives up');
        }),
      );
      assert.equal((await journal.counts()).pending, 0);
      await appTransaction(async (tx) => {
        await writeOrder(tx, 'kept');
        await journal.publishWithin(tx, { id: 'c1', type: 'order.created', data: ORDER });
      });
      assert.equal((await journal.counts()).pending, 3);
      assert.equal(await countOrders(), 1);
    }),
  );

  it(
    'each endpoint gets its own webhook-id, the same on every attempt',
    withFixture(async ({ store }, clock) => {
      const journal = createJournal({ store, clock });
      await journal.endpoints.add({ id: 'a', url: 'http://receiver.test/a' });
      await journal.endpoints.add({ id: 'b', url: 'http://receiver.test/b' });
      await journal.publish({ id: 'm9', type: 'order.created', data: ORDER });
      const { fetch, calls } = scriptedFetch([503, 503, 200, 200]);
      const worker = createOutboxWorker({ store, clock, fetch });
      await worker.resume();
      const ids = calls.map((call) => call.headers.get('webhook-id'));
      assert.equal(calls.length, 4, 'two failures, then each endpoint once');
      assert.deepEqual([...new Set(ids)].sort(), ['m9:a', 'm9:b']);
      assert.equal((await journal.counts()).delivered, 2);
    }),
  );
}
