// The same server on PostgreSQL (`--db postgres://…`): a schema of its own, dropped after.
// Skips with the reason printed when no server answers; fails instead under ONCELY_REQUIRE_POSTGRES=1.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { describePostgres, dropSchema, uniqueSchemaName } from '../../stores/postgres-env.js';
import {
  bearer,
  send,
  startTestServer,
  submissionHeaders,
  TOKENS,
  type TestServer,
} from './server-harness.js';

await describePostgres('the server tests', ({ url, options }) =>
  describe('oncely serve on PostgreSQL', options, () => {
    const schema = uniqueSchemaName('oncely_serve');
    let t: TestServer | undefined;

    before(async () => {
      if (url) t = await startTestServer({ db: url, pgSchema: schema });
    });
    after(async () => {
      await t?.close();
      if (url) await dropSchema(url, schema);
    });

    it('runs the store on PostgreSQL', async () => {
      assert.equal(t!.server.backend.kind, 'postgres');
      assert.deepEqual((await send(t!.port, { path: '/healthz' })).json(), {
        status: 'ok',
        store: 'postgres',
      });
    });

    it('accepts, replays, dumps, lists receipts and scopes them by caller', async () => {
      const submit = (token: string) =>
        send(t!.port, {
          method: 'POST',
          path: '/dropbox/submissions',
          headers: submissionHeaders(token, 'pg-key-1'),
          body: '{"student":"achen","assignment":"lab3"}',
        });
      const first = await submit(TOKENS.alice);
      assert.equal(first.status, 201, first.text);
      const again = await submit(TOKENS.alice);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      const bob = await submit(TOKENS.bob);
      assert.equal(bob.headers['idempotent-replayed'], undefined);

      const dump = (
        await send(t!.port, {
          path: '/dropbox/store',
          headers: { authorization: bearer(TOKENS.alice) },
        })
      ).json<{ rows: unknown[] }>();
      assert.deepEqual(dump.rows, [
        { key: 'pg-key-1', student: 'achen', assignment: 'lab3', status: 'accepted', writes: 1 },
      ]);
      const receipts = (
        await send(t!.port, {
          path: '/ledger/receipts',
          headers: { authorization: bearer(TOKENS.alice) },
        })
      ).json<{ receipts: Array<{ key: string; caller: string; status: number; state: string }> }>();
      assert.deepEqual(
        receipts.receipts.map((r) => [r.key, r.caller, r.state, r.status]),
        [['pg-key-1', 'alice', 'completed', 201]],
      );
      const lookup = await send(t!.port, {
        path: '/dropbox/submissions/pg-key-1',
        headers: { authorization: bearer(TOKENS.bob) },
      });
      assert.equal(lookup.json<{ lookup: string }>().lookup, 'found');
      assert.equal((await send(t!.port, { path: '/notes/note-1' })).status, 200);
    });
  }),
);
