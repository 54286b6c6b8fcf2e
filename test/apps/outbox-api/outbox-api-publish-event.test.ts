import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { describePostgres } from '../../stores/postgres-env.js';
import { tempDir } from '../../support/temp-dir.js';
import {
  assertProblem,
  openApi,
  startReceiver,
  type ApiFixture,
  withApiOf,
} from './outbox-api-fixture.js';

const dir = tempDir('oncely-outbox-api-event-');
let receiver: Awaited<ReturnType<typeof startReceiver>>;
before(async () => {
  receiver = await startReceiver();
});
after(() => receiver.close());

interface Published {
  message: { id: string; eventType: string; endpoints: string[]; created: number };
}

/** Three endpoints: orders only, users only, and every type. */
async function subscribe(api: ApiFixture): Promise<void> {
  const endpoints = [
    { id: 'shop', url: `${receiver.url}/shop`, eventTypes: ['order.*'] },
    { id: 'crm', url: `${receiver.url}/crm`, eventTypes: ['user.created'] },
    { id: 'audit', url: `${receiver.url}/audit` },
  ];
  for (const endpoint of endpoints)
    assert.equal((await api.write('POST', '/v1/endpoints', endpoint)).status, 201);
}

function suite(name: string, open: () => Promise<ApiFixture>, options: { skip?: string } = {}) {
  describe(`outbox API, publish by event type: ${name}`, options, () => {
    const withApi = withApiOf(open);

    it(
      'fans out to the subscribed endpoints, once, under its Idempotency-Key and its id',
      withApi(async (api) => {
        await subscribe(api);
        const event = { eventType: 'order.created', payload: { order: 7 }, id: 'evt-1' };
        const first = await api.write('POST', '/v1/messages', event, 'e-1');
        assert.equal(first.status, 201);
        const published = (await first.json()) as Published;
        assert.deepEqual([...published.message.endpoints].sort(), ['audit', 'shop']);
        assert.deepEqual(
          [published.message.id, published.message.eventType, published.message.created],
          ['evt-1', 'order.created', 2],
        );
        const replayed = await api.write('POST', '/v1/messages', event, 'e-1');
        assert.equal(replayed.headers.get('idempotent-replayed'), 'true');
        assert.deepEqual(await replayed.json(), published);
        // The same id under another Idempotency-Key: published before, nothing new.
        const again = await api.write('POST', '/v1/messages', event, 'e-2');
        assert.equal(again.status, 200);
        assert.equal(((await again.json()) as Published).message.created, 0);
        // No id: derived from the caller and the Idempotency-Key, so a retry past a lost
        // receipt publishes the same message again, a no-op.
        const keyless = { eventType: 'user.created', payload: { user: 'ada' } };
        const derived = (await (
          await api.write('POST', '/v1/messages', keyless, 'e-3')
        ).json()) as Published;
        assert.match(derived.message.id, /^evt_[0-9a-f]{40}$/);
        assert.deepEqual([...derived.message.endpoints].sort(), ['audit', 'crm']);
        await api.forgetReceipts();
        const retried = await api.write('POST', '/v1/messages', keyless, 'e-3');
        assert.equal(retried.headers.get('idempotent-replayed'), null);
        const second = (await retried.json()) as Published;
        assert.deepEqual([second.message.id, second.message.created], [derived.message.id, 0]);
        assert.equal((await api.journal.list()).length, 4, 'two messages, two endpoints each');

        const sent = receiver.deliveries.length;
        await api.deliver();
        const mine = receiver.deliveries.slice(sent);
        assert.deepEqual(mine.map((d) => `${d.path} ${d.id}`).sort(), [
          '/audit evt-1:audit',
          `/audit ${derived.message.id}:audit`,
          `/crm ${derived.message.id}:crm`,
          '/shop evt-1:shop',
        ]);
        const shop = mine.find((d) => d.path === '/shop')!;
        const payload = JSON.parse(shop.body) as { type: string; data: unknown };
        assert.deepEqual(
          [payload.type, payload.data, shop.signed],
          ['order.created', { order: 7 }, true],
        );
      }),
    );

    it(
      'refuses a bad event message before the ledger: problem+json, nothing recorded',
      withApi(async (api) => {
        await subscribe(api);
        const cases: unknown[] = [
          { eventType: 'not a type!' },
          { eventType: 7 },
          { eventType: '' },
          { eventType: 'order.created', endpoint: 'shop' },
          { eventType: 'order.created', url: `${receiver.url}/x` },
          { eventType: 'order.created', id: 'a:b' },
          { eventType: 'order.created', channels: 't1' },
          { eventType: 'order.created', channels: ['no spaces'] },
          { eventType: 'order.created', deadline: 'tomorrow' },
          { eventType: 'order.created', colour: 'red' },
        ];
        for (const body of cases)
          await assertProblem(
            await api.write('POST', '/v1/messages', body, 'typo'),
            422,
            'invalid_request',
          );
        assert.deepEqual(await api.journal.list(), [], 'nothing recorded');
        // The key was never pinned to a refused body: a good message under it is taken.
        const good = await api.write('POST', '/v1/messages', { eventType: 'order.paid' }, 'typo');
        assert.equal(good.status, 201);
      }),
    );
  });
}

suite('sqlite', () => openApi('sqlite', dir));

await describePostgres('the outbox API, publish by event type', ({ url, options }) => {
  suite('postgres', () => openApi('postgres', url), options);
});
