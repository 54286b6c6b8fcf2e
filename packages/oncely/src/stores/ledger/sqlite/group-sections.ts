import { OncelyError } from '../../../contract/errors.js';
import type { Batch, GroupCommit } from './group-commit.js';

/*
 * The parts of a group commit (group-commit.ts) its callers see: held sections, what a store is
 * told at the end of a batch, and the errors of a batch that SQLite ended.
 */

/** The batch's transaction was ended by SQLite itself: every section in it is lost. */
export class BatchEndedError extends OncelyError {
  constructor() {
    super(
      'batch_ended',
      'SQLite rolled back the open transaction after a failed statement: nothing in it was written',
    );
    this.name = 'BatchEndedError';
  }
}

/** What a store does at the end of each batch (pending-claims.ts). */
export interface BatchHooks {
  /** Runs on the writer, inside the batch, just before its COMMIT; a throw rolls the batch back. */
  beforeCommit(): void;
  /** The batch ended without committing (rolled back): nothing it held was written. */
  dropped(): void;
  /** A held section ended: kept (released into the batch) or undone. */
  sectionEnded(kept: boolean): void;
}

/** What {@link GroupCommit.writeNow} answers when the section could not run at once. */
export const NOT_NOW: unique symbol = Symbol('oncely.notNow');

/** A section held across awaits (an effect and its receipt): its savepoint and its batch. */
export interface HeldSection {
  /** Keeps what the section wrote, frees the writer, and resolves once the batch has committed. */
  release(): Promise<void>;
  /** Undoes what the section wrote (nothing else) and frees the writer. */
  rollBack(): void;
}

/** A held section: a class, not closures, since every keyed request holds one. */
export class Section implements HeldSection {
  #done = false;

  constructor(
    private readonly group: GroupCommit,
    private readonly batch: Batch,
  ) {}

  release(): Promise<void> {
    if (!this.#done) {
      this.#done = true;
      try {
        this.group.endSection(true);
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return this.batch.committed;
  }

  rollBack(): void {
    if (this.#done) return;
    this.#done = true;
    this.group.endSection(false);
  }
}
