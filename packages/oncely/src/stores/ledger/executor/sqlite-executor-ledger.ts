import type { EntryVersion } from '../../../ledger/ledger-entry.js';
import { completeValues, entryValues, rowToEntry, type LedgerRow } from '../ledger-row.js';
import { ledgerStatements, versionParams } from '../sqlite/sqlite-claims.js';
import { sqliteLedgerSchema } from '../sqlite/sqlite-ledger-schema.js';
import { sqliteTombstoneStatements, tombstoneTableOf } from '../sqlite/sqlite-tombstones.js';
import {
  expiredAtOfToken,
  rowToTombstone,
  tombstoneValues,
  type TombstoneRow,
} from '../tombstone-row.js';
import { sqliteExecutorSweep } from './sqlite-executor-sweep.js';
import type { ExecutorLedger, ExecutorLedgerOptions } from './executor-ledger.js';
import type { ExecutorRows, SqlExecutor } from '../../orm/sql-executor.js';

/**
 * The SQLite ledger on an executor: the very tables and statements of the better-sqlite3 store
 * (sqlite-ledger-schema.ts, sqlite-claims.ts, sqlite-tombstones.ts), sent through the app's ORM.
 * Every statement shares the ORM's one connection, so a claim is written at once (one INSERT
 * that does nothing when the key has a row) rather than kept for a group commit: the group
 * commit of the better-sqlite3 store needs its own writer connection.
 */
export function sqliteExecutorLedger<Tx>(
  executor: SqlExecutor<Tx>,
  o: ExecutorLedgerOptions,
): ExecutorLedger {
  const live = o.table;
  const graves = tombstoneTableOf(live);
  const sql = ledgerStatements(live);
  const tombstoneSql = sqliteTombstoneStatements(live);
  const q = (text: string, params: readonly unknown[] = []): Promise<ExecutorRows> =>
    executor.query(text, params);
  const changed = async (text: string, params: unknown[]): Promise<boolean> =>
    (await q(text, params)).rowCount === 1;

  const sweep = sqliteExecutorSweep(executor, live, graves);

  let setUp: Promise<void> | undefined;
  function createTables(): Promise<void> {
    // One statement per call: an ORM's raw statement runs one (better-sqlite3's prepare).
    const ddl = sqliteLedgerSchema(live)
      .split(';')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    return executor
      .transaction(async (tx) => {
        for (const statement of ddl) await executor.queryIn(tx, statement, []);
      })
      .catch((error: unknown) => {
        setUp = undefined;
        throw error;
      });
  }
  // Every statement awaits it: once set up, one lookup, not the schema's text built again.
  const ready = (): Promise<void> => (setUp ??= createTables());

  async function liveRow(scope: string, key: string) {
    const row = (await q(sql.get, [scope, key])).rows[0] as LedgerRow | undefined;
    return row === undefined ? undefined : rowToEntry(row);
  }

  return {
    // A step holds the one connection: small steps, so requests go on in between.
    tuning: { sweepBatchRows: 500, sweepStepMs: 10 },
    ready,
    async get(scope, key) {
      await ready();
      const entry = await liveRow(scope, key);
      if (entry !== undefined) return entry;
      const grave = (await q(tombstoneSql.get, [scope, key])).rows[0] as TombstoneRow | undefined;
      return grave === undefined ? undefined : rowToTombstone(grave);
    },
    async claim(entry) {
      await ready();
      if (await changed(sql.insert, entryValues(entry))) return { won: true };
      // The live row only: a tombstone would be taken over (decide-claim.ts: the key is new).
      return { won: false, existing: await liveRow(entry.scope, entry.key) };
    },
    async swap(expected, next) {
      await ready();
      if (expected.state === 'expired') return changed(tombstoneSql.revive, entryValues(next));
      if (next.state === 'expired') {
        // The live row goes and its tombstone comes, both or neither.
        return executor.transaction(async (tx) => {
          const moved = await executor.queryIn(tx, tombstoneSql.unlive, versionParams(expected));
          if (moved.rowCount !== 1) return false;
          await executor.queryIn(tx, tombstoneSql.put, tombstoneValues(next));
          return true;
        });
      }
      return changed(sql.swap, [...entryValues(next), ...versionParams(expected)]);
    },
    renew: async (expected, leaseExpiresAt) =>
      changed(sql.renew, [leaseExpiresAt, ...versionParams(expected)]),
    async remove(expected: EntryVersion) {
      if (expected.state !== 'expired') return changed(sql.remove, versionParams(expected));
      const expiredAt = expiredAtOfToken(expected);
      return (
        expiredAt !== undefined &&
        changed(tombstoneSql.remove, [expected.scope, expected.key, expiredAt])
      );
    },
    async complete(tx, expected, next) {
      const { rowCount } = await tx.query(sql.complete, [
        ...completeValues(next),
        ...versionParams(expected),
      ]);
      return rowCount === 1;
    },
    // The claim's own INSERT, of the completed row: the connection's write lock, held by the
    // transaction since its first write, keeps every other writer out until COMMIT.
    placeRow: () => ready(),
    async commitDeferred(tx, entry) {
      return (await tx.query(sql.insert, entryValues(entry))).rowCount === 1;
    },
    async sweep(nowMs, tombstoneMs, limit) {
      await ready();
      return sweep.step(nowMs, tombstoneMs, limit);
    },
    async backlog(nowMs) {
      await ready();
      return sweep.backlog(nowMs);
    },
    housekeep: async () => undefined,
  };
}
