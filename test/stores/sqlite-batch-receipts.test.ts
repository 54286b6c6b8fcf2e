import { join } from 'node:path';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  jsonReceipt,
  versionOf,
  type CompletedEntry,
  type InFlightEntry,
} from '#oncely/ledger/index.js';
import {
  createSqliteStore,
  openSqliteDatabase,
  type SqliteTx,
} from '#oncely/stores/sqlite/index.js';
import { tempDir } from '../support/temp-dir.js';

/**
 * A receipt whose claim was never written is kept with its batch and written just before its
 * COMMIT (pending-claims.ts). The key must stay taken meanwhile, the receipt must go with its
 * section (kept or undone), and an effect must never commit without its receipt.
 */
const dir = tempDir('oncely-batch-receipts-');

async function storeIn(name: string) {
  const file = join(dir, `${name}.db`);
  const store = createSqliteStore({
    database: () => openSqliteDatabase(file),
    durability: 'process',
  });
  await store.write((tx) => tx.exec('CREATE TABLE effects (key TEXT NOT NULL)'));
  const effects = () =>
    store.read((tx) => tx.get<{ n: number }>('SELECT count(*) AS n FROM effects')!.n);
  return { store, effects };
}

const NOW = Date.parse('2026-12-06T00:00:00Z');

function claimOf(key: string, token: string): InFlightEntry {
  return {
    scope: 's',
    key,
    fingerprint: 'f',
    state: 'in_flight',
    token,
    firstSeenAt: NOW,
    leaseExpiresAt: NOW + 30_000,
    expiresAt: NOW + 86_400_000,
  };
}

function receiptOf(claim: InFlightEntry): CompletedEntry {
  const { leaseExpiresAt: _, ...rest } = claim;
  return { ...rest, state: 'completed', completedAt: NOW, receipt: jsonReceipt(201, { ok: 1 }) };
}

type Store = Awaited<ReturnType<typeof storeIn>>['store'];

/** Claims key k for a first request: the claim, won. */
async function claimFirst(store: Store): Promise<InFlightEntry> {
  const first = claimOf('k', 'first');
  assert.equal((await store.claim(first)).won, true);
  return first;
}

/** In the transaction: the claim's effect (one row), then its receipt, which the store takes. */
async function effectAndReceipt(store: Store, tx: SqliteTx, claim: InFlightEntry): Promise<void> {
  await tx.begin();
  tx.run('INSERT INTO effects (key) VALUES (?)', claim.key);
  assert.equal(await store.complete(tx, versionOf(claim), receiptOf(claim)), true);
}

describe('SQLite receipts written with their batch', () => {
  it('a duplicate asking before the COMMIT is held off, then given the receipt: one effect', async () => {
    const { store, effects } = await storeIn('duplicate');
    const first = await claimFirst(store);
    let duplicate: ReturnType<typeof store.claim> | undefined;
    await store.transaction(async (tx) => {
      await effectAndReceipt(store, tx, first);
      // The writer is held: the duplicate looks under the lock once this section is released,
      // in the same batch, before the receipt row exists.
      duplicate = store.claim(claimOf('k', 'second'));
    });
    const attempt = await duplicate!;
    assert.equal(attempt.won, false, 'the key was taken while its receipt waited for the COMMIT');
    assert.equal(attempt.existing?.state, 'completed');
    assert.equal(attempt.existing?.token, 'first');
    assert.equal(await effects(), 1);
    await store.close();
  });

  it('a section undone after its receipt was given leaves neither, and the key free', async () => {
    const { store, effects } = await storeIn('undone');
    const first = await claimFirst(store);
    await assert.rejects(
      store.transaction(async (tx) => {
        await effectAndReceipt(store, tx, first);
        throw new Error('failed after the receipt');
      }),
      /failed after the receipt/,
    );
    // Another key's batch commits: the undone receipt is not written with it.
    const other = claimOf('other', 'o');
    assert.equal((await store.claim(other)).won, true);
    await store.transaction(async (tx) => {
      await tx.begin();
      await store.complete(tx, versionOf(other), receiptOf(other));
    });
    assert.equal(await store.get('s', 'k'), undefined);
    assert.equal((await store.get('s', 'other'))?.state, 'completed');
    assert.equal(await effects(), 0);
    assert.equal((await store.claim(claimOf('k', 'again'))).won, true, 'free to claim again');
    await store.close();
  });

  it('an effect whose receipt cannot be inserted is rolled back with its whole batch', async () => {
    const { store, effects } = await storeIn('refused');
    const first = await claimFirst(store);
    await assert.rejects(
      store.transaction(async (tx) => {
        await tx.begin();
        // A row for the key that is not the receipt (no handler should ever write one).
        tx.run(
          "INSERT INTO oncely_ledger (scope, key, fingerprint, state, token, first_seen_at, expires_at) VALUES ('s', 'k', x'00', 'completed', 'stray', 0, 0)",
        );
        await effectAndReceipt(store, tx, first);
      }),
      (error: Error) => error.name === 'ReceiptNotWrittenError',
    );
    assert.equal(await effects(), 0, 'the effect did not commit without its receipt');
    assert.equal(await store.get('s', 'k'), undefined);
    await store.close();
  });
});
