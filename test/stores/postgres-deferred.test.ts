// The deferred commit's reading of PostgreSQL's answers, with a scripted client: which failure
// is whose, and when a connection goes back to the pool or is destroyed. The real server's side
// is in test/http/deferred-writes.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CompletedEntry } from '#oncely/ledger/ledger-entry.js';
import { DeferredWriteError } from '#oncely/ledger/deferred-writes.js';
import type {
  PgPool,
  PgQueryConfig,
  PgQueryResult,
} from '#oncely/stores/postgres-driver/pg-pool.js';
import { postgresDeferredCommit } from '#oncely/stores/ledger/postgres/postgres-deferred.js';
import { postgresLedgerTables } from '#oncely/stores/ledger/postgres/postgres-tombstones.js';

const entry: CompletedEntry = {
  scope: 's',
  key: 'k',
  fingerprint: 'ab'.repeat(32),
  state: 'completed',
  token: 't',
  firstSeenAt: 1,
  completedAt: 2,
  expiresAt: 3,
  receipt: { status: 201, headers: [], body: new Uint8Array() },
};
const writes = [
  { sql: 'INSERT INTO a VALUES ($1)', params: [1] },
  { sql: 'INSERT INTO b VALUES ($1)', params: [2] },
];

/**
 * What the scripted server answers the statement at `index` (0 BEGIN, 1 the rows' statement, then
 * the writes, then COMMIT; ROLLBACK in place of the writes when the rows' statement names members).
 */
type Script = (index: number, text: string) => PgQueryResult | Error;

function scriptedPool(script: Script, pipeline: boolean) {
  const sent: string[] = [];
  const released: Array<boolean | Error | undefined> = [];
  const client = {
    pipeline,
    query(statement: string | PgQueryConfig): Promise<PgQueryResult> {
      const text = typeof statement === 'string' ? statement : statement.text;
      // One at a time, a failure is followed by ROLLBACK in place of the rest: it always works.
      const answer = text === 'ROLLBACK' ? ok('ROLLBACK') : script(sent.length, text);
      sent.push(text);
      return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
    },
    release: (destroy?: boolean | Error) => void released.push(destroy),
  };
  const pool = { connect: async () => client } as unknown as PgPool;
  return { pool, sent, released };
}

const ok = (command = 'OK'): PgQueryResult => ({ rows: [], rowCount: 1, command }) as PgQueryResult;
const failure = (code: string): Error => Object.assign(new Error(`failed: ${code}`), { code });
const commit = postgresDeferredCommit(
  postgresLedgerTables(undefined, 'ledger'),
  'SELECT 1',
  (u) => u,
);
const COMMIT_AT = 2 + writes.length;
const members = [{ entry, writes }];

for (const pipeline of [true, false]) {
  describe(`the deferred commit's answers, ${pipeline ? 'pipelined' : 'one statement at a time'}`, () => {
    it('commits: true, and the connection goes back to the pool', async () => {
      const { pool, sent, released } = scriptedPool(
        (i) => ok(i === COMMIT_AT ? 'COMMIT' : 'OK'),
        pipeline,
      );
      assert.deepEqual(await commit(pool, members), { committed: true });
      assert.equal(sent.length, COMMIT_AT + 1);
      assert.deepEqual([sent[0], sent[COMMIT_AT]], ['BEGIN', 'COMMIT']);
      assert.deepEqual(released, [false]);
    });

    it('keys that have a row: not committed, naming them, no write sent, ROLLBACK, the connection kept', async () => {
      const { pool, sent, released } = scriptedPool(
        (i) => (i === 1 ? ({ rows: [{ found: [1, 3] }], rowCount: 1 } as PgQueryResult) : ok()),
        pipeline,
      );
      assert.deepEqual(await commit(pool, members), { committed: false, found: [0, 2] });
      assert.equal(sent.length, 3);
      assert.deepEqual([sent[0], sent[2]], ['BEGIN', 'ROLLBACK']);
      assert.deepEqual(released, [false]);
    });

    it("a write that fails is the effect's error, naming the write; the connection is kept", async () => {
      const { pool, released } = scriptedPool(
        (i) => (i === 3 ? failure('23502') : ok(i === COMMIT_AT ? 'ROLLBACK' : 'OK')),
        pipeline,
      );
      await assert.rejects(
        commit(pool, members),
        (error: unknown) =>
          error instanceof DeferredWriteError && /INSERT INTO b/.test(error.message),
      );
      assert.deepEqual(released, [false]);
    });

    it("a COMMIT that fails rejects with the driver's error and destroys the connection", async () => {
      const { pool, released } = scriptedPool(
        (i) => (i === COMMIT_AT ? failure('08006') : ok()),
        pipeline,
      );
      await assert.rejects(commit(pool, members), /failed: 08006/);
      assert.deepEqual(released, [true]);
    });

    for (const [code, what] of [
      ['40P01', 'a deadlock'],
      ['22P02', 'a value it cannot take'],
    ])
      it(`the rows' statement failing for the store (${what}, not keys taken) rejects with its error and destroys the connection`, async () => {
        const { pool, released } = scriptedPool(
          (i) =>
            i === 1 ? failure(code!) : i > 1 && i < COMMIT_AT ? failure('25P02') : ok('ROLLBACK'),
          pipeline,
        );
        await assert.rejects(commit(pool, members), new RegExp(`failed: ${code}`));
        assert.deepEqual(released, [true]);
      });
  });
}
