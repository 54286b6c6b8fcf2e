import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { recorder } from '#oncely/stores/ledger/executor/call-recorder.js';
import { cutAtPlaceholders, dollarToQuestion } from '#oncely/stores/orm/placeholders.js';
import { returnsRows } from '#oncely/stores/orm/prisma-executor.js';

describe('the call recorder (a transaction that has not begun yet)', () => {
  /** A builder as ORMs make them: chained calls, a terminal promise, a callable root. */
  function fakeOrm(log: string[]) {
    const root = (table: string) => ({
      insert: (row: object) => Promise.resolve(`${table}:${JSON.stringify(row)}`),
    });
    return Object.assign(root, {
      label: 'real',
      fn: { count: (column: string) => ({ counted: column }) },
      insertInto(table: string) {
        log.push(`insertInto ${table} on ${this.label}`);
        return {
          values: (row: object) => ({
            execute: async () => `${table}:${JSON.stringify(row)}`,
          }),
        };
      },
      select: async (expression: unknown) => expression,
    });
  }

  it('replays chained calls on the real object once awaited, with `this` kept', async () => {
    const log: string[] = [];
    let resolved = 0;
    const real = fakeOrm(log);
    const tx = recorder(async () => (resolved++, real), []) as ReturnType<typeof fakeOrm>;
    const pending = tx.insertInto('orders').values({ id: 1 }).execute();
    assert.equal(resolved, 0, 'nothing begins before the statement is awaited');
    assert.equal(await pending, 'orders:{"id":1}');
    assert.deepEqual(log, ['insertInto orders on real']);
  });

  it('records a call of the object itself (Knex) and replays recorders passed as arguments', async () => {
    const real = fakeOrm([]);
    const tx = recorder(async () => real, []) as ReturnType<typeof fakeOrm>;
    assert.equal(await tx('orders').insert({ id: 2 }), 'orders:{"id":2}');
    assert.deepEqual(await tx.select(tx.fn.count('id')), { counted: 'id' });
  });

  it('rejects the statement when the transaction cannot begin, through then, catch and finally', async () => {
    const failing = recorder(async () => {
      throw new Error('no connection');
    }, []) as ReturnType<typeof fakeOrm>;
    await assert.rejects(async () => failing.insertInto('x').values({}).execute(), /no connection/);
    const caught = await (failing.select(1) as unknown as Promise<unknown>).catch(
      (e: Error) => e.message,
    );
    assert.equal(caught, 'no connection');
  });
});

describe('placeholders', () => {
  it('rewrites $n to ? in order, repeating and reordering the values', () => {
    assert.deepEqual(dollarToQuestion('SELECT $2, $1, $2', ['a', 'b']), {
      sql: 'SELECT ?, ?, ?',
      params: ['b', 'a', 'b'],
    });
    assert.deepEqual(dollarToQuestion('SELECT 1 AS $fn$', []), {
      sql: 'SELECT 1 AS $fn$',
      params: [],
    });
  });

  it('cuts a statement at its placeholders for a builder of text and values', () => {
    assert.deepEqual(cutAtPlaceholders('a = $2 AND b = $1', [1, 2], 'postgres'), {
      texts: ['a = ', ' AND b = ', ''],
      values: [2, 1],
    });
    assert.deepEqual(cutAtPlaceholders('a = ? AND b = ?', [1, 2], 'sqlite'), {
      texts: ['a = ', ' AND b = ', ''],
      values: [1, 2],
    });
  });
});

describe('which statements Prisma reads rows from', () => {
  it('a query, a union of queries, RETURNING, a WITH that ends in SELECT: rows', () => {
    for (const sql of [
      'SELECT 1',
      '(SELECT a FROM t) UNION ALL (SELECT a FROM u) LIMIT 1',
      'UPDATE t SET a = 1 RETURNING a',
      'WITH done AS (UPDATE t SET a = 1 RETURNING 1) SELECT count(*) FROM done',
    ])
      assert.equal(returnsRows(sql), true, sql);
  });

  it('a write, a write after a WITH, DDL: its count', () => {
    for (const sql of [
      'UPDATE t SET a = 1 FROM (SELECT 1) AS x WHERE b = 2',
      'WITH gone AS (DELETE FROM t RETURNING 1) INSERT INTO u (a) SELECT 1 FROM gone',
      'DELETE FROM t USING (SELECT 1) AS x WHERE a = 1',
      'CREATE TABLE t (a int)',
    ])
      assert.equal(returnsRows(sql), false, sql);
  });
});
