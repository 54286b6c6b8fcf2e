// The PostgreSQL store's one transport, on scripted clients: every statement queued at once on a
// pipelining client, one after another's answer elsewhere; answers in order, failures settled.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { PgPoolClient, PgQueryResult } from '#oncely/stores/postgres-driver/pg-pool.js';
import { pipelines, sendStatements } from '#oncely/stores/postgres-driver/send-statements.js';

/** A client that answers each statement only when the test says so, recording what was asked. */
function heldClient(pipeline: boolean | undefined) {
  const asked: string[] = [];
  const pending: Array<() => void> = [];
  const client = {
    ...(pipeline === undefined ? {} : { pipeline }),
    query(statement: string | { text: string }): Promise<PgQueryResult> {
      const text = typeof statement === 'string' ? statement : statement.text;
      asked.push(text);
      return new Promise((resolve, reject) =>
        pending.push(() =>
          text === 'FAIL'
            ? reject(Object.assign(new Error('failed'), { code: '23505' }))
            : resolve({ rows: [{ text }], rowCount: 1 }),
        ),
      );
    },
    release() {},
  } as unknown as PgPoolClient;
  /** Answers the oldest unanswered statement, then lets the sender go on. */
  const answerOne = async () => {
    pending.shift()?.();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { client, asked, answerOne };
}

describe('sendStatements', () => {
  it('pipeline: true queues every statement before the first answer', async () => {
    const { client, asked, answerOne } = heldClient(true);
    assert.equal(pipelines(client), true);
    const answers = sendStatements(client, ['BEGIN', 'FAIL', { name: 'n', text: 'X', values: [] }]);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(asked, ['BEGIN', 'FAIL', 'X'], 'all on the wire at once');
    for (let i = 0; i < 3; i++) await answerOne();
    const [begin, failed, last] = await answers;
    assert.equal(begin!.ok, true);
    assert.equal(failed!.ok, false, 'a failure is an answer, not a rejection');
    assert.deepEqual(last!.ok && last!.result.rows, [{ text: 'X' }]);
  });

  for (const pipeline of [false, undefined])
    it(`pipeline ${pipeline === false ? 'false' : 'absent (pg before 8.17)'}: each statement after the last one's answer, a failure included`, async () => {
      const { client, asked, answerOne } = heldClient(pipeline);
      assert.equal(pipelines(client), false);
      const answers = sendStatements(client, ['BEGIN', 'FAIL', 'COMMIT']);
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(asked, ['BEGIN']);
      await answerOne();
      assert.deepEqual(asked, ['BEGIN', 'FAIL']);
      await answerOne();
      assert.deepEqual(
        asked,
        ['BEGIN', 'FAIL', 'COMMIT'],
        'sent after a failure too: answers line up',
      );
      await answerOne();
      assert.deepEqual(
        (await answers).map((a) => a.ok),
        [true, false, true],
      );
    });
});
