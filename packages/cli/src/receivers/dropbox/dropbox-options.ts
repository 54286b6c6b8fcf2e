import { InvalidOptionError, type Ledger, type Clock } from 'oncely';
import type { ServiceDatabase } from '../sql/service-database.js';
import { checkReceiverDeps } from '../receiver-deps.js';

/**
 * Faults the dropbox can inject. `swallow-first-ack` is the dropbox story's incident as a service (docs/origins.md): the
 * submission and its receipt commit, then the connection is dropped without a reply, so the
 * client cannot tell whether the work happened. Only the first ack of each submission is
 * swallowed: its retry is a replay and gets the stored receipt.
 */
export const DROPBOX_FAULTS = ['swallow-first-ack'] as const;
export type DropboxFault = (typeof DROPBOX_FAULTS)[number];

/** The request header that asks for a fault on one request; `none` turns a server fault off for it. */
export const FAULT_HEADER = 'Oncely-Fault';
export const FAULT_HEADER_VALUES = [...DROPBOX_FAULTS, 'none'] as const;

export interface DropboxLimits {
  /** Bodies larger than this are refused with 413 before the ledger is touched. @default 16384 (16 KiB) */
  readonly maxBodyBytes: number;
  /** Longest student or assignment name, in characters. @default 128 */
  readonly maxFieldLength: number;
}

export const DEFAULT_DROPBOX_LIMITS: DropboxLimits = {
  maxBodyBytes: 16_384,
  maxFieldLength: 128,
};

export interface DropboxAppDeps<Tx> {
  readonly ledger: Ledger<Tx>;
  /** The submissions table lives in the ledger's database, so a row commits with its receipt. */
  readonly db: ServiceDatabase<Tx>;
  /** The authenticated caller (the bearer token's owner), or undefined: 401. Keys are scoped by it. */
  readonly scopeOf: (request: Request) => string | undefined;
  /** Decides whether an assignment is closed, and stamps rows. @default systemClock */
  readonly clock?: Clock;
  /**
   * When an assignment closes (ms since the epoch), or undefined when it never does. At or after
   * it, new submissions are refused (403 assignment_closed); replays still get their receipt.
   * @default () => undefined (assignments never close)
   */
  readonly closesAtOf?: ((assignment: string) => number | undefined) | undefined;
  /** A fault for every request of this server (a request's Oncely-Fault header overrides it). @default undefined */
  readonly fault?: DropboxFault | undefined;
  readonly limits?: Partial<DropboxLimits>;
  /** Told about failures the client sees only as 500 or 503. @default nothing */
  readonly onError?: (error: unknown, request: Request) => void;
}

export interface ResolvedDropboxDeps<Tx> {
  readonly ledger: Ledger<Tx>;
  readonly db: ServiceDatabase<Tx>;
  readonly scopeOf: (request: Request) => string | undefined;
  readonly clock: Clock;
  readonly closesAtOf: (assignment: string) => number | undefined;
  readonly fault: DropboxFault | undefined;
  readonly limits: DropboxLimits;
  readonly onError: (error: unknown, request: Request) => void;
}

/** Fills defaults and checks every option once; errors name the option and the allowed range. */
export function resolveDropboxDeps<Tx>(deps: DropboxAppDeps<Tx>): ResolvedDropboxDeps<Tx> {
  const { db, scopeOf, clock } = checkReceiverDeps(deps, 'an object {ledger, db, scopeOf}');
  const { ledger } = deps;
  if (typeof ledger?.execute !== 'function' || typeof ledger.lookup !== 'function')
    throw new InvalidOptionError('ledger', ledger, 'a Ledger from createLedger()');
  const closesAtOf = deps.closesAtOf ?? (() => undefined);
  if (typeof closesAtOf !== 'function')
    throw new InvalidOptionError(
      'closesAtOf',
      closesAtOf,
      'a function (assignment) => ms | undefined',
    );
  if (deps.fault !== undefined && !DROPBOX_FAULTS.includes(deps.fault)) {
    throw new InvalidOptionError('fault', deps.fault, `one of ${DROPBOX_FAULTS.join(', ')}`);
  }
  const limits = { ...DEFAULT_DROPBOX_LIMITS, ...definedOnly(deps.limits ?? {}) };
  if (!Number.isSafeInteger(limits.maxBodyBytes) || limits.maxBodyBytes < 64) {
    throw new InvalidOptionError(
      'limits.maxBodyBytes',
      limits.maxBodyBytes,
      'a whole number of bytes >= 64',
    );
  }
  if (!Number.isSafeInteger(limits.maxFieldLength) || limits.maxFieldLength < 1) {
    throw new InvalidOptionError(
      'limits.maxFieldLength',
      limits.maxFieldLength,
      'a whole number of characters >= 1',
    );
  }
  const onError = deps.onError ?? (() => {});
  if (typeof onError !== 'function')
    throw new InvalidOptionError('onError', onError, 'a function (error, request) => void');
  return { ledger, db, scopeOf, clock, closesAtOf, fault: deps.fault, limits, onError };
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
