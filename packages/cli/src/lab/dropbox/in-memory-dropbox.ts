/**
 * The dropbox story's course dropbox (docs/origins.md), kept in memory: a submission is written, and the first ack can then
 * vanish (a TimeoutError after the write committed). Ported line for line from the seed's
 * `Dropbox` so the fixtures print what the seed prints; `closesAt` adds the seed's extension.
 */
export const SUBMISSION_STATUSES = ['pending', 'accepted', 'rejected'] as const;
export type SubmissionStatus = (typeof SUBMISSION_STATUSES)[number];

export interface DropboxRow {
  readonly key: string;
  readonly student: string;
  readonly assignment: string;
  readonly status: SubmissionStatus;
  readonly writes: number;
}

/** The ack was lost after the write: the caller cannot tell this from a write that never happened. */
export class AckLostError extends Error {
  override readonly name = 'TimeoutError';
  constructor() {
    super('accepted, but the ack never came back');
  }
}

/** A new submission after the close. Exact replays of earlier submissions still get their receipt. */
export class ClosedError extends Error {
  override readonly name = 'ClosedError';
  constructor(assignment: string) {
    super(`${assignment} is closed`);
  }
}

export interface InMemoryDropboxOptions {
  /** Drop the ack of the very first call, after its write. @default true */
  readonly swallowFirstAck?: boolean;
  /** Submissions are refused from this instant on (ms); replays are not. @default Infinity */
  readonly closesAt?: number;
  /** Reads the time for the close check. @default () => -Infinity (never closed) */
  readonly now?: () => number;
}

export class InMemoryDropbox {
  readonly #rows = new Map<string, DropboxRow>();
  #ackCalls = 0;
  readonly #swallowFirstAck: boolean;
  readonly #closesAt: number;
  readonly #now: () => number;

  constructor(options: InMemoryDropboxOptions = {}) {
    this.#swallowFirstAck = options.swallowFirstAck ?? true;
    this.#closesAt = options.closesAt ?? Number.POSITIVE_INFINITY;
    this.#now = options.now ?? (() => Number.NEGATIVE_INFINITY);
  }

  /** Stores one submission per key and returns its status; a known key answers from its row. */
  submit(key: string, student: string, assignment: string): SubmissionStatus {
    this.#ackCalls += 1;
    const existing = this.#rows.get(key);
    if (existing) return existing.status;
    if (this.#now() >= this.#closesAt) throw new ClosedError(assignment);
    const row: DropboxRow = { key, student, assignment, status: 'accepted', writes: 1 };
    this.#rows.set(key, row);
    if (this.#swallowFirstAck && this.#ackCalls === 1) throw new AckLostError();
    return row.status;
  }

  /** A read-only status lookup by key: allowed after the close, it changes nothing. */
  lookup(key: string): DropboxRow | undefined {
    return this.#rows.get(key);
  }

  dump(): DropboxRow[] {
    return [...this.#rows.values()].map((r) => ({ ...r }));
  }
}
