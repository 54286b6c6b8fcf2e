// Claimed and deferred requests racing on PostgreSQL: whatever the mix of modes, keys and payloads,
// each key's effect is written once, by the one request the ledger says executed, and every other
// answer agrees with it (a replay for the same payload, a conflict for another, or a 409 while a
// claimed request holds the key).
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createLedger, jsonReceipt, type Ledger } from '#oncely/ledger/index.js';
import type { ExecuteResult } from '#oncely/ledger/ledger-result.js';
import { describePostgres, storeInFreshSchema } from '../stores/postgres-env.js';

const KEYS = ['k1', 'k2', 'k3'] as const;
const PAYLOADS = ['a', 'b'] as const;
const MODES = ['claimed', 'deferred'] as const;
const INSERT = 'INSERT INTO effects (run, key, payload) VALUES ($1, $2, $3)';

await describePostgres('claimed and deferred requests racing', ({ url, options }) => {
  let opened: Awaited<ReturnType<typeof storeInFreshSchema>>;
  let ledger: Ledger<unknown>;
  before(async () => {
    if (options.skip) return;
    opened = storeInFreshSchema(url, 'oncely_defer_race');
    ledger = createLedger({ store: opened.store });
    await ledger.ready();
    await opened.store.transaction(async (tx) => {
      await opened.store.sql!(tx).run(
        'CREATE TABLE effects (run INTEGER NOT NULL, key TEXT NOT NULL, payload TEXT NOT NULL)',
      );
    });
  });
  after(async () => void (await opened?.close()));

  it(
    'property: one effect per key, written by the request that executed; every other answer agrees',
    options,
    async () => {
      let run = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.array(
            fc.record({
              key: fc.constantFrom(...KEYS),
              payload: fc.constantFrom(...PAYLOADS),
              mode: fc.constantFrom(...MODES),
            }),
            { minLength: 2, maxLength: 12 },
          ),
          async (requests) => {
            run += 1;
            const { store } = opened;
            const answers: ExecuteResult[] = await Promise.all(
              requests.map(({ key, payload, mode }) => {
                const request = { scope: 'race', key: `${run}-${key}`, fingerprint: payload };
                const receipt = jsonReceipt(201, { payload });
                const params = [run, key, payload];
                return mode === 'deferred'
                  ? ledger.executeDeferred(request, () => ({
                      receipt,
                      writes: [{ sql: INSERT, params }],
                    }))
                  : ledger.execute(request, async (tx) => {
                      await store.sql!(tx).run(INSERT, params);
                      return receipt;
                    });
              }),
            );
            const written = await store.transaction(async (tx) =>
              store.sql!(tx).all<{ key: string; payload: string }>(
                'SELECT key, payload FROM effects WHERE run = $1',
                [run],
              ),
            );
            for (const key of new Set(requests.map((r) => r.key))) {
              const mine = requests.flatMap((r, i) =>
                r.key === key ? [{ ...r, answer: answers[i]! }] : [],
              );
              const executed = mine.filter((r) => r.answer.kind === 'executed');
              const effects = written.filter((w) => w.key === key);
              assert.equal(
                executed.length,
                1,
                `one request executed ${key}: ${mine.map((r) => r.answer.kind)}`,
              );
              assert.deepEqual(effects, [{ key, payload: executed[0]!.payload }]);
              for (const { payload, answer } of mine) {
                if (answer.kind === 'replayed') assert.equal(payload, executed[0]!.payload);
                else if (answer.kind === 'conflict') assert.notEqual(payload, executed[0]!.payload);
                else assert.ok(['executed', 'in_flight'].includes(answer.kind), answer.kind);
              }
            }
          },
        ),
        { numRuns: 25 },
      );
    },
  );
});
