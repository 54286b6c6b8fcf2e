import { InvalidOptionError } from '../contract/errors.js';
import type { Receipt } from '../contract/receipt.js';
import { DEFAULT_STATUS_TABLE } from '../contract/status-class.js';
import { systemClock, type Clock } from '../time/clock.js';
import type { LedgerStore } from './ledger-store.js';
import type { StepStore } from './step-store.js';

/**
 * The default storage policy: a business answer is stored, a transient failure is not.
 * 2xx, 3xx and 4xx are stored (a 404 or a 422 is the answer, and a retry must get it again),
 * except the 4xx that ask to come back later (408, 425, 429 in the webhook storm's table (docs/origins.md)): storing those
 * would replay "try later" for the whole retention. 5xx is never stored: the effect rolls back
 * and the key is released, so a retry runs again.
 */
export function isBusinessAnswer(receipt: Receipt): boolean {
  return (
    receipt.status >= 200 &&
    receipt.status < 500 &&
    !DEFAULT_STATUS_TABLE.retryable.has(receipt.status)
  );
}

export interface LedgerTuning {
  /**
   * How long a claim guards a key before another worker may take it over. Short, because the
   * owner renews it every `heartbeatMs` while its effect runs: a live slow effect is never taken
   * over, and a killed owner blocks its key for at most one lease (two heartbeats by default),
   * not for the retention period. @default 2000 (2 s)
   */
  readonly leaseMs: number;
  /**
   * How often a running effect's owner renews its lease (to now + leaseMs). Less than leaseMs.
   * @default leaseMs / 2
   */
  readonly heartbeatMs: number;
  /** How long a receipt is replayed after completion. @default 86400000 (24 h) */
  readonly retentionMs: number;
  /**
   * How long after retention a lookup still answers "expired" rather than "never seen". Past it
   * the tombstone is deleted. @default 604800000 (7 days)
   */
  readonly tombstoneMs: number;
  /**
   * Rows the retention sweep handles per step, each step one short transaction: no write waits
   * for more than one step (a few ms on SQLite, docs/performance.md, bench/ledger-scale).
   * @default the store's own sweepBatchRows (SQLite 500, PostgreSQL 2000), else 1000
   */
  readonly sweepBatchRows: number;
  /**
   * The time one sweep step aims at: after a slower step the next takes proportionally fewer rows,
   * and steps grow back to sweepBatchRows while they stay fast. On SQLite a step blocks the
   * process and holds the file's write lock, so its length is what a request may wait.
   * 0 keeps every step at sweepBatchRows.
   * @default the store's own sweepStepMs (SQLite 10), else 20
   */
  readonly sweepStepMs: number;
  /**
   * The shortest pause between two sweep steps (never shorter than the step itself): requests get
   * the store in between, and a backlog drains at no more than sweepBatchRows per (2 × step) or
   * per (step + pause). @default 10
   */
  readonly sweepPauseMs: number;
  /** Which outcomes are stored; the others roll back and release the key. @default isBusinessAnswer */
  readonly shouldStore: (receipt: Receipt) => boolean;
  /** The owner token of each claim. @default crypto.randomUUID */
  readonly generateToken: () => string;
  /**
   * Memory for completed receipts this process read back for a retry (and, on PostgreSQL, wrote),
   * so a retry of the key is answered without a store round trip (receipt-cache.ts, and
   * `LedgerCore.keepWritten` for which): a completed receipt never changes before its retention
   * ends. Least recently used first; 0 turns it off. @default 8388608 (8 MiB)
   */
  readonly receiptCacheBytes: number;
}

export interface LedgerOptions<Tx> extends Partial<LedgerTuning> {
  readonly store: LedgerStore<Tx>;
  /**
   * Where the recovery points of `step(name, fn)` are kept (docs/steps.md): a step store over
   * the same database as `store` (createSqlStepStore, createMemoryStepStore). Without one, a
   * step is refused with a `no_step_store` error. @default undefined
   */
  readonly steps?: StepStore<Tx> | undefined;
  /** Leases and retention are measured on this clock only. @default the system clock */
  readonly clock?: Clock;
}

export const DEFAULT_LEDGER_OPTIONS: Omit<LedgerTuning, 'heartbeatMs'> = {
  leaseMs: 2_000,
  retentionMs: 86_400_000,
  tombstoneMs: 604_800_000,
  sweepBatchRows: 1000,
  sweepStepMs: 20,
  sweepPauseMs: 10,
  shouldStore: isBusinessAnswer,
  generateToken: () => globalThis.crypto.randomUUID(),
  receiptCacheBytes: 8_388_608,
};

export interface ResolvedLedgerOptions<Tx> extends LedgerTuning {
  readonly store: LedgerStore<Tx>;
  readonly steps: StepStore<Tx> | undefined;
  readonly clock: Clock;
}

/** Fills defaults and checks every option once; errors name the option and the allowed range. */
export function resolveLedgerOptions<Tx>(options: LedgerOptions<Tx>): ResolvedLedgerOptions<Tx> {
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionError('options', options, 'an object with a store');
  const { store, clock = systemClock, steps } = options;
  const merged = { ...DEFAULT_LEDGER_OPTIONS, ...definedOnly(options), store, clock, steps };
  const o = {
    ...merged,
    heartbeatMs: merged.heartbeatMs ?? Math.max(1, Math.floor(merged.leaseMs / 2)),
  };
  // The store's own pace, unless told one (a store made by hand may not say).
  const tuning = (store as Partial<LedgerStore<Tx>> | undefined)?.tuning;
  if (options.sweepBatchRows === undefined && tuning !== undefined)
    o.sweepBatchRows = tuning.sweepBatchRows;
  if (options.sweepStepMs === undefined && tuning !== undefined) o.sweepStepMs = tuning.sweepStepMs;
  for (const method of [
    'get',
    'claim',
    'swap',
    'renew',
    'remove',
    'transaction',
    'complete',
    'sweep',
    'backlog',
  ] as const) {
    if (typeof store?.[method] !== 'function')
      throw new InvalidOptionError('store', store, `a LedgerStore (missing ${method}())`);
  }
  for (const method of ['resume', 'record', 'recordAlone', 'sweep', 'ready'] as const) {
    if (steps !== undefined && typeof steps?.[method] !== 'function')
      throw new InvalidOptionError('steps', steps, `a StepStore (missing ${method}())`);
  }
  if (typeof clock.now !== 'function')
    throw new InvalidOptionError('clock', clock, 'a Clock with now()');
  wholeMs('leaseMs', o.leaseMs, 2, 'a whole number of milliseconds >= 2');
  wholeMs('heartbeatMs', o.heartbeatMs, 1, `a whole number of milliseconds >= 1`);
  if (o.heartbeatMs >= o.leaseMs)
    throw new InvalidOptionError('heartbeatMs', o.heartbeatMs, `less than leaseMs (${o.leaseMs})`);
  wholeMs(
    'retentionMs',
    o.retentionMs,
    o.leaseMs,
    `a whole number of milliseconds >= leaseMs (${o.leaseMs})`,
  );
  wholeMs('tombstoneMs', o.tombstoneMs, 0, 'a whole number of milliseconds >= 0');
  wholeMs('sweepBatchRows', o.sweepBatchRows, 1, 'a whole number of rows >= 1');
  wholeMs('sweepStepMs', o.sweepStepMs, 0, 'a whole number of milliseconds >= 0');
  wholeMs('sweepPauseMs', o.sweepPauseMs, 0, 'a whole number of milliseconds >= 0');
  wholeMs('receiptCacheBytes', o.receiptCacheBytes, 0, 'a whole number of bytes >= 0');
  if (typeof o.shouldStore !== 'function')
    throw new InvalidOptionError('shouldStore', o.shouldStore, 'a function (receipt) => boolean');
  if (typeof o.generateToken !== 'function')
    throw new InvalidOptionError('generateToken', o.generateToken, 'a function () => string');
  return o;
}

function wholeMs(option: string, value: unknown, min: number, allowed: string): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw new InvalidOptionError(option, value, allowed);
  }
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
