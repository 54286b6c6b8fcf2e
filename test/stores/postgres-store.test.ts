import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pg } from './postgres-env.js';
import { isInvalidOptionError, isOncelyError } from '#oncely/contract/errors.js';
import { createIdempotencyMiddleware, withIdempotency } from '#oncely/http/index.js';
import { createLedger, versionOf } from '#oncely/ledger/index.js';
import { createPostgresStore } from '#oncely/stores/postgres/index.js';
import type { PgTx } from '#oncely/stores/postgres-driver/pg-pool.js';

// These need no running server: they are about what happens when there is none.
describe('PostgreSQL store specifics', () => {
  it('a database that cannot be reached answers 503 + Retry-After, and the handler never runs', async () => {
    const store = createPostgresStore({
      pool: () =>
        new pg.Pool({ host: '127.0.0.1', port: 1, user: 'nobody', connectionTimeoutMillis: 2000 }),
    });
    const middleware = createIdempotencyMiddleware({
      ledger: createLedger({ store }),
      scopeOf: () => 'alice',
    });
    let ran = false;
    const handle = withIdempotency(
      middleware,
      () => ((ran = true), new Response('done', { status: 201 })),
    );
    try {
      const response = await handle(
        new Request('http://api.test/x', {
          method: 'POST',
          headers: { 'idempotency-key': 'k' },
          body: '{}',
        }),
      );
      assert.equal(response.status, 503);
      assert.equal(response.headers.get('retry-after'), '1');
      assert.equal(ran, false);
    } finally {
      await store.close();
    }
  });

  it('complete() refuses a transaction handle it did not give, and sends nothing', async () => {
    let sent = 0;
    const store = createPostgresStore({ pool: () => new pg.Pool({ port: 1 }) });
    const handMade: PgTx = {
      query: async <R>() => ((sent += 1), { rows: [{ completed: 1 } as R], rowCount: 1 }),
    };
    const now = 1_000;
    const inFlight = {
      scope: 's',
      key: 'k',
      fingerprint: 'f',
      state: 'in_flight' as const,
      token: 't',
      firstSeenAt: now,
      leaseExpiresAt: now + 1_000,
      expiresAt: now + 60_000,
    };
    const completed = {
      ...inFlight,
      state: 'completed' as const,
      completedAt: now,
      receipt: { status: 201, headers: [], body: new Uint8Array() },
    };
    await assert.rejects(
      store.complete(handMade, versionOf(inFlight), completed),
      (e) => isOncelyError(e) && e.code === 'foreign_transaction',
    );
    assert.equal(sent, 0);
    await store.close();
  });

  it('validates its options: identifiers only, a pool or a factory', () => {
    const pool = () => new pg.Pool();
    assert.throws(
      () => createPostgresStore({ pool, table: 'ledger"; --' }),
      (e) => isInvalidOptionError(e) && e.option === 'table',
    );
    assert.throws(
      () => createPostgresStore({ pool, schema: '1abc' }),
      (e) => isInvalidOptionError(e) && e.option === 'schema',
    );
    assert.throws(
      () => createPostgresStore({ pool: 'postgres://x' as never }),
      (e) => isInvalidOptionError(e) && e.option === 'pool',
    );
    assert.throws(
      () => createPostgresStore({ pool, table: 'l'.repeat(38) }),
      (e) => isInvalidOptionError(e) && e.option === 'table' && /at most 37/.test(e.message),
    );
    createPostgresStore({ pool, table: 'l'.repeat(37) });
    for (const receiptPartitionMs of [999, 1.5, -1])
      assert.throws(
        () => createPostgresStore({ pool, receiptPartitionMs }),
        (e) => isInvalidOptionError(e) && e.option === 'receiptPartitionMs',
      );
    for (const deferredGroups of [
      { maxRequests: 0 },
      { inFlight: 2.5 },
      { maxRequests: 'all' },
      'many',
      null,
    ])
      assert.throws(
        () => createPostgresStore({ pool, deferredGroups: deferredGroups as never }),
        (e) => isInvalidOptionError(e) && e.option.startsWith('deferredGroups'),
      );
    assert.equal(
      createPostgresStore({ pool, schema: 'app', table: 'ledger' }).table,
      '"app"."ledger"',
    );
  });
});
