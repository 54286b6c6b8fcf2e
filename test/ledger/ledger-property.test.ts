import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  createLedger,
  jsonReceipt,
  receiptJson,
  type ExecuteResult,
} from '#oncely/ledger/index.js';
import { createMemoryStore } from '#oncely/stores/memory/index.js';
import { VirtualClock } from '#oncely/time/index.js';

const LEASE_MS = 1_000;
const RETENTION_MS = 10_000;

/** One step of a random history: a batch of concurrent requests, then time moves on. */
const step = fc.record({
  requests: fc.array(
    fc.record({
      key: fc.constantFrom('a', 'b'),
      fingerprint: fc.constantFrom('f1', 'f2'),
      outcome: fc.constantFrom('ok', 'ok', 'ok', 'throw', '503'),
    }),
    { minLength: 1, maxLength: 4 },
  ),
  advanceMs: fc.constantFrom(0, 10, LEASE_MS, RETENTION_MS),
});

describe('ledger properties (memory store, random concurrent histories)', () => {
  it('every committed effect is one "executed" answer, and every replay is the last executed receipt', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 8 }), async (history) => {
        const store = createMemoryStore();
        const clock = new VirtualClock({ startAt: 0 });
        const ledger = createLedger({
          store,
          clock,
          leaseMs: LEASE_MS,
          retentionMs: RETENTION_MS,
          tombstoneMs: 0,
        });
        let serial = 0;
        const executed = new Map<string, number[]>();
        const lastReceipt = new Map<string, number>();
        for (const { requests, advanceMs } of history) {
          const results = await Promise.all(
            requests.map(async (r) => {
              const id = ++serial;
              try {
                const result: ExecuteResult = await ledger.execute(
                  { scope: 's', key: r.key, fingerprint: r.fingerprint },
                  async (tx) => {
                    await new Promise<void>((resolve) => setImmediate(resolve));
                    tx.set('effects', String(id), r.key);
                    if (r.outcome === 'throw') throw new Error('effect failed');
                    return jsonReceipt(r.outcome === '503' ? 503 : 201, { id });
                  },
                );
                return { r, result };
              } catch {
                return { r, result: undefined };
              }
            }),
          );
          for (const { r, result } of results) {
            if (result?.kind === 'executed') {
              const { id } = receiptJson<{ id: number }>(result.receipt);
              executed.set(r.key, [...(executed.get(r.key) ?? []), id]);
              lastReceipt.set(r.key, id);
            }
          }
          for (const { r, result } of results) {
            if (result?.kind === 'replayed')
              assert.equal(receiptJson<{ id: number }>(result.receipt).id, lastReceipt.get(r.key));
            assert.notEqual(result?.kind, 'unavailable');
          }
          await clock.advance(advanceMs);
        }
        const committed = store.entries<string>('effects');
        for (const key of ['a', 'b']) {
          const ids = committed
            .filter(([, k]) => k === key)
            .map(([id]) => Number(id))
            .sort((x, y) => x - y);
          assert.deepEqual(
            ids,
            [...(executed.get(key) ?? [])].sort((x, y) => x - y),
          );
        }
      }),
      { numRuns: 150 },
    );
  });
});
