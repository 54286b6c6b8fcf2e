import { join } from 'node:path';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLedger, jsonReceipt } from '#oncely/ledger/index.js';
import {
  createSqliteStore,
  openSqliteDatabase,
  type SqliteTx,
} from '#oncely/stores/sqlite/index.js';
import { tempDir } from '../support/temp-dir.js';

/**
 * A claim is kept in memory while its batch holds the file's write lock (pending-claims.ts). Two
 * stores on one file stand for two processes: each has its own connections and its own batches,
 * and only the write lock keeps them apart. Whatever the interleaving, every key runs its effect
 * once: one ledger executes it, the other is told it is in flight or replays its receipt; a
 * claim whose batch committed while its effect waited is seen by the other as in flight.
 */
const dir = tempDir('oncely-pending-claims-');

const KEYS = 40;

describe('SQLite pending claims across two stores on one file', () => {
  it('every key runs once, whichever store claims it and whenever its batch commits', async () => {
    const file = join(dir, 'shared.db');
    const open = () =>
      createSqliteStore({ database: () => openSqliteDatabase(file), durability: 'process' });
    const [a, b] = [open(), open()];
    await a.write((tx) => tx.exec('CREATE TABLE IF NOT EXISTS effects (id TEXT NOT NULL)'));
    const ledgers = [createLedger({ store: a }), createLedger({ store: b })];
    const effect = (id: string, before?: () => Promise<void>) => async (tx: SqliteTx) => {
      await before?.();
      await tx.begin();
      tx.run('INSERT INTO effects (id) VALUES (?)', id);
      return jsonReceipt(201, { id });
    };
    const results = await Promise.all(
      Array.from({ length: KEYS }, async (_, i) => {
        const id = `k-${i}`;
        const request = { scope: 's', key: id, fingerprint: 'f' };
        const [first, second] = i % 4 < 2 ? ledgers : [...ledgers].reverse();
        if (i % 2 === 1) {
          // A race: both "processes" at once.
          const pair = await Promise.all([
            first!.execute(request, effect(id)),
            second!.execute(request, effect(id)),
          ]);
          return pair.map((r) => r.kind);
        }
        // The first holds its key across a commit of its batch (its claim is written as an
        // in-flight row), while the second asks: told to come back, then given the receipt.
        let started!: () => void;
        let release!: () => void;
        const running = new Promise<void>((resolve) => (started = resolve));
        const gate = new Promise<void>((resolve) => (release = resolve));
        const held = first!.execute(
          request,
          effect(id, async () => {
            started();
            await gate;
          }),
        );
        await running;
        const meanwhile = await second!.execute(request, effect(id));
        release();
        const done = await held;
        const after = await second!.execute(request, effect(id));
        assert.deepEqual(
          [done.kind, meanwhile.kind, after.kind],
          ['executed', 'in_flight', 'replayed'],
        );
        return [done.kind, after.kind];
      }),
    );
    for (const [i, kinds] of results.entries()) {
      assert.equal(kinds.filter((k) => k === 'executed').length, 1, `k-${i}: ${kinds.join(', ')}`);
      assert.ok(
        kinds.every((k) => ['executed', 'in_flight', 'replayed'].includes(k)),
        `k-${i}: ${kinds.join(', ')}`,
      );
    }
    const counts = await a.read((tx) =>
      tx.all<{ id: string; n: number }>('SELECT id, count(*) AS n FROM effects GROUP BY id'),
    );
    assert.equal(counts.length, KEYS);
    assert.ok(
      counts.every((row) => row.n === 1),
      'one effect per key',
    );
    for (let i = 0; i < KEYS; i++)
      assert.equal((await ledgers[1]!.lookup('s', `k-${i}`)).kind, 'found');
    await Promise.all([a.close(), b.close()]);
  });
});
