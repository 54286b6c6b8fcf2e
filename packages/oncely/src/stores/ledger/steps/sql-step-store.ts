import type { LedgerStore } from '../../../ledger/ledger-store.js';
import type { SqlHandle } from '../../../ledger/sql-handle.js';
import type { StepRecord, StepStore } from '../../../ledger/step-store.js';
import { StepBatch, writtenOf } from './step-batch.js';
import { checkStepTable, stepStatements, type StepStatements } from './step-statements.js';

export interface SqlStepStoreOptions {
  /** The steps' table, created on first use. @default 'oncely_steps' */
  readonly table?: string;
}

interface StepRow {
  readonly position: number | string;
  readonly name: string;
  readonly result: string | null;
  readonly recorded_at: number | string;
  readonly expires_at: number | string;
}

/**
 * The steps of a ledger on a SQL store (SQLite, PostgreSQL, or an ORM's executor store): every
 * statement goes through the store's own transactions and its dialect-neutral SQL handle
 * (`store.sql(tx)`), so a step's record commits in the step's transaction, beside its writes and
 * its outbox intents, on whatever path that store commits by. Its table lives beside the
 * ledger's, in the same database.
 */
export function createSqlStepStore<Tx>(
  store: LedgerStore<Tx>,
  options: SqlStepStoreOptions = {},
): StepStore<Tx> {
  const table = checkStepTable(options.table ?? 'oncely_steps');
  let statements: StepStatements | undefined;
  let setUp: Promise<void> | undefined;
  const of = (sql: SqlHandle): StepStatements => {
    return (statements ??= stepStatements(sql.dialect, table));
  };
  // A step that wrote nothing: its record is one statement, atomic on its own. A store that can
  // commit a lone statement (PostgreSQL: one round trip; SQLite: into the group commit's batch)
  // spares it a transaction; on others it runs in one.
  const { commitAlone } = store.capabilities;
  // The built-in SQLite store, whose commitAlone writes into its open batch and whose errors
  // are better-sqlite3's (an ORM's SQLite store goes the batched way, as PostgreSQL does).
  const joinsOpenBatch = store.name === 'sqlite';
  const alone = new StepBatch(async (steps) => {
    const params = steps.flatMap(paramsOf);
    if (commitAlone !== undefined && statements !== undefined) {
      const returned = await commitAlone(statements.insertMany(steps.length), params);
      return writtenOf(steps, returned as unknown as ReturnedKey[]);
    }
    return store.transaction(async (tx) => {
      const sql = store.sql(tx);
      return writtenOf(steps, await sql.all<ReturnedKey>(of(sql).insertMany(steps.length), params));
    });
  });

  const ready = (): Promise<void> =>
    (setUp ??= store
      .transaction(async (tx) => {
        const sql = store.sql(tx);
        for (const statement of of(sql).create) await sql.run(statement);
      })
      .catch((error: unknown) => {
        setUp = undefined; // the next use tries again
        throw error;
      }));

  return {
    name: store.name,
    ready,

    async resume(scope, key, runAt, expiresAt) {
      await ready();
      const rows = await store.transaction(async (tx) => {
        const sql = store.sql(tx);
        await sql.run(of(sql).extend, [scope, key, runAt, expiresAt]);
        return sql.all<StepRow>(of(sql).select, [scope, key, runAt]);
      });
      return rows.map((row) => recordOf(scope, key, runAt, row));
    },

    async record(tx, step) {
      const sql = store.sql(tx);
      return (await sql.run(of(sql).insert, paramsOf(step))).rowCount === 1;
    },

    // SQLite's commitAlone joins the group commit's open batch, which commits once a turn: each
    // step goes in at once. Gathered first (a turn more), the steps of concurrent requests fell
    // into two alternating waves, each with its own COMMIT (0.32 commits a request, 0.26 now).
    // Without RETURNING: a place taken first fails the INSERT alone (SQLite undoes that one
    // statement, not its batch), which is rare (a lease taken over) where reading a returned row
    // was paid by every step.
    recordAlone: (step) =>
      joinsOpenBatch && commitAlone !== undefined && statements !== undefined
        ? commitAlone(statements.insertOrFail, paramsOf(step)).then(() => true, placeTaken)
        : alone.add(step),

    // Where the dialect keeps finished runs for the sweep (StepStatements.forget), nothing to do;
    // the statements are known by then (the run's first step set the table up).
    async forget(tx, scope, key, runAt) {
      if (statements !== undefined && statements.forget === undefined) return;
      const sql = store.sql(tx);
      const forget = of(sql).forget;
      if (forget !== undefined) await sql.run(forget, [scope, key, runAt]);
    },

    async sweep(nowMs, limit) {
      await ready();
      return store.transaction(async (tx) => {
        const sql = store.sql(tx);
        return (await sql.run(of(sql).sweep, [nowMs, limit])).rowCount;
      });
    },
  };
}

/**
 * False when `error` is SQLite's refusal of a second row for a step's place (its primary key):
 * another worker recorded it first. Any other error is thrown on.
 */
function placeTaken(error: unknown): false {
  if ((error as { code?: unknown } | null)?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY') return false;
  throw error;
}

interface ReturnedKey {
  readonly scope: string;
  readonly idem_key: string;
  readonly run_at: number | string;
  readonly position: number | string;
}

/** The INSERT's parameters of one step, in the table's column order. */
function paramsOf(step: StepRecord): unknown[] {
  const { scope, key, runAt, position, name, result, recordedAt, expiresAt } = step;
  return [scope, key, runAt, position, name, result, recordedAt, expiresAt];
}

/** A row as a record; PostgreSQL gives BIGINT columns as strings. */
function recordOf(scope: string, key: string, runAt: number, row: StepRow): StepRecord {
  return {
    scope,
    key,
    runAt,
    position: Number(row.position),
    name: row.name,
    result: row.result,
    recordedAt: Number(row.recorded_at),
    expiresAt: Number(row.expires_at),
  };
}
