import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import {
  createIdempotencyMiddleware,
  withIdempotency,
  type IdempotentHandler,
} from '#oncely/http/index.js';
import { createLedger, type Ledger, type LedgerStore } from '#oncely/ledger/index.js';
import { createMemoryStore } from '#oncely/stores/memory/index.js';
import { createSqliteStore, openSqliteDatabase } from '#oncely/stores/sqlite/index.js';
import { isInvalidOptionError } from '#oncely/contract/errors.js';
import { describePostgres, storeInFreshSchema } from '../stores/postgres-env.js';
import { tempDir } from '../support/temp-dir.js';

/**
 * A handler with `writes: 'deferred'`: it answers at once and leaves its two writes (an order
 * and its audit line) for the commit. `note: null` makes the audit write fail at commit.
 */
const placeOrder: IdempotentHandler<unknown> = async (request, context) => {
  if (!context) return new Response('not found', { status: 404 });
  const { item, note } = (await request.json()) as { item: string; note?: string | null };
  handlerRuns += 1;
  context.sql.defer('INSERT INTO orders (item, caller) VALUES ($1, $2)', [item, context.scope]);
  context.sql.defer('INSERT INTO audit (line) VALUES ($1)', [
    note === undefined ? `order of ${item}` : note,
  ]);
  return Response.json({ item, firstSeenAt: context.claim.firstSeenAt }, { status: 201 });
};
let handlerRuns = 0;

/** `handler` behind a middleware with `writes: 'deferred'` for the one caller alice; errors kept. */
function deferredRoute(
  ledger: Ledger<unknown>,
  handler: IdempotentHandler<unknown>,
  errors: unknown[],
) {
  return withIdempotency(
    createIdempotencyMiddleware({
      ledger,
      scopeOf: () => 'alice',
      writes: 'deferred',
      onError: (e) => errors.push(e),
    }),
    handler,
  );
}

const TABLES = [
  'CREATE TABLE orders (item TEXT NOT NULL, caller TEXT NOT NULL)',
  'CREATE TABLE audit (line TEXT NOT NULL)',
];

interface Opened {
  readonly store: LedgerStore<unknown>;
  close(): Promise<void>;
}

function runDeferredCases(name: string, open: () => Promise<Opened>, skip?: string): void {
  describe(`writes: 'deferred' on ${name}`, { skip: skip ?? false }, () => {
    async function setUp() {
      const opened = await open();
      const { store } = opened;
      const ledger = createLedger({ store });
      await ledger.ready();
      for (const ddl of TABLES)
        await store.transaction(async (tx) => void (await store.sql!(tx).run(ddl)));
      const errors: unknown[] = [];
      const handle = deferredRoute(ledger, placeOrder, errors);
      const post = (key: string, body: object) =>
        handle(
          new Request('http://shop.test/orders', {
            method: 'POST',
            headers: { 'idempotency-key': key, 'content-type': 'application/json' },
            body: JSON.stringify(body),
          }),
        );
      const count = (table: string) =>
        store.transaction(async (tx) => {
          const row = await store.sql!(tx).get<{ n: number }>(
            `SELECT CAST(count(*) AS INTEGER) AS n FROM ${table}`,
          );
          return row!.n;
        });
      return { ...opened, ledger, post, count, errors };
    }

    it('commits the receipt and the writes together; a replay and a conflict write nothing', async () => {
      const { post, count, ledger, close } = await setUp();
      try {
        const first = await post('order-1', { item: 'tea' });
        assert.equal(first.status, 201);
        const body = await first.json();
        assert.deepEqual([await count('orders'), await count('audit')], [1, 1]);
        const replay = await post('order-1', { item: 'tea' });
        assert.equal(replay.headers.get('idempotent-replayed'), 'true');
        assert.deepEqual(await replay.json(), body);
        const conflict = await post('order-1', { item: 'cake' });
        assert.equal(conflict.status, 422);
        assert.deepEqual([await count('orders'), await count('audit')], [1, 1]);
        assert.equal((await ledger.lookup('alice', 'order-1')).kind, 'found');
      } finally {
        await close();
      }
    });

    it('eight concurrent requests with one key write once and all answer the first answer', async () => {
      const { post, count, store, close } = await setUp();
      try {
        const answers = await Promise.all(
          Array.from({ length: 8 }, () => post('order-8', { item: 'jam' })),
        );
        assert.deepEqual([await count('orders'), await count('audit')], [1, 1]);
        const ok = answers.filter((a) => a.status === 201);
        const bodies = new Set(await Promise.all(ok.map((a) => a.text())));
        assert.equal(bodies.size, 1, 'every answer is the one committed');
        const statuses = answers.map((a) => a.status);
        if (store.capabilities.deferredCommit !== undefined)
          // No lease to wait for: a duplicate waits on the key, then answers as a replay.
          assert.deepEqual(statuses, Array(8).fill(201));
        else
          assert.ok(
            statuses.every((s) => s === 201 || s === 409),
            statuses.join(),
          );
      } finally {
        await close();
      }
    });

    it('a write that fails at commit rolls back every write and stores nothing: the key is free again', async () => {
      const { post, count, ledger, errors, close } = await setUp();
      try {
        const failed = await post('order-2', { item: 'cake', note: null });
        assert.equal(failed.status, 500);
        assert.match(String(errors[0]), /deferred write failed at commit \(INSERT INTO audit/);
        assert.deepEqual([await count('orders'), await count('audit')], [0, 0]);
        assert.equal((await ledger.lookup('alice', 'order-2')).kind, 'never_seen');
        const retried = await post('order-2', { item: 'cake' });
        assert.equal(retried.status, 201);
        assert.deepEqual([await count('orders'), await count('audit')], [1, 1]);
      } finally {
        await close();
      }
    });

    it('twenty concurrent requests with keys of their own: each writes once; the one whose write fails fails alone', async () => {
      const { post, count, ledger, errors, close } = await setUp();
      try {
        const answers = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            post(`batch-${i}`, i === 7 ? { item: 'bad', note: null } : { item: `item-${i}` }),
          ),
        );
        const statuses = answers.map((a) => a.status);
        assert.deepEqual(
          statuses,
          statuses.map((_, i) => (i === 7 ? 500 : 201)),
        );
        assert.equal(errors.length, 1);
        assert.match(String(errors[0]), /deferred write failed at commit \(INSERT INTO audit/);
        assert.deepEqual([await count('orders'), await count('audit')], [19, 19]);
        assert.equal((await ledger.lookup('alice', 'batch-7')).kind, 'never_seen');
        assert.equal((await ledger.lookup('alice', 'batch-8')).kind, 'found');
      } finally {
        await close();
      }
    });

    it('a key held by a claimed request in flight answers 409 (no write lands); the claimed one commits its deferred writes', async () => {
      const { ledger, post, count, close } = await setUp();
      try {
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        let started!: () => void;
        const running = new Promise<void>((resolve) => (started = resolve));
        const claimedRoute = withIdempotency(
          createIdempotencyMiddleware({ ledger, scopeOf: () => 'alice' }),
          async (_request, context) => {
            started();
            await held;
            context!.sql.defer('INSERT INTO orders (item, caller) VALUES ($1, $2)', ['tea', 'x']);
            return Response.json({ claimed: true }, { status: 201 });
          },
        );
        const claimed = claimedRoute(
          new Request('http://shop.test/orders', {
            method: 'POST',
            headers: { 'idempotency-key': 'order-3', 'content-type': 'application/json' },
            body: JSON.stringify({ item: 'tea' }),
          }),
        );
        await running;
        const runsBefore = handlerRuns;
        const duplicate = await post('order-3', { item: 'tea' });
        assert.equal(duplicate.status, 409);
        assert.ok(duplicate.headers.get('retry-after'));
        release();
        assert.equal((await claimed).status, 201);
        assert.deepEqual([await count('orders'), await count('audit')], [1, 0]);
        const replay = await post('order-3', { item: 'tea' });
        assert.deepEqual(await replay.json(), { claimed: true });
        // On a store that commits deferred writes at once the handler ran, and its writes lost.
        assert.ok(handlerRuns - runsBefore <= 1);
      } finally {
        await close();
      }
    });
  });
}

const dir = tempDir('oncely-deferred-');
let files = 0;

runDeferredCases('SQLite (claimed underneath)', async () => {
  const store = createSqliteStore({
    database: () => openSqliteDatabase(join(dir, `shop-${(files += 1)}.db`)),
  });
  return { store: store as LedgerStore<unknown>, close: () => store.close() };
});

await describePostgres("writes: 'deferred'", ({ url, options }) => {
  runDeferredCases(
    'PostgreSQL (deferred commit, pipelined)',
    async () => storeInFreshSchema(url, 'oncely_deferred'),
    options.skip,
  );
  // The same statements one at a time, each after the last one's answer (pg without pipelining).
  runDeferredCases(
    'PostgreSQL without pipeline mode',
    async () => storeInFreshSchema(url, 'oncely_deferred_np', { pipeline: false }),
    options.skip,
  );
});

await describePostgres("writes: 'deferred' grouped", ({ url, options }) => {
  describe(
    "writes: 'deferred' on PostgreSQL: concurrent requests share transactions",
    options,
    () => {
      it('a burst of new keys commits in fewer transactions than requests, each effect once; a burst with a key committed elsewhere replays it', async () => {
        const { store, close } = storeInFreshSchema(url, 'oncely_deferred_groups');
        try {
          const sql = (text: string) => store.transaction(async (tx) => store.sql!(tx).run(text));
          const count = async (text: string) =>
            store.transaction(async (tx) => (await store.sql!(tx).get<{ n: number }>(text))!.n);
          await createLedger({ store }).ready();
          await sql('CREATE TABLE effects (key TEXT NOT NULL, tx BIGINT NOT NULL)');
          /** A server's route: a ledger of its own (its own receipt cache), on the shared store. */
          const server = () => {
            const handle = deferredRoute(
              createLedger({ store }),
              (_request, context) => {
                // txid_current() at commit: the transaction each request's write landed in.
                context!.sql.defer('INSERT INTO effects (key, tx) VALUES ($1, txid_current())', [
                  context!.key,
                ]);
                return Response.json({ key: context!.key }, { status: 201 });
              },
              [],
            );
            return (key: string) =>
              handle(
                new Request('http://a.test/x', {
                  method: 'POST',
                  headers: { 'idempotency-key': key },
                  body: '{}',
                }),
              );
          };
          const [one, another] = [server(), server()];
          const burst = async (post: (key: string) => Promise<Response>, keys: string[]) => {
            const answers = await Promise.all(keys.map(post));
            assert.deepEqual(
              answers.map((a) => a.status),
              keys.map(() => 201),
            );
            return answers;
          };
          const first = Array.from({ length: 30 }, (_, i) => `burst-${i}`);
          await burst(one, first);
          const transactions = await count(
            'SELECT CAST(count(DISTINCT tx) AS INTEGER) AS n FROM effects',
          );
          assert.ok(transactions < 30, `30 new keys in ${transactions} transactions`);
          // Not in the other server's cache: its commit finds the row, in a group with new keys.
          const second = [...Array.from({ length: 10 }, (_, i) => `again-${i}`), 'burst-3'];
          const answers = await burst(another, second);
          assert.equal(answers.at(-1)!.headers.get('idempotent-replayed'), 'true');
          assert.deepEqual(await answers.at(-1)!.json(), { key: 'burst-3' });
          const again = await count(
            "SELECT CAST(count(DISTINCT tx) AS INTEGER) AS n FROM effects WHERE key LIKE 'again-%'",
          );
          assert.ok(again < 10, `the key that had a row did not send the others alone: ${again}`);
          const rows = await count('SELECT CAST(count(*) AS INTEGER) AS n FROM effects');
          const keys = await count('SELECT CAST(count(DISTINCT key) AS INTEGER) AS n FROM effects');
          assert.deepEqual([rows, keys], [40, 40], 'one effect per key, the replay none');
        } finally {
          await close();
        }
      });
    },
  );
});

describe("writes: 'deferred' refuses what it cannot keep", () => {
  it('an awaited statement or context.tx in a deferred handler is a 500 that says why; nothing is stored', async () => {
    const errors: unknown[] = [];
    const ledger = createLedger({ store: createMemoryStore() });
    const post = (handler: IdempotentHandler<unknown>, key: string) =>
      deferredRoute(
        ledger,
        handler,
        errors,
      )(
        new Request('http://shop.test/x', {
          method: 'POST',
          headers: { 'idempotency-key': key },
          body: '{}',
        }),
      );
    const awaited = await post(async (_request, context) => {
      await context!.sql.run('INSERT INTO orders VALUES (1)');
      return new Response('never');
    }, 'k-1');
    const viaTx = await post((_request, context) => {
      void context!.tx;
      return new Response('never');
    }, 'k-2');
    assert.deepEqual([awaited.status, viaTx.status], [500, 500]);
    assert.equal(errors.length, 2);
    for (const error of errors)
      assert.match(String(error), /defers its writes.*context\.sql\.defer\(\)/);
    assert.equal((await ledger.lookup('alice', 'k-1')).kind, 'never_seen');
    assert.equal((await ledger.lookup('alice', 'k-2')).kind, 'never_seen');
  });

  it('an unknown writes mode is refused, naming the option', () => {
    assert.throws(
      () =>
        createIdempotencyMiddleware({
          ledger: createLedger({ store: createMemoryStore() }),
          writes: 'later' as 'deferred',
        }),
      (error: unknown) => isInvalidOptionError(error) && /writes/.test(error.message),
    );
  });

  it('a handler without writes works on the memory store; a write there says the store has no SQL', async () => {
    const errors: unknown[] = [];
    const ledger = createLedger({ store: createMemoryStore() });
    const handle = withIdempotency(
      createIdempotencyMiddleware({ ledger, writes: 'deferred', onError: (e) => errors.push(e) }),
      (_request, context) => {
        if (context!.key === 'writes') context!.sql.defer('INSERT INTO t VALUES (1)');
        return Response.json({ ok: true }, { status: 201 });
      },
    );
    const post = (key: string) =>
      handle(
        new Request('http://a.test/x', {
          method: 'POST',
          headers: { 'idempotency-key': key },
          body: '',
        }),
      );
    assert.equal((await post('plain')).status, 201);
    assert.equal((await post('plain')).headers.get('idempotent-replayed'), 'true');
    assert.equal((await post('writes')).status, 500);
    assert.match(String(errors[0]), /memory store has no SQL/);
  });
});
