// bench/chaos, rerun at a load of 15-40, had one attempt answered 500 while a receiver drained.
// The PostgreSQL store takes a request's connection at its effect's first statement (BEGIN goes
// with it), so that is where a pool with every connection busy past its connect timeout, or a
// pool ended by a server shutting down, is met: pg-pool's own errors, with no SQLSTATE, were
// taken for the handler's failure (500). Through the middleware here, from the claim to the
// answer: 503 + Retry-After (problem+json), and a retry once the claim's lease is over runs the
// effect once. Ordered by promises: the handler waits while the test takes the pool away.
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { createIdempotencyMiddleware, withIdempotency } from '#oncely/http/index.js';
import { createLedger } from '#oncely/ledger/index.js';
import {
  createPostgresStore,
  openPostgresPool,
  type PgPool,
} from '#oncely/stores/postgres/index.js';
import { VirtualClock } from '#oncely/time/index.js';
import { describePostgres, dropSchema, uniqueSchemaName } from '../stores/postgres-env.js';

const STARTED_AT = 1_700_000_000_000;
const LEASE_MS = 2000;

/** A receiver on `pool` whose request waits at `gate` (if any) before its effect's first write. */
function receiver(pool: PgPool, schema: string, startAt: number, gate?: Promise<void>) {
  const clock = new VirtualClock({ startAt, autoAdvance: false });
  const ledger = createLedger({
    store: createPostgresStore({ pool, schema }),
    clock,
    leaseMs: LEASE_MS,
  });
  let entered = (): void => {};
  const inHandler = new Promise<void>((resolve) => (entered = resolve));
  const handle = withIdempotency(
    createIdempotencyMiddleware({ ledger, scopeOf: () => 'chaos', onError: () => {} }),
    async (_request, context) => {
      entered();
      if (gate) await gate;
      await context!.sql.run('INSERT INTO effects (key) VALUES ($1)', [context!.key]);
      return Response.json({ key: context!.key }, { status: 201 });
    },
  );
  const post = (key: string): Promise<Response> =>
    handle(
      new Request('http://receiver.test/effects', {
        method: 'POST',
        headers: { 'idempotency-key': key, 'content-type': 'application/json' },
        body: '{}',
      }),
    );
  return { ledger, inHandler, post };
}

await describePostgres(
  'an effect whose first statement finds no connection',
  ({ url, options }) => {
    const schema = uniqueSchemaName('oncely_pool_mid');
    after(async () => {
      if (url) await dropSchema(url, schema);
    });

    /** `takeAway` runs while the claimed request waits; its answer, then a retry after the lease. */
    async function across(key: string, pool: PgPool, takeAway: () => Promise<unknown>) {
      let open = (): void => {};
      const first = receiver(pool, schema, STARTED_AT, new Promise<void>((r) => (open = r)));
      await first.ledger.ready();
      await pool.query('CREATE TABLE IF NOT EXISTS effects (key TEXT NOT NULL)');
      const answering = first.post(key);
      await first.inHandler; // claimed, its connection back in the pool; nothing written yet
      await takeAway();
      open();
      const answer = await answering;
      const body = (await answer.json()) as { code?: string };
      assert.equal(answer.status, 503, `answered ${answer.status} ${JSON.stringify(body)}`);
      assert.ok(answer.headers.get('retry-after'), 'a 503 says when to come back');
      assert.equal(answer.headers.get('content-type'), 'application/problem+json');
      assert.equal(body.code, 'ledger_unavailable');

      const fresh = openPostgresPool(url, { max: 2, searchPath: schema });
      try {
        const next = receiver(fresh, schema, STARTED_AT + LEASE_MS + 1);
        assert.equal((await next.post(key)).status, 201);
        const { rows } = await fresh.query(
          'SELECT count(*)::int AS n FROM effects WHERE key = $1',
          [key],
        );
        assert.deepEqual(rows, [{ n: 1 }], 'one effect: the first request wrote nothing');
      } finally {
        await fresh.end();
      }
    }

    it(
      'every connection busy past the connect timeout: 503 + Retry-After, not 500',
      options,
      async () => {
        const pool = openPostgresPool(url, { max: 1, connectTimeoutMs: 50, searchPath: schema });
        let held: Awaited<ReturnType<PgPool['connect']>> | undefined;
        try {
          await across('k-busy', pool, async () => {
            held = await pool.connect(); // the only connection: the effect's BEGIN waits out 50 ms
          });
        } finally {
          held?.release();
          await pool.end();
        }
      },
    );

    it('the pool ended under the request, as a drain ends it: 503, not 500', options, async () => {
      const pool = openPostgresPool(url, { max: 2, searchPath: schema });
      await across('k-ended', pool, () => pool.end());
    });
  },
);
