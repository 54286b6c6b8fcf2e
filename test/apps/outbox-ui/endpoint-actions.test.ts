import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createOutboxUiApp } from '#cli/outbox-ui/outbox-ui-server.js';
import { createJournal } from '#oncely/journal/index.js';
import { createMemoryJournalStore } from '#oncely/stores/memory/index.js';
import { tempDir } from '../../support/temp-dir.js';

const TOKEN = 'test-token-0123456789';
const ORIGIN = 'http://127.0.0.1:8790';

/** The outbox view's API over a journal with two endpoints and an intent for each. */
async function open() {
  const journal = createJournal({ store: createMemoryJournalStore() });
  await journal.endpoints.add({ id: 'shop', url: 'http://shop.test/hooks' });
  await journal.endpoints.add({ id: 'mail', url: 'http://mail.test/hooks' });
  await journal.record({ key: 's1', endpoint: 'shop', body: '{}' });
  await journal.record({ key: 'm1', endpoint: 'mail', body: '{}' });
  const app = createOutboxUiApp(journal, TOKEN, tempDir('oncely-endpoint-actions-'));
  const ask = (path: string, init: RequestInit = {}) =>
    app.fetch(
      new Request(`${ORIGIN}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${TOKEN}`, host: '127.0.0.1:8790', ...init.headers },
      }),
    );
  const act = (id: string, action: string, body = '{}', headers: Record<string, string> = {}) =>
    ask(`/api/endpoints/${id}/${action}`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', origin: ORIGIN, ...headers },
    });
  const stateOf = async (id: string) => {
    const e = await journal.endpoints.get(id);
    return [e?.state, e?.stateReason];
  };
  return { journal, ask, act, stateOf };
}

async function assertProblem(response: Response, status: number, code: string): Promise<void> {
  assert.equal(response.status, status);
  assert.equal(response.headers.get('content-type'), 'application/problem+json');
  assert.equal(((await response.json()) as { code: string }).code, code);
}

test('lists endpoints and filters intents by one; each intent names its endpoint', async () => {
  const { ask } = await open();
  const listed = (await (await ask('/api/endpoints')).json()) as {
    endpoints: { id: string; url: string; state: string }[];
  };
  assert.deepEqual(listed.endpoints.map((e) => [e.id, e.state]).sort(), [
    ['mail', 'active'],
    ['shop', 'active'],
  ]);
  const intents = (await (await ask('/api/intents?endpoint=shop')).json()) as {
    intents: { key: string; endpoint: string }[];
  };
  assert.deepEqual(
    intents.intents.map((i) => [i.key, i.endpoint]),
    [['s1', 'shop']],
  );
});

test('pause, resume, disable and enable an endpoint; resume does not restart a disabled one', async () => {
  const { act, stateOf } = await open();
  const paused = await act('shop', 'pause', '{"reason":"receiver deploy"}');
  assert.equal(paused.status, 200);
  assert.equal(((await paused.json()) as { endpoint: { state: string } }).endpoint.state, 'paused');
  assert.deepEqual(await stateOf('shop'), ['paused', 'receiver deploy']);
  assert.equal((await act('shop', 'resume')).status, 200);
  assert.equal((await stateOf('shop'))[0], 'active');
  assert.equal((await act('shop', 'disable')).status, 200);
  await assertProblem(await act('shop', 'resume'), 409, 'endpoint_state');
  assert.equal((await stateOf('shop'))[0], 'disabled', 'still disabled');
  assert.equal((await act('shop', 'enable')).status, 200);
  assert.equal((await stateOf('shop'))[0], 'active');
  assert.deepEqual(await stateOf('mail'), ['active', null], 'the other endpoint untouched');
});

test('a bad action, body, endpoint or origin is problem+json and changes nothing', async () => {
  const { act, stateOf } = await open();
  const before = await stateOf('shop');
  await assertProblem(await act('shop', 'delete'), 400, 'invalid_action');
  await assertProblem(await act('shop', 'pause', '{"colour":"red"}'), 400, 'invalid_action');
  await assertProblem(await act('shop', 'pause', 'not json'), 400, 'invalid_action');
  await assertProblem(await act('shop', 'pause', '{"reason":7}'), 400, 'invalid_action');
  await assertProblem(await act('nope', 'pause'), 404, 'endpoint_not_found');
  await assertProblem(
    await act('shop', 'pause', '{}', { origin: 'http://evil.test' }),
    403,
    'cross_site',
  );
  assert.deepEqual(await stateOf('shop'), before);
});
