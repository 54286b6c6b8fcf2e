import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  createIdempotencyMiddleware,
  withIdempotency,
  type IdempotentHandler,
} from '#oncely/http/index.js';
import { createLedger, jsonReceipt, type Ledger } from '#oncely/ledger/index.js';
import type { CompletedEntry } from '#oncely/ledger/ledger-entry.js';
import { VirtualClock } from '#oncely/time/virtual-clock.js';
import { createOrmLedgerStore, type OrmLedgerStore } from '#oncely/stores/orm/index.js';
import { tempDir } from '../support/temp-dir.js';
import {
  forEachPostgresOrm,
  ORMS,
  openOrmBackend,
  sqliteTarget,
  type Orm,
  type OrmBackend,
  type OrmTarget,
} from '../support/orm-backends.js';

/**
 * Routes with `writes: 'deferred'` on each ORM x database: the route writes through the ORM's
 * transaction (context.tx) with no claim committed first, and the key's row ends that
 * transaction (ledger-deferred-in-transaction.ts). Several ledgers on one store stand for
 * several processes: each has its own in-process runs, and only the database keeps them apart.
 */
const REQUESTS = 40;
const ROUNDS = 8;
const LEDGERS = 8;

interface Opened {
  readonly backend: OrmBackend;
  readonly store: OrmLedgerStore<unknown>;
  readonly ledger: Ledger<unknown>;
}

async function open(orm: Orm, t: OrmTarget): Promise<Opened> {
  const backend = await openOrmBackend(orm, t, { poolSize: 12 });
  const store = createOrmLedgerStore({
    executor: backend.executor,
    ...(t.db === 'postgres' ? { schema: t.schema } : {}),
  });
  const ledger = createLedger({ store });
  await ledger.ready();
  return { backend, store, ledger };
}

/** `handler` behind a deferred route of `ledger` for the caller alice; handler errors kept. */
function route(ledger: Ledger<unknown>, handler: IdempotentHandler<unknown>, errors: unknown[]) {
  const handle = withIdempotency(
    createIdempotencyMiddleware({
      ledger,
      scopeOf: () => 'alice',
      writes: 'deferred',
      onError: (e) => errors.push(e),
    }),
    handler,
  );
  return (key: string, body: object) =>
    handle(
      new Request('http://shop.test/orders', {
        method: 'POST',
        headers: { 'idempotency-key': key, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }),
    );
}

/** Writes the effect `<key>/<body.tag>` through the ORM's transaction, then answers `body.status`. */
function effectRoute(
  backend: OrmBackend,
  hold?: { written(): void; gate: Promise<void> },
): IdempotentHandler<unknown> {
  return async (request, context) => {
    const {
      tag,
      status = 201,
      fail,
    } = (await request.json()) as {
      tag: string;
      status?: number;
      fail?: boolean;
    };
    await backend.writeEffect(context!.tx, `${context!.key}/${tag}`);
    if (hold !== undefined) {
      hold.written();
      await hold.gate;
    }
    if (fail === true) throw new Error('the route failed after its write');
    return Response.json({ tag }, { status });
  };
}

function deferredSuite(orm: Orm, name: string, target: () => OrmTarget, skip?: string): void {
  describe(`writes: 'deferred' on ${orm} (${name})`, { skip: skip ?? false }, () => {
    it('commits the write with the row; a replay and a conflict write nothing; a throw and a 5xx roll back', async () => {
      const { backend, store, ledger } = await open(orm, target());
      try {
        assert.equal(typeof store.capabilities.deferredCommit?.inTransaction?.commit, 'function');
        const errors: unknown[] = [];
        const post = route(ledger, effectRoute(backend), errors);
        const first = await post('k-1', { tag: 'a' });
        assert.equal(first.status, 201);
        assert.equal(await backend.countEffects('k-1/a'), 1);
        // Another ledger (not this one's receipt cache): its route runs, finds the row, rolls back.
        const other = route(createLedger({ store }), effectRoute(backend), errors);
        const replay = await other('k-1', { tag: 'a' });
        assert.equal(replay.headers.get('idempotent-replayed'), 'true');
        assert.deepEqual(await replay.json(), { tag: 'a' });
        const conflict = await other('k-1', { tag: 'b' });
        assert.equal(conflict.status, 422);
        assert.equal(await backend.countEffects('k-1/b'), 0, "the conflict's write rolled back");
        assert.equal(await backend.countEffects('k-1/a'), 1, 'the replay wrote nothing');

        const thrown = await post('k-2', { tag: 'a', fail: true });
        assert.equal(thrown.status, 500);
        assert.match(String(errors[0]), /the route failed after its write/);
        const failed = await post('k-3', { tag: 'a', status: 503 });
        assert.equal(failed.status, 503);
        assert.deepEqual(
          [await backend.countEffects('k-2/a'), await backend.countEffects('k-3/a')],
          [0, 0],
        );
        assert.equal((await ledger.lookup('alice', 'k-2')).kind, 'never_seen');
        assert.equal((await ledger.lookup('alice', 'k-3')).kind, 'never_seen');
        assert.equal((await post('k-2', { tag: 'again' })).status, 201);
        assert.equal(await backend.countEffects('k-2/again'), 1);
      } finally {
        await backend.close();
      }
    });

    it('a duplicate in the same process while the first is open gets 409, another payload 422; neither writes', async () => {
      const { backend, ledger } = await open(orm, target());
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let written!: () => void;
      const inside = new Promise<void>((resolve) => (written = resolve));
      try {
        const post = route(ledger, effectRoute(backend, { written, gate }), []);
        const first = post('k-4', { tag: 'first' });
        await inside; // the first has written in its transaction and waits at the gate
        const duplicate = await post('k-4', { tag: 'first' });
        assert.equal(duplicate.status, 409);
        assert.ok(duplicate.headers.get('retry-after'));
        assert.equal((await post('k-4', { tag: 'other' })).status, 422);
        release();
        assert.equal((await first).status, 201);
        assert.equal(await backend.countEffects('k-4/first'), 1);
        assert.equal(await backend.countEffects('k-4/other'), 0);
        const replay = await post('k-4', { tag: 'first' });
        assert.equal(replay.headers.get('idempotent-replayed'), 'true');
      } finally {
        release();
        await backend.close();
      }
    });

    it("a key another process holds in flight the claimed way: 409, and the route's write rolls back", async () => {
      const { backend, store, ledger } = await open(orm, target());
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let started!: () => void;
      const running = new Promise<void>((resolve) => (started = resolve));
      try {
        // Another ledger (another process) claims the key and holds it, writing nothing yet.
        const claimedRoute = withIdempotency(
          createIdempotencyMiddleware({ ledger: createLedger({ store }), scopeOf: () => 'alice' }),
          async () => {
            started();
            await gate;
            return Response.json({ claimed: true }, { status: 201 });
          },
        );
        const claimed = claimedRoute(
          new Request('http://shop.test/orders', {
            method: 'POST',
            headers: { 'idempotency-key': 'k-6', 'content-type': 'application/json' },
            body: JSON.stringify({ tag: 'deferred' }),
          }),
        );
        await running;
        const post = route(ledger, effectRoute(backend), []);
        const duplicate = await post('k-6', { tag: 'deferred' });
        assert.equal(duplicate.status, 409);
        assert.equal(await backend.countEffects('k-6/deferred'), 0);
        release();
        assert.equal((await claimed).status, 201);
      } finally {
        release();
        await backend.close();
      }
    });

    it('deferredCommit called alone: the writes and the row in one transaction, nothing when the key has a row', async () => {
      const { backend, store } = await open(orm, target());
      try {
        const commit = store.capabilities.deferredCommit!;
        const entry = (key: string): CompletedEntry => ({
          scope: 's',
          key,
          fingerprint: 'f'.repeat(64),
          state: 'completed',
          token: `t-${key}`,
          firstSeenAt: 7_000,
          completedAt: 7_001,
          expiresAt: 100_000,
          receipt: { status: 201, headers: [], body: new Uint8Array([2]) },
        });
        const write = (id: string) => [
          { sql: 'INSERT INTO effects (id, n) VALUES ($1, 1)', params: [id] },
        ];
        // A first sighting whose partition does not exist yet (PostgreSQL) is made first.
        assert.equal(await commit(entry('free'), write('free')), true);
        assert.equal(await commit(entry('free'), write('free-again')), false);
        assert.deepEqual(
          [await backend.countEffects('free'), await backend.countEffects('free-again')],
          [1, 0],
        );
        assert.equal((await store.get('s', 'free'))?.state, 'completed');
      } finally {
        await backend.close();
      }
    });

    it('a receipt past retention, not yet swept: the route rolls back, 409 at once, and its retry runs', async () => {
      const { backend, store } = await open(orm, target());
      try {
        const clock = new VirtualClock({ startAt: 1_000_000_000 });
        const post = route(
          createLedger({ store, clock, retentionMs: 60_000 }),
          effectRoute(backend),
          [],
        );
        assert.equal((await post('k-7', { tag: 'first' })).status, 201);
        await clock.advance(61_000);
        // The route cannot run twice for one request: the key is given back, the client retries.
        const spent = await post('k-7', { tag: 'again' });
        assert.equal(spent.status, 409);
        assert.ok(spent.headers.get('retry-after'));
        assert.equal(await backend.countEffects('k-7/again'), 0);
        assert.equal((await post('k-7', { tag: 'again' })).status, 201);
        assert.deepEqual(
          [await backend.countEffects('k-7/first'), await backend.countEffects('k-7/again')],
          [1, 1],
        );
      } finally {
        await backend.close();
      }
    });

    it('a route with steps is told to take writes: claimed; nothing is stored', async () => {
      const { backend, ledger } = await open(orm, target());
      try {
        const errors: unknown[] = [];
        const post = route(
          ledger,
          async (_request, context) => {
            await context!.step('charge', async () => 'charged');
            return new Response('never');
          },
          errors,
        );
        assert.equal((await post('k-5', {})).status, 500);
        assert.match(String(errors[0]), /step\(\) needs a claimed key.*writes: 'claimed'/);
        assert.equal((await ledger.lookup('alice', 'k-5')).kind, 'never_seen');
      } finally {
        await backend.close();
      }
    });

    it(`${REQUESTS} concurrent requests with one key over ${LEDGERS} ledgers x ${ROUNDS} rounds: one effect per key`, async () => {
      const { backend, store } = await open(orm, target());
      try {
        const ledgers = Array.from({ length: LEDGERS }, () => createLedger({ store }));
        for (let round = 0; round < ROUNDS; round++) {
          const key = `race-${round}`;
          const results = await Promise.all(
            Array.from({ length: REQUESTS }, (_, i) =>
              ledgers[i % LEDGERS]!.executeDeferred(
                { scope: 'race', key, fingerprint: 'fp-race' },
                async (_claim, tx) => {
                  await backend.writeEffect(tx, key);
                  return { receipt: jsonReceipt(201, { key }), writes: [] };
                },
              ),
            ),
          );
          const kinds = results.map((r) => r.kind);
          const n = (kind: string) => kinds.filter((k) => k === kind).length;
          // Each ledger runs its first request and answers its others 409 at once; the other
          // ledgers' runs reach the database, find the winner's row, roll back and replay it.
          assert.deepEqual(
            [n('executed'), n('replayed'), n('in_flight')],
            [1, LEDGERS - 1, REQUESTS - LEDGERS],
            `round ${round}: ${kinds}`,
          );
        }
        const ids = await backend.effectIds();
        assert.equal(ids.length, ROUNDS, 'one effect per key');
        assert.equal(new Set(ids).size, ROUNDS);
      } finally {
        await backend.close();
      }
    });
  });
}

// PostgreSQL's check first: loading an ORM on SQLite (Prisma's engine) blocks the event loop
// longer than the check's connect timeout.
await forEachPostgresOrm(
  'deferred routes on the ORMs',
  'oncely_orm_deferred',
  (orm, target, skip) => deferredSuite(orm, 'postgres', target, skip),
);

const dir = tempDir('oncely-orm-deferred-');
let files = 0;
for (const orm of ORMS)
  deferredSuite(orm, 'sqlite', () => sqliteTarget(dir, `deferred-${orm}-${(files += 1)}`));
