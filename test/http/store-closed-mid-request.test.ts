// A server that shuts down closes its store (or the database it gave the store) once it has
// drained; a request still running then, whose handler had not yet written, finds the store
// closed at its first statement. That is the server going away, not the handler's bug: the
// answer is 503 + Retry-After (problem+json), the key stays free, and a retry runs the effect
// once (bench/chaos checks this of its receivers' SIGTERM drain). Ordered by promises: the
// handler waits for the test to close the store, then writes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createIdempotencyMiddleware, withIdempotency } from '#oncely/http/index.js';
import { createLedger } from '#oncely/ledger/index.js';
import {
  createSqliteStore,
  openSqliteDatabase,
  type SqliteDatabase,
} from '#oncely/stores/sqlite/index.js';
import { VirtualClock } from '#oncely/time/index.js';

const EFFECTS_DDL = 'CREATE TABLE IF NOT EXISTS effects (key TEXT NOT NULL)';
const STARTED_AT = 1_700_000_000_000;
/** The ledger's default lease: a claim whose release failed with the store is free after it. */
const LEASE_MS = 2000;

/** A receiver on `database` whose first request waits at `gate` before its effect's write. */
function receiver(database: SqliteDatabase, clock: VirtualClock, gate?: Promise<void>) {
  const store = createSqliteStore({ database });
  const ledger = createLedger({ store, clock, leaseMs: LEASE_MS });
  const errors: unknown[] = [];
  const middleware = createIdempotencyMiddleware({
    ledger,
    scopeOf: () => 'chaos',
    onError: (error) => errors.push(error),
  });
  let entered = (): void => {};
  const inHandler = new Promise<void>((resolve) => (entered = resolve));
  const handle = withIdempotency(middleware, async (_request, context) => {
    entered();
    if (gate) await gate;
    await context!.sql.run('INSERT INTO effects (key) VALUES ($1)', [context!.key]);
    return Response.json({ key: context!.key }, { status: 201 });
  });
  const post = (): Promise<Response> =>
    handle(
      new Request('http://receiver.test/effects', {
        method: 'POST',
        headers: { 'idempotency-key': 'k-1', 'content-type': 'application/json' },
        body: '{}',
      }),
    );
  return { store, ledger, errors, inHandler, post };
}

/** The answer a request gets when `shutDown` closes what it closes while its handler waits. */
async function answerAcrossShutdown(
  shutDown: (parts: { database: SqliteDatabase; store: { close(): Promise<void> } }) => unknown,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'oncely-closed-mid-request-'));
  const file = join(dir, 'receiver.db');
  try {
    const database = openSqliteDatabase(file);
    database.exec(EFFECTS_DDL);
    let open = (): void => {};
    const gate = new Promise<void>((resolve) => (open = resolve));
    const first = receiver(
      database,
      new VirtualClock({ startAt: STARTED_AT, autoAdvance: false }),
      gate,
    );
    await first.ledger.ready();
    const answering = first.post();
    await first.inHandler; // claimed; the effect has not written yet
    await shutDown({ database, store: first.store });
    open();
    const answer = await answering;
    const body = (await answer.json()) as { code?: string; status?: number };
    assert.equal(answer.status, 503, `answered ${answer.status} ${JSON.stringify(body)}`);
    assert.ok(answer.headers.get('retry-after'), 'a 503 says when to come back');
    assert.equal(answer.headers.get('content-type'), 'application/problem+json');
    assert.equal(body.code, 'ledger_unavailable');
    database.close(); // a second close does nothing

    // The next process on the same file, once the claim's lease is over (its release may have
    // failed with the store): the key is free, the retry runs the effect once.
    const reopened = openSqliteDatabase(file);
    try {
      const next = receiver(
        reopened,
        new VirtualClock({ startAt: STARTED_AT + LEASE_MS + 1, autoAdvance: false }),
      );
      const retried = await next.post();
      assert.equal(retried.status, 201);
      const { n } = reopened.prepare('SELECT count(*) AS n FROM effects').get() as { n: number };
      assert.equal(n, 1, 'one effect row: the first request wrote nothing');
    } finally {
      reopened.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the store closed under a request that had not written yet: 503 + Retry-After, not 500', async () => {
  await answerAcrossShutdown(({ store }) => store.close());
});

test('the database the app gave the store closed under a request (a drain): 503, not 500', async () => {
  // bench/chaos's receiver closes its better-sqlite3 database itself once its server closed.
  await answerAcrossShutdown(({ database }) => database.close());
});
