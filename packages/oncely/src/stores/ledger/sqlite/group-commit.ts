import {
  BatchEndedError,
  NOT_NOW,
  Section,
  type BatchHooks,
  type HeldSection,
} from './group-sections.js';
import type { SqliteDatabase, SqliteStatement } from '../../sqlite-driver/sqlite-database.js';

export { BatchEndedError, NOT_NOW, type BatchHooks, type HeldSection } from './group-sections.js';

/**
 * The section's savepoint. Sections never nest (one holds the writer at a time), so one name
 * serves all, and its statements are prepared once: `exec` parsed each anew, a few µs a request.
 */
const SAVEPOINT = 'SAVEPOINT oncely_section';
const RELEASE = 'RELEASE oncely_section';
const ROLLBACK_TO = 'ROLLBACK TO oncely_section';

/** One open write transaction that several requests' sections share, and its commit. */
export interface Batch {
  readonly committed: Promise<void>;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Group commit on one better-sqlite3 connection (the store's writer). Every write runs in a
 * section; sections take turns on the connection and share one open transaction (a batch) that
 * commits on the next turn of the event loop after the first one joined it: requests that arrive
 * together share one COMMIT, hence one fsync, instead of paying one each.
 *
 * A section is either synchronous (a claim, a renewal, a release: one statement, atomic on its
 * own) or held across awaits (an effect and its receipt), in a SAVEPOINT of its own so its
 * rollback undoes nothing of the sections before it (https://www.sqlite.org/lang_savepoint.html).
 * While a section is held, others wait for it and the batch cannot commit: an effect should do
 * its slow awaits before its first statement (the store begins the section lazily).
 *
 * If SQLite ends the batch itself (an I/O error, a full disk), every section in it is lost: their
 * callers' commits reject, and none of them was acknowledged.
 */
export class GroupCommit {
  readonly #connection: () => SqliteDatabase;
  readonly #waiting: Array<() => void> = [];
  #held = false;
  #batch: Batch | undefined;
  #flushQueued = false;
  /** A commit came due while a section was held: it goes first when that section ends. */
  #due = false;
  readonly #statement: (source: string) => SqliteStatement;
  readonly #begin: () => Promise<void> | undefined;
  /** Told before a batch commits (its last writes join it) and when one ends without committing. */
  readonly #hooks: BatchHooks | undefined;

  /**
   * `statement` prepares SQL on the connection (once per text); `begin` runs BEGIN IMMEDIATE on
   * it: undefined when it took the lock at once, else a promise that settles once it has (or has
   * given up waiting, rejecting).
   */
  constructor(
    connection: () => SqliteDatabase,
    statement: (source: string) => SqliteStatement,
    begin: () => Promise<void> | undefined,
    hooks?: BatchHooks,
  ) {
    this.#connection = connection;
    this.#statement = statement;
    this.#begin = begin;
    this.#hooks = hooks;
  }

  /** The open batch (its identity only), or undefined: while it is open, this process holds the write lock. */
  get openBatch(): object | undefined {
    return this.#batch;
  }

  /** True when no section runs or waits and no batch is open: a read on the writer sees only committed rows. */
  get idle(): boolean {
    return !this.#held && this.#waiting.length === 0 && this.#batch === undefined;
  }

  /**
   * Runs a synchronous section as soon as the writer is free (at once when it is), inside the
   * current batch. `durable`: resolve only once that batch has committed.
   */
  async write<T>(section: () => T, durable: boolean): Promise<T> {
    if (this.#held || this.#waiting.length > 0) await this.#turn();
    let batch: Batch;
    let result: T;
    this.#held = true;
    try {
      batch = this.#batch ?? (await this.#open());
      result = section();
    } catch (error) {
      this.#failIfEnded(error);
      throw error;
    } finally {
      this.#free();
    }
    if (durable) await batch.committed;
    return result;
  }

  /** Takes the writer for a section held across awaits, in a savepoint of its own. */
  async hold(): Promise<HeldSection> {
    if (this.#held || this.#waiting.length > 0) await this.#turn();
    this.#held = true;
    let batch: Batch;
    try {
      batch = this.#batch ?? (await this.#open());
    } catch (error) {
      this.#failIfEnded(error);
      this.#free();
      throw error;
    }
    return this.#savepoint(batch);
  }

  /**
   * {@link hold} without a wait, when a batch is open and the writer is free: the common case,
   * which then costs no promise; else undefined, and the caller holds the slow way.
   */
  holdNow(): HeldSection | undefined {
    const batch = this.#batchFreeNow();
    if (batch === undefined) return undefined;
    this.#held = true;
    return this.#savepoint(batch);
  }

  /**
   * {@link write} without a wait, when a batch is open and the writer is free: the section's
   * result, or NOT_NOW (nothing ran). For a section that needs no durable wait.
   */
  writeNow<T>(section: () => T): T | typeof NOT_NOW {
    if (this.#batchFreeNow() === undefined) return NOT_NOW;
    this.#held = true;
    try {
      return section();
    } catch (error) {
      this.#failIfEnded(error);
      throw error;
    } finally {
      this.#free();
    }
  }

  /** The open batch when nobody holds or waits for the writer (a section may run at once). */
  #batchFreeNow(): Batch | undefined {
    return this.#held || this.#waiting.length > 0 ? undefined : this.#batch;
  }

  /** Opens the held section's savepoint in `batch` (the writer is held). */
  #savepoint(batch: Batch): HeldSection {
    this.#runOrFree(SAVEPOINT);
    return new Section(this, batch);
  }

  /** Runs a statement of a held section; when it fails, the section is undone and it throws. */
  #runOrFree(source: string): void {
    try {
      this.#statement(source).run();
    } catch (error) {
      this.#hooks?.sectionEnded(false);
      this.#failIfEnded(error);
      this.#free();
      throw error;
    }
  }

  /** Ends a held section: keeps what it wrote (or undoes it), then frees the writer. */
  endSection(keep: boolean): void {
    if (keep) {
      this.#runOrFree(RELEASE);
      this.#hooks?.sectionEnded(true);
      this.#free();
      return;
    }
    this.#hooks?.sectionEnded(false);
    try {
      if (this.#connection().inTransaction) {
        this.#statement(ROLLBACK_TO).run();
        this.#statement(RELEASE).run();
      }
    } catch (error) {
      this.#failIfEnded(error);
    }
    // A statement of the section may have made SQLite end the whole batch itself (a full
    // disk): then no section of it will commit, and the next write needs a new batch.
    this.#failIfEnded(new BatchEndedError());
    this.#free();
  }

  /**
   * Runs `fn` holding the writer with no batch open (the open one is committed first): for work
   * that runs its own BEGIN ... COMMIT (a sweep step, moving a row to the tombstones, a checkpoint).
   */
  async outside<T>(fn: () => T): Promise<T> {
    if (this.#held || this.#waiting.length > 0) await this.#turn();
    this.#held = true;
    try {
      if (this.#batch) {
        // #flush commits only when nobody holds the writer: it is ours, and nothing runs in between.
        this.#held = false;
        this.#flush();
        this.#held = true;
      }
      return fn();
    } finally {
      this.#free();
    }
  }

  /** Resolves once the batch open now (if any) has committed; never rejects. */
  async settled(): Promise<void> {
    await this.#batch?.committed.catch(() => {});
  }

  /**
   * Opens a batch: BEGIN IMMEDIATE takes the file's write lock first, so a section's statements
   * and the COMMIT cannot fail with SQLITE_BUSY halfway. While another process holds the lock,
   * `begin` waits for it in the event loop (write-lock.ts), the writer still held: sections that
   * come meanwhile queue behind, and join the batch once it is open.
   */
  async #open(): Promise<Batch> {
    const waiting = this.#begin();
    if (waiting !== undefined) await waiting;
    let resolve!: () => void;
    let reject!: (error: unknown) => void;
    const committed = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    committed.catch(() => {}); // a batch nobody waits on durably must not crash the process
    this.#batch = { committed, resolve, reject };
    this.#queueFlush();
    return this.#batch;
  }

  #queueFlush(): void {
    if (this.#flushQueued) return;
    this.#flushQueued = true;
    // setImmediate: after the I/O callbacks of this turn, so requests that arrived together join.
    setImmediate(() => {
      this.#flushQueued = false;
      this.#flush();
    });
  }

  #flush(): void {
    const batch = this.#batch;
    if (!batch) return;
    if (this.#held) {
      this.#due = true; // committed as soon as the held section ends, before the next one starts
      return;
    }
    this.#due = false;
    this.#batch = undefined;
    const conn = this.#connection();
    try {
      this.#hooks?.beforeCommit();
      this.#statement('COMMIT').run();
      batch.resolve();
    } catch (error) {
      try {
        if (conn.inTransaction) conn.exec('ROLLBACK');
      } catch {
        // SQLite already rolled back on its own
      }
      this.#hooks?.dropped();
      batch.reject(error);
    }
  }

  /** An error that made SQLite end the batch: every section in it is lost. */
  #failIfEnded(error: unknown): void {
    const batch = this.#batch;
    if (batch && !this.#connection().inTransaction) {
      this.#batch = undefined;
      this.#hooks?.dropped();
      batch.reject(error);
    }
  }

  #turn(): Promise<void> {
    return new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  #free(): void {
    this.#held = false;
    if (this.#due) this.#flush();
    const next = this.#waiting.shift();
    if (next) {
      this.#held = true; // handed over directly: nobody slips in between
      next();
      return;
    }
    if (this.#batch && !this.#flushQueued) this.#queueFlush();
  }
}
