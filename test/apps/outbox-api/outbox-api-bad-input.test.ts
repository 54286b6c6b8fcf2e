import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { OPENAPI_DOCUMENT } from '#cli/outbox-api/openapi-document.js';
import { tempDir } from '../../support/temp-dir.js';
import { assertProblem, openApi, type ApiFixture } from './outbox-api-fixture.js';

const dir = tempDir('oncely-outbox-api-bad-');
let api: ApiFixture;
before(async () => {
  api = await openApi('sqlite', dir);
});
after(() => api.close());

/** Every write of the document, its path filled in. */
const writes = Object.entries(OPENAPI_DOCUMENT.paths).flatMap(([template, item]) =>
  (['post', 'patch', 'delete'] as const)
    .filter((method) => method in item)
    .map((method) => ({
      method: method.toUpperCase(),
      path: template.replace('{id}', 'shop').replace('{key}', 'm1'),
    })),
);

/** The journal whole: endpoints (secrets included) and intents with their attempts. */
async function snapshot(): Promise<string> {
  const endpoints = await api.journal.endpoints.list();
  const intents = await api.journal.list();
  return JSON.stringify({ endpoints, intents }, (_k, v) => (v instanceof Uint8Array ? [...v] : v));
}

test('every write refuses a bad body with problem+json, and the journal is unchanged', async () => {
  await api.write('POST', '/v1/endpoints', { id: 'shop', url: 'http://127.0.0.1:9/shop' });
  await api.write('POST', '/v1/endpoints/shop/pause');
  await api.write('POST', '/v1/messages', { endpoint: 'shop', key: 'm1', payload: {} });
  const before = await snapshot();
  assert.equal(writes.length, 12);
  for (const { method, path } of writes) {
    const where = `${method} ${path}`;
    await assertProblem(await api.write(method, path, { bogus: 1 }), 422, 'invalid_request').catch(
      (error: Error) => assert.fail(`${where}: ${error.message}`),
    );
    await assertProblem(await api.write(method, path, '{"bogus":'), 400, 'invalid_json');
    const typed = await api.ask(path, {
      method,
      headers: { 'idempotency-key': `typed-${where}`, 'content-type': 'text/plain' },
      body: '{}',
    });
    await assertProblem(typed, 415, 'unsupported_media_type');
    const keyless = await api.ask(path, {
      method,
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    await assertProblem(keyless, 400, 'missing_key');
    const anonymous = await api.ask(path, {
      method,
      token: null,
      headers: { 'idempotency-key': `anon-${where}`, 'content-type': 'application/json' },
      body: '{}',
    });
    await assertProblem(anonymous, 401, 'unauthenticated');
  }
  assert.equal(await snapshot(), before, 'nothing changed');
});
