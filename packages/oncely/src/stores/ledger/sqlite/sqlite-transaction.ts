import { OncelyError } from '../../../contract/errors.js';
import { TransactionEndedError } from '../../store-errors.js';
import type { GroupCommit, HeldSection } from './group-commit.js';
import type { SqliteStatement, SqliteTx } from '../../sqlite-driver/sqlite-database.js';

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

/** The store's writer connection, as a transaction runs its statements on it. */
export interface SqliteWriter {
  statement(source: string): SqliteStatement;
  exec(source: string): void;
}

/**
 * The transaction handle: a class, not an object of closures, since one is made per request
 * (its methods live once on the prototype, and its state in three fields).
 */
class LazySqliteTx implements SqliteTx {
  #section: HeldSection | undefined;
  #beginning: Promise<void> | undefined;
  #active = true;

  constructor(
    private readonly group: GroupCommit,
    private readonly writer: SqliteWriter,
  ) {}

  /**
   * True from `begin()` until the transaction ends: it holds the store's one writer (or waits
   * for it, first in line), so nothing else this process writes can commit before it ends.
   */
  get holdsWriter(): boolean {
    return this.#active && this.#beginning !== undefined;
  }

  begin(): Promise<void> {
    if (this.#beginning !== undefined) return this.#beginning;
    // The writer free and a batch open (the common case): taken at once, no promise made.
    const held = this.#active ? this.group.holdNow() : undefined;
    if (held === undefined) return (this.#beginning = this.#take());
    this.#section = held;
    return (this.#beginning = BEGUN);
  }

  async #take(): Promise<void> {
    if (!this.#active) throw new TransactionEndedError('sqlite');
    const held = await this.group.hold();
    if (!this.#active) {
      held.rollBack(); // the transaction ended while waiting for the writer
      throw new TransactionEndedError('sqlite');
    }
    this.#section = held;
  }

  #ready(): void {
    if (!this.#active) throw new TransactionEndedError('sqlite');
    if (this.#section === undefined) throw new TransactionNotBegunError();
  }

  run(source: string, ...params: unknown[]) {
    this.#ready();
    return this.writer.statement(source).run(...params);
  }

  get<R>(source: string, ...params: unknown[]): R | undefined {
    this.#ready();
    return this.writer.statement(source).get(...params) as R | undefined;
  }

  all<R>(source: string, ...params: unknown[]): R[] {
    this.#ready();
    return this.writer.statement(source).all(...params) as R[];
  }

  exec(source: string): void {
    this.#ready();
    this.writer.exec(source);
  }

  /**
   * Ends the transaction: what was begun is kept (the promise settles when committed) or undone.
   * Undefined when there is nothing to wait for.
   */
  end(keep: boolean): Promise<void> | undefined {
    this.#active = false;
    if (this.#section === undefined && this.#beginning !== undefined) {
      // Still waiting for the writer: end once it is taken (#take then undoes it) or refused.
      const finish = () => this.#finish(keep);
      return this.#beginning.then(finish, finish);
    }
    return this.#finish(keep);
  }

  #finish(keep: boolean): Promise<void> | undefined {
    if (keep) return this.#section?.release();
    this.#section?.rollBack();
    return undefined;
  }
}

/**
 * True when `tx` is a transaction of this store that has begun: a statement committed on its
 * own (a step's record) would wait for it to end (StoreCapabilities.holdsWriter).
 */
export function holdsWriter(tx: unknown): boolean {
  return tx instanceof LazySqliteTx && tx.holdsWriter;
}

/** What begin() answers once the writer was taken at once. */
const BEGUN = Promise.resolve();

/**
 * One lazy transaction on the store's writer: `fn` runs at once; the writer is taken at
 * `tx.begin()` (a savepoint in the group commit's batch); when `fn` resolves the savepoint is
 * kept and this resolves after the batch's COMMIT; when it rejects only the savepoint is undone.
 */
export async function sqliteTransaction<T>(
  group: GroupCommit,
  writer: SqliteWriter,
  fn: (tx: SqliteTx) => Promise<T>,
): Promise<T> {
  const tx = new LazySqliteTx(group, writer);
  let result: T;
  try {
    result = await fn(tx);
  } catch (error) {
    await tx.end(false);
    throw error;
  }
  const committed = tx.end(true);
  if (committed !== undefined) await committed;
  return result;
}
