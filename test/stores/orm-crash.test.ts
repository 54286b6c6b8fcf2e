import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLedger, DEFAULT_LEDGER_OPTIONS, jsonReceipt } from '#oncely/ledger/index.js';
import { createOrmLedgerStore } from '#oncely/stores/orm/index.js';
import { VirtualClock } from '#oncely/time/index.js';
import { spawnUntilReady } from '../support/ready-child.js';
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
 * The crash test on each ORM x database: a worker killed with SIGKILL while the route's write is
 * in its transaction leaves neither the effect nor the receipt (only the claim, until its lease
 * ends); one killed after the COMMIT, before its answer, leaves both, and the retry replays.
 */
const CHILD = fileURLToPath(new URL('../fixtures/orm-crash-child.js', import.meta.url));
const START_AT = 1_700_000_000_000;
const LEASE_MS = DEFAULT_LEDGER_OPTIONS.leaseMs;

async function runAndKill(orm: Orm, target: OrmTarget, killPoint: string, key: string) {
  const child = await spawnUntilReady([
    CHILD,
    orm,
    JSON.stringify(target),
    killPoint,
    String(START_AT),
    key,
  ]);
  assert.equal(await child.kill(), 'SIGKILL');
  const { ready } = child;
  if (ready === undefined) assert.fail(`the child never got ready: ${child.stderr()}`);
  return ready;
}

async function afterCrash(orm: Orm, target: OrmTarget) {
  const backend = await openOrmBackend(orm, target);
  const store = createOrmLedgerStore({
    executor: backend.executor,
    ...(target.db === 'postgres' ? { schema: target.schema } : {}),
  });
  const clock = new VirtualClock({ startAt: START_AT });
  const ledger = createLedger({ store, clock, leaseMs: LEASE_MS });
  const run = (key: string) =>
    ledger.execute({ scope: 'crash', key, fingerprint: 'fp-crash' }, async (tx) => {
      await backend.writeEffect(tx, key);
      return jsonReceipt(201, { key });
    });
  return { backend, clock, ledger, run };
}

function crashSuite(orm: Orm, name: string, target: () => OrmTarget, skip?: string): void {
  describe(`crash test: ${orm} on ${name}`, { skip: skip ?? false, concurrency: false }, () => {
    it('killed with the write in the transaction: neither effect nor receipt; a retry runs once', async () => {
      const t = target();
      assert.equal(await runAndKill(orm, t, 'before-commit', 'k-before'), 'ready effect-written');
      const { backend, clock, ledger, run } = await afterCrash(orm, t);
      try {
        assert.equal(await backend.countEffects('k-before'), 0, 'the effect rolled back');
        assert.equal((await ledger.lookup('crash', 'k-before')).kind, 'in_flight');
        assert.equal((await run('k-before')).kind, 'in_flight', 'the lease still holds');
        await clock.advance(LEASE_MS);
        assert.equal((await run('k-before')).kind, 'executed');
        assert.equal((await run('k-before')).kind, 'replayed');
        assert.equal(await backend.countEffects('k-before'), 1);
      } finally {
        await backend.close();
      }
    });

    it('killed after the COMMIT, before the answer: effect and receipt both stay; the retry replays', async () => {
      const t = target();
      assert.equal(await runAndKill(orm, t, 'after-commit', 'k-after'), 'ready executed');
      const { backend, run } = await afterCrash(orm, t);
      try {
        assert.equal(await backend.countEffects('k-after'), 1);
        assert.equal((await run('k-after')).kind, 'replayed');
        assert.equal(await backend.countEffects('k-after'), 1);
      } finally {
        await backend.close();
      }
    });
  });
}

const dir = tempDir('oncely-orm-crash-');
let n = 0;
for (const orm of ORMS) crashSuite(orm, 'sqlite', () => sqliteTarget(dir, `${orm}-${++n}`));

// Side by side: the parent's ledger runs on a virtual clock, so no lease depends on the load.
await forEachPostgresOrm(
  'the ORM crash tests',
  'oncely_orm_crash',
  (orm, target, skip) => crashSuite(orm, 'postgres', target, skip),
  { sideBySide: true },
);
