import { OncelyError } from '../../contract/errors.js';
import { TransactionEndedError } from '../store-errors.js';
import type { GroupCommit, HeldSection } from './group-commit.js';
import type { SqliteStatement, SqliteTx } from './sqlite-database.js';

/** A statement of a SQLite transaction sent before `await tx.begin()`. */
export class TransactionNotBegunError extends OncelyError {
  constructor() {
    super(
      'transaction_not_begun',
      'sqlite transaction: call `await tx.begin()` before its first statement (the SQL runner does it for you)',
    );
    this.name = 'TransactionNotBegunError';
  }
}

/**
 * One lazy transaction on the store's writer: `fn` runs at once; the writer is taken at
 * `tx.begin()` (a savepoint in the group commit's batch); when `fn` resolves the savepoint is
 * kept and this resolves after the batch's COMMIT; when it rejects only the savepoint is undone.
 */
export interface SqliteWriter {
  statement(source: string): SqliteStatement;
  exec(source: string): void;
}

export async function sqliteTransaction<T>(
  group: GroupCommit,
  writer: SqliteWriter,
  fn: (tx: SqliteTx) => Promise<T>,
): Promise<T> {
  let section: HeldSection | undefined;
  let beginning: Promise<void> | undefined;
  let active = true;
  const ready = (): void => {
    if (!active) throw new TransactionEndedError('sqlite');
    if (section === undefined) throw new TransactionNotBegunError();
  };
  const tx: SqliteTx = {
    begin: () =>
      (beginning ??= (async () => {
        if (!active) throw new TransactionEndedError('sqlite');
        const held = await group.hold();
        if (!active) {
          held.rollBack(); // the transaction ended while waiting for the writer
          throw new TransactionEndedError('sqlite');
        }
        section = held;
      })()),
    run: (source, ...params) => (ready(), writer.statement(source).run(...params)),
    get: <R>(source: string, ...params: unknown[]) => (
      ready(), writer.statement(source).get(...params) as R | undefined
    ),
    all: <R>(source: string, ...params: unknown[]) => (
      ready(), writer.statement(source).all(...params) as R[]
    ),
    exec: (source) => {
      ready();
      writer.exec(source);
    },
  };
  let result: T;
  try {
    result = await fn(tx);
  } catch (error) {
    active = false;
    await beginning?.catch(() => {});
    section?.rollBack();
    throw error;
  }
  active = false;
  await beginning?.catch(() => {});
  if (section) await section.release();
  return result;
}
