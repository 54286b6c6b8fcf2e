import { InvalidOptionError } from './errors.js';
import { webhookKeyKind } from './webhook-keys.js';

/**
 * One signing secret of an endpoint (`whsec_…` or `whsk_…`) and when it stops being used:
 * `null` for the current one, an instant (ms since the epoch) for one being rotated out.
 */
export interface RotatingSecret {
  readonly secret: string;
  readonly expiresAt: number | null;
}

/**
 * The list after a rotation to `newSecret` at `nowMs`: the new secret first, never expiring; every
 * other secret still in use expires `overlapMs` from now (or earlier, if it already would), so
 * deliveries carry both signatures while receivers switch; secrets already expired are dropped.
 * Pure: the caller stores the result.
 */
export function rotateSecrets(
  list: readonly RotatingSecret[],
  newSecret: string,
  nowMs: number,
  overlapMs: number,
): RotatingSecret[] {
  if (webhookKeyKind(newSecret) === 'v1a-public-key')
    throw new InvalidOptionError(
      'newSecret',
      'a whpk_ public key',
      'a whsec_ secret or a whsk_ secret key (a public key cannot sign)',
    );
  if (!Number.isSafeInteger(overlapMs) || overlapMs < 0)
    throw new InvalidOptionError('overlapMs', overlapMs, 'a whole number of milliseconds >= 0');
  if (!Number.isSafeInteger(nowMs))
    throw new InvalidOptionError('nowMs', nowMs, 'an instant in whole milliseconds');
  if (list.some((entry) => entry.secret === newSecret))
    throw new InvalidOptionError('newSecret', 'a secret already in the list', 'a new secret');
  const endsAt = nowMs + overlapMs;
  const kept = list
    .filter((entry) => isActive(entry, nowMs))
    .map((entry) => ({
      secret: entry.secret,
      expiresAt: entry.expiresAt === null ? endsAt : Math.min(entry.expiresAt, endsAt),
    }))
    .filter((entry) => isActive(entry, nowMs));
  return [{ secret: newSecret, expiresAt: null }, ...kept];
}

/**
 * The secrets to sign with at `nowMs`, in list order: those not yet expired. A plain string
 * counts as a secret that never expires (a fixed secret needs no entry).
 */
export function activeSecrets(list: readonly (RotatingSecret | string)[], nowMs: number): string[] {
  return list
    .map((entry) => (typeof entry === 'string' ? { secret: entry, expiresAt: null } : entry))
    .filter((entry) => isActive(entry, nowMs))
    .map((entry) => entry.secret);
}

/** A secret is used up to, not at, its expiry instant. */
function isActive(entry: RotatingSecret, nowMs: number): boolean {
  return entry.expiresAt === null || nowMs < entry.expiresAt;
}
