/**
 * bench/chaos's verdict, read from the databases at the end, never from logs: every intent the
 * journal acknowledged is delivered; each key has exactly one effect row; no receipt without its
 * effect and no effect without its receipt (on both ledgers, probe keys included).
 */
import type pg from 'pg';
import { openSqliteDatabase } from 'oncely/stores/sqlite';

/** Rows by scope and key. */
type Counts = Map<string, number>;
const id = (scope: string, key: string): string => `${scope}\u0000${key}`;

export interface KeyVerdict {
  readonly effects: number;
  readonly receipt: boolean;
  readonly delivered: boolean;
}

export interface Verdict {
  /** Per acknowledged intent key. */
  readonly intents: Map<string, KeyVerdict>;
  /** Effect rows beyond the first, over every key (probes included). */
  readonly duplicates: number;
  /** Acknowledged intents not delivered, or delivered with no effect. */
  readonly lost: number;
  readonly effectsWithoutReceipt: number;
  readonly receiptsWithoutEffect: number;
  readonly effects: number;
  /**
   * The workers' attempts by the status they got ('none': no answer, a reset or a timeout), from
   * the journal: a receiver must never answer 500 to a fault it can name (503 + Retry-After).
   */
  readonly attemptStatuses: ReadonlyMap<string, number>;
}

interface LedgerSide {
  readonly effects: Counts;
  /** Completed receipts, by scope and key. */
  readonly receipts: Set<string>;
}

// The ledger's table is read directly here, the one place the harness knows its layout: the
// default name and its scope, key and state columns.
const EFFECTS_SQL = 'SELECT scope, key, count(*) AS n FROM chaos_effects GROUP BY scope, key';
const RECEIPTS_SQL = "SELECT scope, key FROM oncely_ledger WHERE state = 'completed'";
const JOURNAL_SQL = 'SELECT key, state FROM oncely_intents';
const ATTEMPTS_SQL =
  'SELECT status, count(*) AS n FROM oncely_intents_attempts GROUP BY status ORDER BY status';

type Row = { scope: string; key: string; n?: number | string };

/**
 * Intents still pending: through the journal's partial index on pending rows, so a million
 * settled intents cost nothing (the journal's counts() groups every row).
 */
export async function pendingIntents(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(
    "SELECT count(*) AS n FROM oncely_intents WHERE state = 'pending'",
  );
  return Number(rows[0]?.n ?? 0);
}
const side = (effects: Row[], receipts: Row[]): LedgerSide => ({
  effects: new Map(effects.map((r) => [id(r.scope, r.key), Number(r.n)])),
  receipts: new Set(receipts.map((r) => id(r.scope, r.key))),
});

export async function verify(
  pool: pg.Pool,
  sqliteFile: string,
  acknowledged: ReadonlyMap<string, 'postgres' | 'sqlite'>,
): Promise<Verdict> {
  const postgres = side(
    (await pool.query<Row>(EFFECTS_SQL)).rows,
    (await pool.query<Row>(RECEIPTS_SQL)).rows,
  );
  const database = openSqliteDatabase(sqliteFile);
  const sqlite = side(
    database.prepare(EFFECTS_SQL).all() as Row[],
    database.prepare(RECEIPTS_SQL).all() as Row[],
  );
  database.close();
  const journal = new Map(
    (await pool.query<{ key: string; state: string }>(JOURNAL_SQL)).rows.map((r) => [
      r.key,
      r.state,
    ]),
  );

  const intents = new Map<string, KeyVerdict>();
  let lost = 0;
  for (const [key, where] of acknowledged) {
    const ledger = where === 'postgres' ? postgres : sqlite;
    const verdict = {
      effects: ledger.effects.get(id('chaos', key)) ?? 0,
      receipt: ledger.receipts.has(id('chaos', key)),
      delivered: journal.get(key) === 'delivered',
    };
    if (!verdict.delivered || verdict.effects === 0) lost++;
    intents.set(key, verdict);
  }
  let duplicates = 0;
  let effects = 0;
  let effectsWithoutReceipt = 0;
  let receiptsWithoutEffect = 0;
  for (const { effects: rows, receipts } of [postgres, sqlite]) {
    for (const [key, n] of rows) {
      effects += n;
      duplicates += n - 1;
      if (!receipts.has(key)) effectsWithoutReceipt++;
    }
    for (const key of receipts) if (!rows.has(key)) receiptsWithoutEffect++;
  }
  const attemptStatuses = new Map(
    (await pool.query<{ status: number | null; n: string }>(ATTEMPTS_SQL)).rows.map((r) => [
      r.status === null ? 'none' : String(r.status),
      Number(r.n),
    ]),
  );
  return {
    intents,
    duplicates,
    lost,
    effectsWithoutReceipt,
    receiptsWithoutEffect,
    effects,
    attemptStatuses,
  };
}
