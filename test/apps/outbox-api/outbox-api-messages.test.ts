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

const dir = tempDir('oncely-outbox-api-messages-');
let receiver: Awaited<ReturnType<typeof startReceiver>>;
before(async () => {
  receiver = await startReceiver();
});
after(() => receiver.close());

interface MessageJson {
  key: string;
  state: string;
  target: string;
  attempts: number;
  status: number | null;
  attemptList?: { attempt: number; status: number | null; outcome: string }[];
}

function suite(name: string, open: () => Promise<ApiFixture>, options: { skip?: string } = {}) {
  describe(`outbox API messages: ${name}`, options, () => {
    const withApi = withApiOf(open);
    const message = async (api: ApiFixture, key: string) =>
      ((await (await api.ask(`/v1/messages/${key}`)).json()) as { message: MessageJson }).message;

    it(
      'publishes to an endpoint under an Idempotency-Key; the worker delivers it signed, webhook-id = key',
      withApi(async (api) => {
        await api.write('POST', '/v1/endpoints', { id: 'shop', url: `${receiver.url}/shop` });
        const body = { endpoint: 'shop', key: 'order-1', payload: { order: 1 } };
        const published = await api.write('POST', '/v1/messages', body, 'pub-1');
        assert.equal(published.status, 201);
        assert.equal(published.headers.get('location'), '/v1/messages/order-1');
        const first = (await published.json()) as { message: MessageJson; created: boolean };
        assert.deepEqual([first.message.state, first.created], ['pending', true]);
        const replayed = await api.write('POST', '/v1/messages', body, 'pub-1');
        assert.equal(replayed.headers.get('idempotent-replayed'), 'true');
        // The same message key under a new Idempotency-Key: the journal's no-op, not a second message.
        const same = await api.write('POST', '/v1/messages', body, 'pub-2');
        assert.deepEqual(
          [same.status, ((await same.json()) as { created: boolean }).created],
          [200, false],
        );
        const other = { ...body, payload: { order: 2 } };
        await assertProblem(
          await api.write('POST', '/v1/messages', other, 'pub-3'),
          409,
          'message_conflict',
        );
        // No key of its own: one derived from the caller and the Idempotency-Key, so the same
        // request again, even past the ledger (a lost receipt), is the same message.
        const keyless = { endpoint: 'shop', payload: { order: 3 } };
        const keyOf = async (idempotencyKey: string) =>
          (
            (await (await api.write('POST', '/v1/messages', keyless, idempotencyKey)).json()) as {
              message: MessageJson;
            }
          ).message.key;
        const derived = await keyOf('pub-4');
        assert.match(derived, /^msg_[0-9a-f]{40}$/);
        const other4 = await keyOf('pub-5');
        assert.notEqual(other4, derived, 'another Idempotency-Key, another message');
        await api.forgetReceipts();
        const again = await api.write('POST', '/v1/messages', keyless, 'pub-4');
        assert.equal(again.headers.get('idempotent-replayed'), null, 'no receipt to replay');
        const retried = (await again.json()) as { message: MessageJson; created: boolean };
        assert.deepEqual([retried.message.key, retried.created], [derived, false]);
        for (const key of [derived, other4]) await api.journal.cancel(key);
        const sent = receiver.deliveries.length;
        await api.deliver();
        const mine = receiver.deliveries.slice(sent);
        assert.equal(mine.length, 1);
        assert.deepEqual(
          [mine[0]!.path, mine[0]!.id, mine[0]!.body, mine[0]!.signed],
          ['/shop', 'order-1', '{"order":1}', true],
        );
        const got = await message(api, 'order-1');
        assert.deepEqual([got.state, got.status, got.attemptList?.length], ['delivered', 200, 1]);
        const attempts = (await (await api.ask('/v1/messages/order-1/attempts')).json()) as {
          attempts: {
            attempt: number;
            outcome: string;
            durationMs: number;
            response: { body: string; bodyBase64: string; truncated: boolean } | null;
          }[];
        };
        assert.deepEqual(
          attempts.attempts.map((a) => [a.attempt, a.outcome]),
          [[1, 'ok']],
        );
        // The attempt log: the receiver's answer as it came, and how long it took.
        const [logged] = attempts.attempts;
        assert.deepEqual(
          [logged?.response?.body, logged?.response?.bodyBase64, logged?.response?.truncated],
          ['ok', 'b2s=', false],
        );
        assert.equal(typeof logged?.durationMs, 'number');
        assert.equal((got as MessageJson & { endpoint: string }).endpoint, 'shop');
        const listed = (await (
          await api.ask('/v1/messages?endpoint=shop&state=delivered')
        ).json()) as {
          messages: MessageJson[];
          next: string | null;
        };
        assert.deepEqual([listed.messages.map((m) => m.key), listed.next], [['order-1'], null]);
      }),
    );

    it(
      'refuses a bad message before the ledger: nothing recorded; bad queries are 400',
      withApi(async (api) => {
        await api.write('POST', '/v1/endpoints', { id: 'shop', url: `${receiver.url}/shop` });
        const cases: unknown[] = [
          { payload: {} },
          { endpoint: 'shop', url: `${receiver.url}/x`, payload: {} },
          { endpoint: 'nope', payload: {} },
          { url: 'ftp://x.test/', payload: {} },
          { endpoint: 'shop', payload: {}, body: 'x' },
          { endpoint: 'shop', payload: {}, maxAttempts: 0 },
          { endpoint: 'shop', payload: {}, headers: { 'webhook-id': 'mine' } },
          { endpoint: 'shop', payload: {}, deadline: 'tomorrow' },
          { endpoint: 'shop', payload: {}, colour: 'red' },
        ];
        for (const body of cases)
          await assertProblem(
            await api.write('POST', '/v1/messages', body, 'typo'),
            422,
            'invalid_request',
          );
        assert.deepEqual(await api.journal.list(), [], 'nothing recorded');
        for (const query of ['limit=0', 'state=lost', 'colour=red'])
          await assertProblem(await api.ask(`/v1/messages?${query}`), 400, 'invalid_query');
        await assertProblem(await api.ask('/v1/messages/nope'), 404, 'message_not_found');
        await assertProblem(await api.ask('/v1/messages/nope/attempts'), 404, 'message_not_found');
      }),
    );

    it(
      'replays a dead message under its key, by key or by filter; cancels a pending one',
      withApi(async (api) => {
        const dead = { url: `${receiver.url}/refuse`, key: 'dead-1', body: 'x', maxAttempts: 1 };
        assert.equal((await api.write('POST', '/v1/messages', dead)).status, 201);
        await api.deliver();
        assert.equal((await message(api, 'dead-1')).state, 'refused');
        await assertProblem(
          await api.write('POST', '/v1/replay', { colour: 'red' }),
          422,
          'invalid_request',
        );
        await assertProblem(await api.write('POST', '/v1/replay', {}), 422, 'invalid_request');
        const dry = await api.write('POST', '/v1/replay', { all: true, dryRun: true });
        const preview = (await dry.json()) as { selected: MessageJson[]; reopened: string[] };
        assert.deepEqual([preview.selected.map((m) => m.key), preview.reopened], [['dead-1'], []]);
        assert.equal((await message(api, 'dead-1')).state, 'refused', 'a dry run changes nothing');
        const one = await api.write('POST', '/v1/messages/dead-1/replay', { maxAttempts: 2 });
        assert.equal(one.status, 200);
        assert.equal(((await one.json()) as { message: MessageJson }).message.state, 'pending');
        await assertProblem(
          await api.write('POST', '/v1/messages/dead-1/replay'),
          409,
          'message_state',
        );
        await assertProblem(
          await api.write('POST', '/v1/messages/nope/replay'),
          404,
          'message_not_found',
        );
        await api.deliver();
        const byFilter = await api.write('POST', '/v1/replay', { state: 'refused' });
        assert.deepEqual(((await byFilter.json()) as { reopened: string[] }).reopened, ['dead-1']);
        const cancelled = await api.write('POST', '/v1/messages/dead-1/cancel', {
          reason: 'enough',
        });
        assert.equal(
          ((await cancelled.json()) as { message: MessageJson }).message.state,
          'cancelled',
        );
        await assertProblem(
          await api.write('POST', '/v1/messages/dead-1/cancel'),
          409,
          'message_state',
        );
      }),
    );
  });
}

suite('sqlite', () => openApi('sqlite', dir));

await describePostgres('the outbox API messages', ({ url, options }) => {
  suite('postgres', () => openApi('postgres', url), options);
});
