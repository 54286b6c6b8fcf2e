import type { SweepResult } from '../../../ledger/ledger-store.js';
import type { SqlExecutor } from '../../orm/sql-executor.js';

/**
 * Bounded retention steps on SQLite through an executor: the statements of sqlite-sweep.ts with
 * plain `?` placeholders (an ORM binds a list, not better-sqlite3's numbered names), one step in
 * one transaction: receipts past retention become tombstones (only those with time left to
 * live), then at most `limit` due tombstones go. Oldest first by (expires_at, scope, key).
 */
export function sqliteExecutorSweep<Tx>(executor: SqlExecutor<Tx>, live: string, graves: string) {
  const due = `SELECT scope, key FROM ${live} WHERE expires_at <= ? ORDER BY expires_at, scope, key LIMIT ?`;
  const sql = {
    bury: `INSERT OR REPLACE INTO ${graves} (scope, key, fingerprint, first_seen_at, expired_at, completed_at, expires_at)
      SELECT scope, key, fingerprint, first_seen_at, expires_at, completed_at, expires_at + ? FROM ${live}
      WHERE (scope, key) IN (${due}) AND expires_at + ? > ?`,
    unlive: `DELETE FROM ${live} WHERE (scope, key) IN (${due})`,
    purge: `DELETE FROM ${graves} WHERE (scope, key) IN (SELECT scope, key FROM ${graves} WHERE expires_at <= ? ORDER BY expires_at, scope, key LIMIT ?)`,
    backlog: `SELECT (SELECT count(*) FROM ${live} WHERE expires_at <= ?) + (SELECT count(*) FROM ${graves} WHERE expires_at <= ?) AS n`,
  };
  return {
    step(nowMs: number, tombstoneMs: number, limit = Infinity): Promise<SweepResult> {
      const rows = Number.isFinite(limit) ? limit : -1; // LIMIT -1: no limit
      return executor.transaction(async (tx) => {
        const run = (text: string, params: unknown[]) => executor.queryIn(tx, text, params);
        await run(sql.bury, [tombstoneMs, nowMs, rows, tombstoneMs, nowMs]);
        const unlive = await run(sql.unlive, [nowMs, rows]);
        const purged = await run(sql.purge, [nowMs, rows]);
        return { tombstoned: unlive.rowCount, deleted: purged.rowCount };
      });
    },
    async backlog(nowMs: number): Promise<number> {
      const { rows } = await executor.query(sql.backlog, [nowMs, nowMs]);
      return Number(rows[0]?.['n'] ?? 0);
    },
  };
}
