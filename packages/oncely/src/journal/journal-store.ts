import type {
  AttemptEntry,
  AttemptStart,
  ClaimedIntent,
  FinalRecord,
  IntentPolicy,
  IntentRecord,
  IntentState,
  NewIntent,
  Settlement,
  StateCounts,
} from './intent.js';
import type { EndpointStore } from './endpoint.js';

/**
 * Which intents a listing shows, newest recorded first. Every field narrows (they combine with
 * AND); an absent field does not. One object, so that a new criterion is one more field.
 */
export interface IntentFilter {
  /** Only intents in this state, or in any of these. */
  readonly state?: IntentState | readonly IntentState[] | undefined;
  /** Only intents sent to exactly this URL. */
  readonly target?: string | undefined;
  /** Only intents whose URL starts with this (case-sensitive, no wildcards). */
  readonly targetPrefix?: string | undefined;
  /** Only intents that name this endpoint (docs/outbox.md, "Endpoints"). */
  readonly endpoint?: string | undefined;
  /** Only intents that finished at or after this instant (ms since the epoch): never a pending one. */
  readonly finishedSince?: number | undefined;
  /** Paging: only intents recorded before the one with this key (the last key of the page before). */
  readonly after?: string | undefined;
  /** @default 100 */
  readonly limit?: number | undefined;
}

/** The queue as metrics see it: pending intents (parked ones included) and the oldest one's record time. */
export interface Backlog {
  readonly pending: number;
  /** When the oldest pending intent was recorded (ms); null when none is pending. */
  readonly oldestPendingAt: number | null;
}

/** What `reopen` resets: a dead intent gets a fresh budget and deadline, under the same key. */
export interface Reopening {
  readonly maxAttempts: number;
  readonly deadlineAt: number | null;
  readonly nextAttemptAt: number;
}

/** One intent of a batch `reopenMany` (a replay): its whole new policy, and what it was when read. */
export interface BatchReopening {
  readonly key: string;
  /** The attempts it had when the replay read it: a row with more changed meanwhile and is left alone. */
  readonly attemptCount: number;
  readonly policy: IntentPolicy;
  readonly deadlineAt: number | null;
  readonly nextAttemptAt: number;
}

/**
 * What a journal store does beyond {@link JournalStore}'s contract, declared by the store (as a
 * ledger store's `capabilities`): the worker reads it once when it is made.
 */
export interface JournalCapabilities {
  /**
   * `claim`, and each claimed intent's next attempt started in the same write (marked `started`;
   * an interrupted one is not), where the store can do both at once (PostgreSQL: one statement;
   * SQLite: one transaction). Undefined on memory: the worker claims, then starts.
   */
  readonly claimStarting:
    | {
        /** As the store's `claim`, each intent's next attempt started too. */
        readonly claim: JournalStore['claim'];
        /**
         * Takes back attempts `claim` started that were never sent (the attempt row goes, the
         * count comes back down), while the lease holds. True for each taken back.
         */
        unstart(starts: readonly AttemptStart[]): Promise<boolean[]>;
      }
    | undefined;
}

/**
 * Where the sender keeps its intents (the journal): on the ledger's backends, memory, SQLite and
 * PostgreSQL. Like the ledger's store it is dumb on purpose: it inserts, claims under a lease and
 * writes what the worker decided; every retry rule lives in the worker and the policy.
 *
 * Every write that a later step relies on has committed durably when its promise resolves: an
 * intent before its first attempt, an attempt's start before the request leaves (a worker killed
 * mid-attempt leaves an open attempt that the next claim sees as `interrupted`), a settlement
 * before the worker moves on. `Tx` is the application's own transaction handle
 * ({@link recordWithin}: the transactional outbox).
 */
export interface JournalStore<Tx = unknown> {
  /** 'memory', 'sqlite', 'postgres'. */
  readonly name: string;

  /** What it does beyond this contract, declared: the worker reads it once, never probes. */
  readonly capabilities: JournalCapabilities;

  /** The endpoints intents may name, in the same database; absent on a store without them. */
  readonly endpoints?: EndpointStore;

  /** Creates the tables if missing; `recordWithin` needs them to exist. Idempotent. */
  ready(): Promise<void>;

  /** Adds the intent unless its key exists. False when it does (whatever its state). */
  record(intent: NewIntent): Promise<boolean>;

  /**
   * Adds the intent inside the caller's open transaction (same connection): it commits or rolls
   * back with the caller's own writes. False when the key exists.
   */
  recordWithin(tx: Tx, intent: NewIntent): Promise<boolean>;

  get(key: string): Promise<IntentRecord | undefined>;
  attempts(key: string): Promise<AttemptEntry[]>;
  list(filter?: IntentFilter): Promise<IntentRecord[]>;
  counts(): Promise<StateCounts>;
  /** The pending intents' count and oldest record time, in one read; absent on older stores. */
  backlog?(): Promise<Backlog>;

  /**
   * Leases up to `limit` pending intents whose next attempt is due and whose lease is free or
   * expired, to `owner` until `nowMs + leaseMs`. Two workers never hold one intent at once
   * (PostgreSQL: FOR UPDATE SKIP LOCKED; SQLite: one writer at a time). With `onlyKey`, that
   * intent alone is considered.
   */
  claim(
    owner: string,
    nowMs: number,
    leaseMs: number,
    limit: number,
    onlyKey?: string,
  ): Promise<ClaimedIntent[]>;

  /** Appends each attempt and counts it, while the lease (key, token) holds. False where it does not. */
  startAttempts(starts: readonly AttemptStart[]): Promise<boolean[]>;

  /** Closes each attempt and writes what comes next, releasing the lease. False where the lease was lost. */
  settle(settlements: readonly Settlement[]): Promise<boolean[]>;

  /**
   * Finishes a pending intent that no live lease holds with `final` (state `cancelled`). False
   * when it is finished already or a worker holds it right now.
   */
  cancel(key: string, final: FinalRecord, nowMs: number): Promise<boolean>;

  /** Makes a finished intent pending again under the same key. False unless it was finished (not delivered). */
  reopen(key: string, reopening: Reopening): Promise<boolean>;

  /**
   * `reopen` for a batch, in one statement (one commit): each intent still finished (not
   * delivered) and still at `attemptCount` attempts is made pending. True for each reopened.
   */
  reopenMany(reopenings: readonly BatchReopening[]): Promise<boolean[]>;

  /** The earliest `nextAttemptAt` among pending intents, or undefined when none is pending. */
  nextDueAt(): Promise<number | undefined>;

  /**
   * Calls `onDue` soon after an intent may have become due: recorded or reopened, in this process
   * or (PostgreSQL, through LISTEN/NOTIFY) another, once its transaction committed. Best effort:
   * a worker still polls as the fallback. On SQLite, another connection's commit (another
   * process) is heard through `PRAGMA data_version`, read every millisecond while watched; an
   * intent recorded inside the caller's own transaction on the store's own connection
   * (`recordWithin`) is found at the next poll. Resolves once listening (or once
   * listening failed: the poll covers it) with the function that stops the calls.
   */
  watch(onDue: () => void): Promise<() => void>;

  close(): Promise<void>;
}
