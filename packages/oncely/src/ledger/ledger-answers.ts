import { InvalidOptionError } from '../contract/errors.js';
import { validateKey } from '../contract/idempotency-key.js';
import type { Receipt } from '../contract/receipt.js';
import type { DeferredOutcome, DeferredWrite } from './deferred-writes.js';
import type { CompletedEntry, InFlightEntry } from './ledger-entry.js';
import type { ExecuteResult, LedgerRequest, LookupResult } from './ledger-result.js';
import { normalizeReceipt } from './normalize-receipt.js';

/** The answer from a completed entry: the request's own execution, or a replay of it. */
export function completedAnswer(
  kind: 'executed' | 'replayed',
  entry: CompletedEntry,
): ExecuteResult {
  return {
    kind,
    receipt: entry.receipt,
    firstSeenAt: entry.firstSeenAt,
    completedAt: entry.completedAt,
    expiresAt: entry.expiresAt,
  };
}

/** The key holds another command (another fingerprint). */
export function conflictAnswer(entry: InFlightEntry | CompletedEntry): ExecuteResult {
  return { kind: 'conflict', state: entry.state, firstSeenAt: entry.firstSeenAt };
}

export function expiredAnswer(
  fingerprint: string,
  firstSeenAt: number,
  expiredAt: number,
  completedAt: number | undefined,
): LookupResult {
  return { kind: 'expired', fingerprint, firstSeenAt, expiredAt, completedAt };
}

/** The public edge of the ledger: a malformed request is a programming error, thrown at once. */
export function checkRequest(request: LedgerRequest): void {
  if (typeof request !== 'object' || request === null)
    throw new InvalidOptionError('request', request, 'an object {scope, key, fingerprint}');
  if (typeof request.scope !== 'string' || request.scope === '')
    throw new InvalidOptionError('scope', request.scope, 'a non-empty string');
  validateKey(request.key);
  if (typeof request.fingerprint !== 'string' || request.fingerprint === '') {
    throw new InvalidOptionError('fingerprint', request.fingerprint, 'a non-empty string');
  }
}

/** A deferred effect's answer, its receipt normalized; a malformed one is the effect's error. */
export function checkDeferredOutcome(outcome: DeferredOutcome): {
  receipt: Receipt;
  writes: readonly DeferredWrite[];
} {
  const receipt = normalizeReceipt(outcome?.receipt);
  if (typeof receipt === 'string') throw new TypeError(receipt);
  if (!Array.isArray(outcome.writes))
    throw new TypeError('a deferred effect answers { receipt, writes } with writes an array');
  return { receipt, writes: outcome.writes };
}
