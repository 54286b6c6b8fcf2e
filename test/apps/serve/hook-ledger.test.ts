// The hook receiver on the server's one ledger: its keys survive a restart, two servers on one
// PostgreSQL database agree on them, they show in /ledger/receipts, and its hits live in the
// service database, paged by ?limit= and purged with the receipts' retention.
import { after, before, describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCallers } from '#cli/serve/callers.js';
import { createServerApp, type ServerApp } from '#cli/serve/create-server-app.js';
import { openBackend, type AnyBackend, type Backend } from '#cli/serve/open-backend.js';
import type { HookHit } from '#cli/receivers/hook/hook-hit.js';
import { VirtualClock } from '#oncely/time/virtual-clock.js';
import { describePostgres, dropSchema, uniqueSchemaName } from '../../stores/postgres-env.js';
import { bearer, send, startTestServer, TOKENS } from './server-harness.js';

const callers = createCallers({ devToken: TOKENS.dev, tokensEnv: `alice=${TOKENS.alice}` });
const START_AT = Date.UTC(2026, 8, 14, 12, 0, 0);

async function appOn(
  backend: AnyBackend,
  clock = new VirtualClock({ startAt: START_AT }),
): Promise<ServerApp<unknown>> {
  return createServerApp<unknown>({ backend: backend as Backend<unknown>, callers, clock });
}

const hook = async (
  app: ServerApp<unknown>,
  key: string,
  token: string = TOKENS.alice,
  body = '{"run_id":"run-9"}',
): Promise<Response> =>
  app.fetch(
    new Request('http://oncely.test/hooks/run-complete', {
      method: 'POST',
      headers: { authorization: bearer(token), 'idempotency-key': key },
      body,
    }),
  );

const get = async <T>(
  app: ServerApp<unknown>,
  path: string,
  token: string = TOKENS.alice,
): Promise<{ status: number; body: T }> => {
  const response = await app.fetch(
    new Request(`http://oncely.test${path}`, { headers: { authorization: bearer(token) } }),
  );
  return { status: response.status, body: (await response.json()) as T };
};

type Receipts = { receipts: Array<{ key: string; caller: string; state: string; status: number }> };
type Hits = {
  arrivals: number;
  completions: number;
  replays: number;
  total: number;
  limit: number;
  truncated: boolean;
  hits: HookHit[];
};

test('a hook key survives a restart: the second server replays the ack, lists the receipt and keeps the hits', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'oncely-hook-'));
  try {
    const first = await openBackend({ dataDir });
    const before = await appOn(first);
    const ack = await hook(before, 'run-9');
    assert.equal(ack.status, 200);
    const ackBody = await ack.text();
    await first.close();

    const second = await openBackend({ dataDir });
    try {
      const after = await appOn(second);
      const again = await hook(after, 'run-9');
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.equal(await again.text(), ackBody, 'the stored ack, not a second completion');
      const receipts = await get<Receipts>(after, '/ledger/receipts');
      assert.deepEqual(
        receipts.body.receipts.map((r) => [r.key, r.caller, r.state, r.status]),
        [['run-9', 'alice', 'completed', 200]],
      );
      const hits = await get<Hits>(after, '/hooks/debug/hits');
      assert.deepEqual(
        hits.body.hits.map((h) => [h.seq, h.key, h.answer]),
        [
          [1, 'run-9', 'completed'],
          [2, 'run-9', 'replayed'],
        ],
      );
      assert.deepEqual([hits.body.arrivals, hits.body.completions, hits.body.replays], [2, 1, 1]);
      // Another caller sees neither the key nor the hits.
      assert.equal(
        (await hook(after, 'run-9', TOKENS.dev)).headers.get('idempotent-replayed'),
        null,
      );
      assert.deepEqual(
        (await get<Hits>(after, '/hooks/debug/hits', TOKENS.dev)).body.hits.map((h) => h.answer),
        ['completed'],
      );
    } finally {
      await second.close();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('hits are paged by ?limit= (newest first cut, oldest first listed) and refuse a bad limit', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'oncely-hook-'));
  const backend = await openBackend({ dataDir });
  try {
    const app = await appOn(backend);
    for (const key of ['a', 'b', 'c']) assert.equal((await hook(app, key)).status, 200);
    const page = await get<Hits>(app, '/hooks/debug/hits?limit=2');
    assert.deepEqual(
      page.body.hits.map((h) => h.key),
      ['b', 'c'],
    );
    assert.deepEqual(
      [page.body.total, page.body.limit, page.body.truncated, page.body.arrivals],
      [3, 2, true, 3],
    );
    const refused = await get<{ code: string }>(app, '/hooks/debug/hits?limit=0');
    assert.equal(refused.status, 400);
    assert.equal(refused.body.code, 'invalid_query');
  } finally {
    await backend.close();
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('the retention sweep purges hits with the receipts', async () => {
  const clock = new VirtualClock({ startAt: START_AT, autoAdvance: false });
  const t = await startTestServer({
    clock,
    ledgerTuning: { retentionMs: 30_000 },
    purgeIntervalMs: 60_000,
  });
  try {
    const headers = { authorization: bearer(TOKENS.alice), 'idempotency-key': 'old-run' };
    assert.equal(
      (await send(t.port, { method: 'POST', path: '/hooks/run-complete', headers, body: '{}' }))
        .status,
      200,
    );
    const listed = async () =>
      (
        await send(t.port, {
          path: '/hooks/debug/hits',
          headers: { authorization: bearer(TOKENS.alice) },
        })
      ).json<Hits>();
    assert.equal((await listed()).total, 1);
    await clock.advance(60_000); // one sweep, past the 30 s retention
    assert.equal((await listed()).total, 0, 'the hit is gone with its receipt');
  } finally {
    await t.close();
  }
});

await describePostgres('two servers on one database', ({ url, options }) =>
  describe('hook keys on PostgreSQL', options, () => {
    const schema = uniqueSchemaName('oncely_hooks');
    const backends: AnyBackend[] = [];
    before(async () => {
      if (url)
        for (let i = 0; i < 2; i++) backends.push(await openBackend({ db: url, pgSchema: schema }));
    });
    after(async () => {
      for (const backend of backends) await backend.close();
      if (url) await dropSchema(url, schema);
    });

    it('a key acked by one server is replayed by the other, and both list the same hits', async () => {
      const [a, b] = await Promise.all(backends.map((backend) => appOn(backend)));
      const ack = await hook(a!, 'pg-run');
      assert.equal(ack.status, 200);
      const replay = await hook(b!, 'pg-run');
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
      assert.equal(await replay.text(), await ack.text());
      const conflict = await hook(b!, 'pg-run', TOKENS.alice, '{"run_id":"other"}');
      assert.equal(conflict.status, 422);
      for (const app of [a!, b!]) {
        const hits = await get<Hits>(app, '/hooks/debug/hits');
        assert.deepEqual(
          hits.body.hits.map((h) => [h.seq, h.answer]),
          [
            [1, 'completed'],
            [2, 'replayed'],
            [3, 'key_reused'],
          ],
        );
        const receipts = await get<Receipts>(app, '/ledger/receipts');
        assert.deepEqual(
          receipts.body.receipts.map((r) => [r.key, r.state]),
          [['pg-run', 'completed']],
        );
      }
    });
  }),
);
