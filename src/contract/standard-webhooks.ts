import { Webhook } from 'standardwebhooks';

/**
 * Standard Webhooks 1.0 (https://www.standardwebhooks.com, spec section "Signature scheme"):
 * HMAC-SHA256 over `${webhook-id}.${webhook-timestamp}.${body}`, sent as `v1,<base64>`; several
 * space-separated signatures may be sent during a secret rotation. The `standardwebhooks` package
 * computes the signature; time is an argument here (its own verify() reads Date.now(), which a
 * test cannot drive), so the tolerance check is ours, with the package's default of five minutes.
 */
export const WEBHOOK_HEADER = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
} as const;

/** The spec's recommended tolerance for `webhook-timestamp`, either way. */
export const DEFAULT_WEBHOOK_TOLERANCE_MS = 5 * 60 * 1000;

/** The three headers to send with one delivery attempt. `id` is the intent's key: the same on every attempt. */
export function signWebhook(
  secret: string,
  id: string,
  nowMs: number,
  body: string,
): Record<string, string> {
  const seconds = Math.floor(nowMs / 1000);
  return {
    [WEBHOOK_HEADER.id]: id,
    [WEBHOOK_HEADER.timestamp]: String(seconds),
    [WEBHOOK_HEADER.signature]: new Webhook(secret).sign(id, new Date(seconds * 1000), body),
  };
}

export type WebhookVerification =
  | { readonly ok: true; readonly id: string; readonly timestampMs: number }
  | {
      readonly ok: false;
      readonly reason:
        | 'missing_header'
        | 'bad_timestamp'
        | 'timestamp_too_old'
        | 'timestamp_too_new'
        | 'bad_signature';
      readonly detail: string;
    };

/**
 * Checks one delivery: all three headers present, the timestamp within `toleranceMs` of `nowMs`
 * (a replayed old delivery is refused), and one `v1` signature matching in constant time.
 * `secrets` may hold several during a rotation.
 */
export function verifyWebhook(
  secrets: readonly string[],
  headers: { get(name: string): string | null },
  body: string,
  nowMs: number,
  toleranceMs: number = DEFAULT_WEBHOOK_TOLERANCE_MS,
): WebhookVerification {
  const id = headers.get(WEBHOOK_HEADER.id);
  const timestamp = headers.get(WEBHOOK_HEADER.timestamp);
  const signature = headers.get(WEBHOOK_HEADER.signature);
  if (!id || !timestamp || !signature) {
    const missing = [
      id ? '' : WEBHOOK_HEADER.id,
      timestamp ? '' : WEBHOOK_HEADER.timestamp,
      signature ? '' : WEBHOOK_HEADER.signature,
    ].filter(Boolean);
    return { ok: false, reason: 'missing_header', detail: `missing ${missing.join(', ')}` };
  }
  if (!/^\d{1,15}$/.test(timestamp))
    return {
      ok: false,
      reason: 'bad_timestamp',
      detail: `${WEBHOOK_HEADER.timestamp} is not whole seconds`,
    };
  const timestampMs = Number(timestamp) * 1000;
  if (nowMs - timestampMs > toleranceMs)
    return {
      ok: false,
      reason: 'timestamp_too_old',
      detail: `${WEBHOOK_HEADER.timestamp} is more than ${toleranceMs / 1000} s old`,
    };
  if (timestampMs - nowMs > toleranceMs)
    return {
      ok: false,
      reason: 'timestamp_too_new',
      detail: `${WEBHOOK_HEADER.timestamp} is more than ${toleranceMs / 1000} s ahead`,
    };
  const offered = signature
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => s.slice(3));
  for (const secret of secrets) {
    const expected = new Webhook(secret).sign(id, new Date(timestampMs), body).slice(3);
    if (offered.some((candidate) => constantTimeEqual(candidate, expected)))
      return { ok: true, id, timestampMs };
  }
  return { ok: false, reason: 'bad_signature', detail: 'no v1 signature matches' };
}

/** Compares two strings without an early exit on the first difference (length is not secret). */
function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
