import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLedger, jsonReceipt } from '#oncely/ledger/index.js';
import { createOrmLedgerStore } from '#oncely/stores/orm/index.js';
import { tempDir } from '../support/temp-dir.js';
import {
  forEachPostgresOrm,
  ORMS,
  openOrmBackend,
  sqliteTarget,
  type Orm,
  type OrmTarget,
} from '../support/orm-backends.js';

/**
 * The race on each ORM x database: 40 concurrent requests with one key, 20 rounds (a key each):
 * one effect per key, whatever interleaving the pool and the ORM make. The others are told the
 * key is in flight or replay its receipt.
 */
const REQUESTS = 40;
const ROUNDS = 20;

function raceSuite(orm: Orm, name: string, target: () => OrmTarget, skip?: string): void {
  describe(`race: ${orm} on ${name}`, { skip: skip ?? false }, () => {
    it(`${REQUESTS} concurrent requests with one key x ${ROUNDS} rounds: one effect per key`, async () => {
      const t = target();
      const backend = await openOrmBackend(orm, t);
      const store = createOrmLedgerStore({
        executor: backend.executor,
        ...(t.db === 'postgres' ? { schema: t.schema } : {}),
      });
      const ledger = createLedger({ store });
      try {
        await ledger.ready();
        for (let round = 0; round < ROUNDS; round++) {
          const key = `race-${round}`;
          const results = await Promise.all(
            Array.from({ length: REQUESTS }, () =>
              ledger.execute({ scope: 'race', key, fingerprint: 'fp-race' }, async (tx) => {
                await backend.writeEffect(tx, key);
                return jsonReceipt(201, { key });
              }),
            ),
          );
          const kinds = results.map((r) => r.kind);
          assert.equal(kinds.filter((k) => k === 'executed').length, 1, `round ${round}: ${kinds}`);
          assert.ok(
            kinds.every((k) => ['executed', 'replayed', 'in_flight'].includes(k)),
            `${kinds}`,
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

const dir = tempDir('oncely-orm-race-');
for (const orm of ORMS) raceSuite(orm, 'sqlite', () => sqliteTarget(dir, `race-${orm}`));

await forEachPostgresOrm('the ORM races', 'oncely_orm_race', (orm, target, skip) =>
  raceSuite(orm, 'postgres', target, skip),
);
