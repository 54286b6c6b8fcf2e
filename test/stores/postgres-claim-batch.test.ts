import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { InFlightEntry } from '#oncely/ledger/ledger-entry.js';
import type { LedgerRow } from '#oncely/stores/ledger/ledger-row.js';
import {
  MAX_CLAIM_BATCH,
  claimBatcher,
  type ClaimFound,
} from '#oncely/stores/ledger/postgres/postgres-claim-batch.js';
import { inFlight } from './conformance.js';

/** A claim statement the test answers by hand: each call's keys, and its answer to give. */
function fakeStatements() {
  const calls: Array<{
    keys: string[];
    answer: (found: ClaimFound[] | Error) => void;
  }> = [];
  const send = (entries: readonly InFlightEntry[]) =>
    new Promise<ClaimFound[]>((resolve, reject) => {
      calls.push({
        keys: entries.map((e) => e.key),
        answer: (found) => (found instanceof Error ? reject(found) : resolve(found)),
      });
    });
  return { calls, send };
}

const row = (key: string): LedgerRow => ({ key }) as unknown as LedgerRow;
const entry = (key: string) => inFlight('alice', key, `t-${key}`, 1000);
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('PostgreSQL claims of concurrent requests, batched', () => {
  it('a claim goes at once when none is on its way; the ones made meanwhile go next, together', async () => {
    const { calls, send } = fakeStatements();
    const batcher = claimBatcher(send);
    const a = batcher.claim(entry('a'));
    assert.deepEqual(
      calls.map((c) => c.keys),
      [['a']],
    );
    const rest = ['b', 'c', 'd'].map((k) => batcher.claim(entry(k)));
    await settle();
    assert.equal(calls.length, 1, 'nothing more is sent while the first statement is out');
    calls[0]!.answer([undefined]);
    assert.equal(await a, undefined, 'a won');
    await settle();
    assert.deepEqual(
      calls.map((c) => c.keys),
      [['a'], ['b', 'c', 'd']],
    );
    calls[1]!.answer([undefined, row('c'), undefined]);
    assert.deepEqual(await Promise.all(rest), [undefined, row('c'), undefined]);
    // Idle again: the next claim goes at once.
    void batcher.claim(entry('e'));
    assert.deepEqual(calls[2]!.keys, ['e']);
  });

  it(`a statement carries at most ${MAX_CLAIM_BATCH} claims`, async () => {
    const { calls, send } = fakeStatements();
    const batcher = claimBatcher(send);
    const all = Array.from({ length: MAX_CLAIM_BATCH + 2 }, (_, i) =>
      batcher.claim(entry(`k${i}`)),
    );
    calls[0]!.answer([undefined]);
    await settle();
    assert.equal(calls[1]!.keys.length, MAX_CLAIM_BATCH);
    calls[1]!.answer(calls[1]!.keys.map(() => undefined));
    await settle();
    assert.deepEqual(calls[2]!.keys, [`k${MAX_CLAIM_BATCH + 1}`]);
    calls[2]!.answer([undefined]);
    assert.equal((await Promise.all(all)).length, MAX_CLAIM_BATCH + 2);
  });

  it('a failed statement fails every claim in it; the next claims go on', async () => {
    const { calls, send } = fakeStatements();
    const batcher = claimBatcher(send);
    void batcher.claim(entry('a')).catch(() => {});
    const together = [batcher.claim(entry('b')), batcher.claim(entry('c'))];
    calls[0]!.answer([undefined]);
    await settle();
    const down = Object.assign(new Error('connection terminated'), { code: '57P01' });
    calls[1]!.answer(down);
    for (const claim of together) await assert.rejects(claim, down);
    assert.equal(calls.length, 2, 'not sent again one by one: the server is the problem');
    const next = batcher.claim(entry('d'));
    calls[2]!.answer([undefined]);
    assert.equal(await next, undefined);
  });

  it("an error about one entry's data: each claim of the statement is sent again alone", async () => {
    const { calls, send } = fakeStatements();
    const batcher = claimBatcher(send);
    void batcher.claim(entry('a'));
    const together = Promise.allSettled(['b', 'bad', 'c'].map((k) => batcher.claim(entry(k))));
    calls[0]!.answer([undefined]);
    await settle();
    const invalid = Object.assign(new Error('invalid byte sequence'), { code: '22021' });
    calls[1]!.answer(invalid);
    for (const [i, answer] of [[undefined], invalid, [row('c')]].entries()) {
      await settle();
      assert.deepEqual(calls[2 + i]!.keys, [['b', 'bad', 'c'][i]], 'alone, in order');
      calls[2 + i]!.answer(answer);
    }
    const [b, bad, c] = await together;
    assert.deepEqual(b, { status: 'fulfilled', value: undefined });
    assert.deepEqual(bad, { status: 'rejected', reason: invalid });
    assert.deepEqual(c, { status: 'fulfilled', value: row('c') });
  });
});
