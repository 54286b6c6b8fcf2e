import { qualified, type PostgresLedgerTables } from './postgres-tombstones.js';
import { listRangePartitions, type RangePartition } from './range-partitions.js';

type Query = (text: string, values?: unknown[]) => Promise<{ rows: unknown[]; rowCount: number }>;
/** Runs `fn` in one transaction on one pooled client (BEGIN, COMMIT; ROLLBACK when it throws). */
export type Transact = <T>(fn: (query: Query) => Promise<T>) => Promise<T>;

/** One range partition of the receipts table: first_seen_at in [fromMs, toMs). */
export type ReceiptPartition = RangePartition;

/** What became of a partition the sweep meant to drop. */
export type DropOutcome = 'dropped' | 'busy' | 'not_due';

/**
 * How long the sweep waits for the receipts table's lock to drop a partition. Requests queue
 * behind a waiting ACCESS EXCLUSIVE lock, so this is also the longest they wait for it; past it the
 * sweep gives up and tries again at its next step.
 */
export const DETACH_LOCK_TIMEOUT_MS = 25;

/**
 * Whether a receipt in `table` is still live at $1: its latest expires_at, read from the end of
 * its expires_at index. max() is planned as one backward index probe whatever the statistics say;
 * `EXISTS (... WHERE expires_at > $1)` was planned as a sequential scan on a partition not yet
 * analyzed (400 ms over a million rows, under the table's ACCESS EXCLUSIVE lock when dropping).
 */
const liveSql = (table: string): string =>
  `SELECT coalesce((SELECT max(expires_at) FROM ${table}) > $1, false) AS live`;

/**
 * Time partitions of the receipts table (PostgreSQL declarative partitioning by range of
 * first_seen_at, https://www.postgresql.org/docs/15/ddl-partitioning.html). Each covers
 * `partitionMs` of first sightings; once every receipt in one is past its retention, the sweep
 * drops it whole: no row deleted, no dead tuple, almost no WAL.
 *
 * Partitions are made when first needed, before a row goes in (a claim, a takeover that starts a
 * key afresh, a sweep looking ahead): CREATE TABLE, then ATTACH PARTITION, which takes only a SHARE
 * UPDATE EXCLUSIVE lock on the parent, so requests go on meanwhile (CREATE TABLE ... PARTITION OF
 * would take an ACCESS EXCLUSIVE one). There is no DEFAULT partition: attaching next to one would
 * scan it under lock, and its rows could only ever leave it one DELETE at a time.
 */
export function postgresReceiptPartitions(
  tables: PostgresLedgerTables,
  partitionMs: number,
  query: Query,
  transact: Transact,
) {
  /** The partitions as last read from the catalog, oldest first. */
  let known: ReceiptPartition[] | undefined;
  const covers = (parts: readonly ReceiptPartition[], t: number): boolean =>
    parts.some((p) => p.fromMs <= t && t < p.toMs);

  async function list(q: Query = query): Promise<ReceiptPartition[]> {
    return listRangePartitions(q, tables.live);
  }

  /**
   * Makes sure a partition covers each of `instants` (first_seen_at values about to be written).
   * A new one spans the multiple of partitionMs around the instant, cut short where a neighbour
   * (made with another span) already covers part of it. Creation is serialized between processes
   * by an advisory lock; the common case, every instant covered, reads nothing.
   */
  async function ensure(instants: readonly number[]): Promise<void> {
    if (known && instants.every((t) => covers(known!, t))) return;
    known = await list();
    if (instants.every((t) => covers(known!, t))) return;
    known = await transact(async (q) => {
      await q('SELECT pg_advisory_xact_lock(hashtext($1))', [`oncely-partitions:${tables.live}`]);
      const parts = await list(q);
      for (const t of instants) {
        if (covers(parts, t)) continue;
        let fromMs = Math.floor(t / partitionMs) * partitionMs;
        let toMs = fromMs + partitionMs;
        for (const p of parts) {
          if (p.toMs <= t) fromMs = Math.max(fromMs, p.toMs);
          if (p.fromMs > t) toMs = Math.min(toMs, p.fromMs);
        }
        const name = `${tables.liveName}_p${fromMs < 0 ? `m${-fromMs}` : fromMs}`;
        await q(
          `CREATE TABLE ${qualified(tables, name)} (LIKE ${tables.live} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`,
        );
        await q(
          `ALTER TABLE ${tables.live} ATTACH PARTITION ${qualified(tables, name)} FOR VALUES FROM (${fromMs}) TO (${toMs})`,
        );
        parts.push({ name, fromMs, toMs });
        parts.sort((a, b) => a.fromMs - b.fromMs);
      }
      return parts;
    });
  }

  /**
   * Partitions whose range has passed by `nowMs` and whose every receipt is due (expires_at <=
   * nowMs: one probe of the partition's expires_at index each), oldest first.
   */
  async function due(nowMs: number): Promise<ReceiptPartition[]> {
    known = await list();
    const out: ReceiptPartition[] = [];
    for (const p of known) {
      if (p.toMs > nowMs) break;
      const { rows } = await query(liveSql(qualified(tables, p.name)), [nowMs]);
      if (!(rows[0] as { live: boolean }).live) out.push(p);
    }
    return out;
  }

  /**
   * Drops `p` if every receipt in it is still due. The check and the DROP run under the parent's
   * ACCESS EXCLUSIVE lock, taken first (parent before partition, the order every statement on the
   * table takes them): a receipt completed before it moved its expires_at past now, and then the
   * partition stays; one completing after finds its row gone (lease lost: rolled back). Dropping
   * the partition itself detaches it in the same transaction, so no detached table is ever left.
   */
  async function drop(p: ReceiptPartition, nowMs: number): Promise<DropOutcome> {
    const table = qualified(tables, p.name);
    try {
      const outcome = await transact(async (q): Promise<DropOutcome> => {
        await q(`SET LOCAL lock_timeout = '${DETACH_LOCK_TIMEOUT_MS}ms'`);
        await q(`LOCK TABLE ${tables.live} IN ACCESS EXCLUSIVE MODE`);
        const { rows } = await q(liveSql(table), [nowMs]);
        if ((rows[0] as { live: boolean }).live) return 'not_due';
        await q(`DROP TABLE ${table}`);
        return 'dropped';
      });
      if (outcome === 'dropped') known = known?.filter((k) => k.name !== p.name);
      return outcome;
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === '55P03') return 'busy'; // lock_not_available: requests held the table
      if (code === '42P01') return 'dropped'; // undefined_table: another process dropped it first
      throw error;
    }
  }

  /** Forgets what it read from the catalog (a row found no partition: another process dropped one). */
  const forget = (): void => void (known = undefined);

  return { list, ensure, due, drop, forget };
}

/** SQLSTATE of "no partition of relation ... found for row" (check_violation). */
export const NO_PARTITION = '23514';

/**
 * A receipt write that lands in its time partition: the store set up and the row's partition
 * made first, and once more if a sweep dropped that partition meanwhile.
 */
export function placedInPartition(
  ready: () => Promise<void>,
  receipts: ReturnType<typeof postgresReceiptPartitions>,
) {
  return async <T>(firstSeenAt: number, write: () => Promise<T>): Promise<T> => {
    await ready();
    await receipts.ensure([firstSeenAt]);
    try {
      return await write();
    } catch (error) {
      if ((error as { code?: string }).code !== NO_PARTITION) throw error;
      receipts.forget();
      await receipts.ensure([firstSeenAt]);
      return write();
    }
  };
}
