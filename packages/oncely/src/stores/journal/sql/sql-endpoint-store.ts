import { PARKED_AT, type EndpointStore } from '../../../journal/endpoint.js';
import { ENDPOINT_COLUMNS, endpointValues, rowToEndpoint } from './endpoint-row.js';
import type { JournalQuery, JournalSqlBackend } from './sql-journal-store.js';

/**
 * Endpoints on a SQL backend. An update is one transaction: the row read under its lock
 * (PostgreSQL: FOR UPDATE; SQLite: BEGIN IMMEDIATE holds the file's writer), changed in the
 * worker, written back. That is what makes a throttle slot or the breaker's probe go to one
 * worker in one process only.
 */
export function createSqlEndpointStore<Tx>(
  backend: JournalSqlBackend<Tx>,
  query: JournalQuery,
  ready: () => Promise<void>,
): EndpointStore {
  const table = backend.endpoints;
  const columns = ENDPOINT_COLUMNS.join(', ');
  const placeholders = ENDPOINT_COLUMNS.map((_, i) => `$${i + 1}`).join(', ');
  const assignments = ENDPOINT_COLUMNS.slice(1)
    .map((c, i) => `${c} = $${i + 2}`)
    .join(', ');
  return {
    add: async (endpoint) =>
      (
        await query(
          `INSERT INTO ${table} (${columns}) VALUES (${placeholders}) ON CONFLICT (id) DO NOTHING`,
          endpointValues(endpoint),
        )
      ).changes === 1,
    async get(id) {
      const row = (await query(`SELECT * FROM ${table} WHERE id = $1`, [id])).rows[0];
      return row === undefined ? undefined : rowToEndpoint(row);
    },
    list: async () => (await query(`SELECT * FROM ${table} ORDER BY id`)).rows.map(rowToEndpoint),
    async update(id, fn) {
      await ready();
      return backend.transaction(async (q) => {
        const row = (await q(`SELECT * FROM ${table} WHERE id = $1${backend.rowLockClause}`, [id]))
          .rows[0];
        if (row === undefined) return undefined;
        const [next, result] = fn(rowToEndpoint(row));
        if (next) await q(`UPDATE ${table} SET ${assignments} WHERE id = $1`, endpointValues(next));
        return result;
      });
    },
    // The due index covers pending rows by next_attempt_at: the parked ones are its far end.
    // Woken, they are told of as a reopening is: workers look now, below their claim mark too.
    async wake(id, nowMs) {
      const { changes } = await query(
        `UPDATE ${backend.intents} SET next_attempt_at = $2 WHERE state = 'pending' AND next_attempt_at >= $3 AND endpoint = $1`,
        [id, nowMs, PARKED_AT],
      );
      if (changes > 0) await backend.wake.written('other');
      return changes;
    },
    // Its pending intents end `cancelled` as journal.cancel ends one: never one a live lease holds.
    async remove(id, final, nowMs) {
      await ready();
      return backend.transaction(async (q) => {
        const row = (await q(`SELECT id FROM ${table} WHERE id = $1${backend.rowLockClause}`, [id]))
          .rows[0];
        if (row === undefined) return undefined;
        const { changes } = await q(
          `UPDATE ${backend.intents} SET state = 'cancelled', stop_reason = $2, final_detail = $3, finished_at = $4, open_attempt = 0, lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL WHERE endpoint = $1 AND state = 'pending' AND (lease_expires_at IS NULL OR lease_expires_at <= $4)`,
          [id, final.stopReason, final.detail, nowMs],
        );
        await q(`DELETE FROM ${table} WHERE id = $1`, [id]);
        return changes;
      });
    },
  };
}
