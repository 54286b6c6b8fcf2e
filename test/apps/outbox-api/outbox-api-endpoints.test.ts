import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describePostgres } from '../../stores/postgres-env.js';
import { tempDir } from '../../support/temp-dir.js';
import { BOB, assertProblem, openApi, type ApiFixture, withApiOf } from './outbox-api-fixture.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const dir = tempDir('oncely-outbox-api-endpoints-');

function suite(name: string, open: () => Promise<ApiFixture>, options: { skip?: string } = {}) {
  describe(`outbox API endpoints: ${name}`, options, () => {
    const withApi = withApiOf(open);
    /** Every endpoint as the API lists it: what "nothing changed" compares. */
    const listing = async (api: ApiFixture) => (await api.ask('/v1/endpoints')).text();

    it(
      'needs a token for /v1, not for the OpenAPI document',
      withApi(async (api) => {
        await assertProblem(
          await api.ask('/v1/endpoints', { token: null }),
          401,
          'unauthenticated',
        );
        await assertProblem(
          await api.ask('/v1/endpoints', { token: 'not-a-token-of-this-server' }),
          401,
          'unauthenticated',
        );
        const doc = await api.ask('/openapi.json', { token: null });
        assert.equal(doc.status, 200);
        assert.equal(((await doc.json()) as { openapi: string }).openapi, '3.1.0');
        await assertProblem(await api.ask('/v1/nothing'), 404, 'not_found');
      }),
    );

    it(
      'creates under an Idempotency-Key: a retry replays the answer, secret included; another body is 422',
      withApi(async (api) => {
        const body = { id: 'shop', url: 'http://127.0.0.1:9/shop', ratePerSecond: 5 };
        const created = await api.write('POST', '/v1/endpoints', body, 'create-shop');
        assert.equal(created.status, 201);
        assert.equal(created.headers.get('location'), '/v1/endpoints/shop');
        const first = (await created.json()) as { endpoint: { state: string }; secret: string };
        assert.equal(first.endpoint.state, 'active');
        assert.match(first.secret, /^whsec_/);
        const again = await api.write('POST', '/v1/endpoints', body, 'create-shop');
        assert.equal(again.status, 201);
        assert.equal(again.headers.get('idempotent-replayed'), 'true');
        assert.equal(((await again.json()) as { secret: string }).secret, first.secret);
        const other = { ...body, ratePerSecond: 6 };
        await assertProblem(
          await api.write('POST', '/v1/endpoints', other, 'create-shop'),
          422,
          'key_reused',
        );
        // Keys are the caller's own: bob's "create-shop" is his first, and the id exists.
        await assertProblem(
          await api.write('POST', '/v1/endpoints', body, 'create-shop', BOB),
          409,
          'endpoint_state',
        );
        const listed = JSON.parse(await listing(api)) as { endpoints: { id: string }[] };
        assert.deepEqual(
          listed.endpoints.map((e) => e.id),
          ['shop'],
        );
        assert.doesNotMatch(await listing(api), /whsec_/, 'a listing never shows a secret');
      }),
    );

    it(
      'refuses bad input with problem+json before the ledger: nothing created, the key still free',
      withApi(async (api) => {
        await api.write('POST', '/v1/endpoints', {
          id: 'kept',
          url: 'http://127.0.0.1:9/k',
          secret: SECRET,
        });
        const before = await listing(api);
        const noKey = await api.ask('/v1/endpoints', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ id: 'x', url: 'http://x.test/' }),
        });
        await assertProblem(noKey, 400, 'missing_key');
        const cases: [unknown, number, string][] = [
          [{ id: 'b', url: 'ftp://x.test/' }, 422, 'invalid_request'],
          [{ id: 'b c', url: 'http://x.test/' }, 422, 'invalid_request'],
          [{ id: 'b', url: 'http://x.test/', ratePerSecond: 0 }, 422, 'invalid_request'],
          [
            { id: 'b', url: 'http://x.test/', breaker: { failureRatio: 3 } },
            422,
            'invalid_request',
          ],
          [{ id: 'b', url: 'http://x.test/', secret: 'hello' }, 422, 'invalid_request'],
          [{ id: 'b', url: 'http://x.test/', colour: 'red' }, 422, 'invalid_request'],
          [[1, 2], 422, 'invalid_request'],
          ['{"id": "b",', 400, 'invalid_json'],
        ];
        for (const [body, status, code] of cases)
          await assertProblem(await api.write('POST', '/v1/endpoints', body, 'typo'), status, code);
        const text = await api.ask('/v1/endpoints', {
          method: 'POST',
          headers: { 'idempotency-key': 'typo', 'content-type': 'text/plain' },
          body: '{}',
        });
        await assertProblem(text, 415, 'unsupported_media_type');
        assert.equal(await listing(api), before, 'nothing changed');
        const fixed = await api.write(
          'POST',
          '/v1/endpoints',
          { id: 'b', url: 'http://x.test/' },
          'typo',
        );
        assert.equal(fixed.status, 201, 'a refused body pinned no receipt to the key');
      }),
    );

    it(
      'edits, pauses, resumes, disables, enables and rotates; a disabled endpoint needs enable',
      withApi(async (api) => {
        await api.write('POST', '/v1/endpoints', {
          id: 'shop',
          url: 'http://127.0.0.1:9/a',
          secret: SECRET,
        });
        const patched = await api.write('PATCH', '/v1/endpoints/shop', {
          url: 'http://127.0.0.1:9/b',
          ratePerSecond: 20,
          breaker: { minRequests: 4 },
        });
        assert.equal(patched.status, 200);
        const e = (
          (await patched.json()) as {
            endpoint: { url: string; ratePerSecond: number; breaker: { minRequests: number } };
          }
        ).endpoint;
        assert.deepEqual(
          [e.url, e.ratePerSecond, e.breaker.minRequests],
          ['http://127.0.0.1:9/b', 20, 4],
        );
        const before = await listing(api);
        for (const bad of [{}, { url: 'nope' }, { secrets: [SECRET] }, { ratePerSecond: -1 }])
          await assertProblem(
            await api.write('PATCH', '/v1/endpoints/shop', bad),
            422,
            'invalid_request',
          );
        assert.equal(await listing(api), before, 'nothing changed');
        /** An action's status and what it answered: the state, or the problem's code. */
        const act = async (action: string, body?: unknown) => {
          const r = await api.write('POST', `/v1/endpoints/shop/${action}`, body);
          const answer = (await r.json()) as { endpoint?: { state: string }; code?: string };
          return [r.status, answer.endpoint?.state ?? answer.code];
        };
        assert.deepEqual(await act('pause', { reason: 'maintenance' }), [200, 'paused']);
        assert.equal(JSON.parse(await listing(api)).endpoints[0].stateReason, 'maintenance');
        assert.deepEqual(await act('resume'), [200, 'active']);
        assert.deepEqual(await act('disable'), [200, 'disabled']);
        assert.deepEqual(await act('resume'), [409, 'endpoint_state']);
        assert.deepEqual(await act('pause'), [409, 'endpoint_state']);
        assert.deepEqual(await act('pause', { reason: 7 }), [422, 'invalid_request']);
        assert.deepEqual(await act('enable'), [200, 'active']);
        const rotated = await api.write('POST', '/v1/endpoints/shop/rotate-secret', {
          overlapMs: 3_600_000,
        });
        const r = (await rotated.json()) as { secret: string; endpoint: { secrets: unknown[] } };
        assert.match(r.secret, /^whsec_/);
        assert.notEqual(r.secret, SECRET);
        assert.equal(r.endpoint.secrets.length, 2);
        await assertProblem(
          await api.write('POST', '/v1/endpoints/shop/rotate-secret', { overlapMs: -1 }),
          422,
          'invalid_request',
        );
        await assertProblem(
          await api.write('POST', '/v1/endpoints/nope/pause'),
          404,
          'endpoint_not_found',
        );
        await assertProblem(await api.ask('/v1/endpoints/nope'), 404, 'endpoint_not_found');
        assert.equal((await api.ask('/v1/endpoints/shop')).status, 200);
      }),
    );

    it(
      'deletes an endpoint: its pending messages cancelled and counted; a replay of the delete answers the same',
      withApi(async (api) => {
        await api.write('POST', '/v1/endpoints', { id: 'gone', url: 'http://127.0.0.1:9/g' });
        await api.write('POST', '/v1/endpoints/gone/pause');
        for (const key of ['m1', 'm2'])
          assert.equal(
            (await api.write('POST', '/v1/messages', { endpoint: 'gone', key, payload: {} }))
              .status,
            201,
          );
        const deleted = await api.write(
          'DELETE',
          '/v1/endpoints/gone',
          { reason: 'retired' },
          'del-gone',
        );
        assert.deepEqual(await deleted.json(), { deleted: 'gone', cancelled: 2 });
        const again = await api.write(
          'DELETE',
          '/v1/endpoints/gone',
          { reason: 'retired' },
          'del-gone',
        );
        assert.equal(again.headers.get('idempotent-replayed'), 'true');
        assert.deepEqual(await again.json(), { deleted: 'gone', cancelled: 2 });
        const m1 = (await (await api.ask('/v1/messages/m1')).json()) as {
          message: Record<string, unknown>;
        };
        assert.deepEqual([m1.message['state'], m1.message['detail']], ['cancelled', 'retired']);
        await assertProblem(
          await api.write('DELETE', '/v1/endpoints/gone'),
          404,
          'endpoint_not_found',
        );
      }),
    );
  });
}

suite('sqlite', () => openApi('sqlite', dir));

await describePostgres('the outbox API', ({ url, options }) => {
  suite('postgres', () => openApi('postgres', url), options);
});
