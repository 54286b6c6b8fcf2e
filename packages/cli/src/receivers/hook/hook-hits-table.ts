import { columnTypes, type ServiceDatabase } from '../sql/service-database.js';
import { setUpTables } from '../sql/set-up-tables.js';
import type { SqlHandle } from 'oncely';
import { HIT_ANSWERS, type HitAnswer, type HookCounts, type HookHit } from './hook-hit.js';

/** The hook receiver's arrivals, beside the ledger's table in the same database. */
export const HOOK_HITS_TABLE = 'oncely_hook_hits';

/** Creates the table if missing. Run once at start, before the first request. */
export async function setUpHookHits<Tx>(db: ServiceDatabase<Tx>): Promise<void> {
  const { instant } = columnTypes(db.dialect);
  await setUpTables(db, HOOK_HITS_TABLE, async (sql) => {
    await sql.run(`CREATE TABLE IF NOT EXISTS ${HOOK_HITS_TABLE} (
      scope TEXT NOT NULL,
      seq INTEGER NOT NULL,
      at ${instant} NOT NULL,
      method TEXT NOT NULL,
      path TEXT NOT NULL,
      key TEXT,
      body_sha256 TEXT,
      answer TEXT NOT NULL,
      status INTEGER,
      retry_after TEXT,
      PRIMARY KEY (scope, seq)
    )`);
    // The retention purge deletes by age across callers.
    await sql.run(`CREATE INDEX IF NOT EXISTS ${HOOK_HITS_TABLE}_at ON ${HOOK_HITS_TABLE} (at)`);
  });
}

/**
 * Records one arrival and returns it numbered: `seq` counts the caller's arrivals from 1 since
 * the last reset. On PostgreSQL a per-caller advisory lock orders two servers' inserts, so both
 * cannot take the same number.
 */
export async function insertHit(
  sql: SqlHandle,
  scope: string,
  hit: Omit<HookHit, 'seq'>,
): Promise<HookHit> {
  if (sql.dialect === 'postgres')
    await sql.all('SELECT pg_advisory_xact_lock(hashtext($1))', [
      `oncely:${HOOK_HITS_TABLE}:${scope}`,
    ]);
  const rows = await sql.all<{ seq: number | string }>(
    `INSERT INTO ${HOOK_HITS_TABLE} (scope, seq, at, method, path, key, body_sha256, answer, status, retry_after)
     SELECT $1, COALESCE(MAX(seq), 0) + 1, $2, $3, $4, $5, $6, $7, $8, $9 FROM ${HOOK_HITS_TABLE} WHERE scope = $1
     RETURNING seq`,
    [
      scope,
      hit.at,
      hit.method,
      hit.path,
      hit.key,
      hit.bodySha256,
      hit.answer,
      hit.status,
      hit.retryAfter ?? null,
    ],
  );
  return { seq: Number(rows[0]?.seq), ...hit };
}

interface HitRow {
  readonly seq: number | string;
  readonly at: number | string; // pg returns BIGINT as a string
  readonly method: string;
  readonly path: string;
  readonly key: string | null;
  readonly body_sha256: string | null;
  readonly answer: string;
  readonly status: number | string | null;
  readonly retry_after: string | null;
  readonly total: number | string;
}

function toHit(row: HitRow): HookHit {
  const base = {
    seq: Number(row.seq),
    at: Number(row.at),
    method: row.method,
    path: row.path,
    key: row.key,
    bodySha256: row.body_sha256,
    answer: row.answer as HitAnswer,
    status: row.status === null ? null : Number(row.status),
  };
  return row.retry_after === null ? base : { ...base, retryAfter: row.retry_after };
}

/** The caller's newest `limit` hits, oldest first, and how many it has in all (one snapshot). */
export async function listHitsPage(
  sql: SqlHandle,
  scope: string,
  limit: number,
): Promise<{ hits: HookHit[]; total: number }> {
  const rows = await sql.all<HitRow>(
    `SELECT * FROM (
       SELECT seq, at, method, path, key, body_sha256, answer, status, retry_after, COUNT(*) OVER () AS total
       FROM ${HOOK_HITS_TABLE} WHERE scope = $1 ORDER BY seq DESC LIMIT $2
     ) AS newest ORDER BY seq`,
    [scope, limit],
  );
  return { hits: rows.map(toHit), total: Number(rows[0]?.total ?? 0) };
}

/** The caller's counts over the hits still kept. */
export async function countHits(sql: SqlHandle, scope: string): Promise<HookCounts> {
  const rows = await sql.all<{ answer: string; n: number | string }>(
    `SELECT answer, COUNT(*) AS n FROM ${HOOK_HITS_TABLE} WHERE scope = $1 GROUP BY answer`,
    [scope],
  );
  const of = (answers: readonly HitAnswer[]): number =>
    rows
      .filter((r) => answers.includes(r.answer as HitAnswer))
      .reduce((sum, r) => sum + Number(r.n), 0);
  return {
    arrivals: of(HIT_ANSWERS),
    completions: of(['completed', 'swallowed']),
    replays: of(['replayed']),
  };
}

/** Forgets the caller's hits (the debug reset); the next arrival is numbered 1 again. */
export async function clearHits(sql: SqlHandle, scope: string): Promise<number> {
  return (await sql.run(`DELETE FROM ${HOOK_HITS_TABLE} WHERE scope = $1`, [scope])).rowCount;
}

/** Deletes every caller's hits that arrived before `beforeMs`: retention, as for receipts. */
export async function purgeHits(sql: SqlHandle, beforeMs: number): Promise<number> {
  return (await sql.run(`DELETE FROM ${HOOK_HITS_TABLE} WHERE at < $1`, [beforeMs])).rowCount;
}
