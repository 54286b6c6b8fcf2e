import { Webhook } from 'standardwebhooks';
import { headerValue, type HeaderSource } from './header-source.js';
import { InvalidOptionError } from './errors.js';
import {
  parseWebhookKey,
  portableEd25519,
  type Ed25519Signer,
  signEd25519,
  verifyEd25519,
  verifyingKeyOf,
  type WebhookKey,
} from './webhook-keys.js';

/**
 * Standard Webhooks 1.0 (https://www.standardwebhooks.com, spec section "Signature scheme"): the
 * content `${webhook-id}.${webhook-timestamp}.${body}` signed with HMAC-SHA256 (`v1,<base64>`,
 * `whsec_` secrets) or ed25519 (`v1a,<base64>`, `whsk_`/`whpk_` keys: webhook-keys.ts); several
 * space-separated signatures may be sent during a rotation. The `standardwebhooks` package
 * computes `v1` (it has no `v1a`); time is an argument here (its own verify() reads Date.now(),
 * which a test cannot drive), so the tolerance check is ours, with the package's five minutes.
 */
export const WEBHOOK_HEADER = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
} as const;

/** The spec's recommended tolerance for `webhook-timestamp`, either way. */
export const DEFAULT_WEBHOOK_TOLERANCE_MS = 5 * 60 * 1000;

/**
 * The three headers to send with one delivery attempt. `id` is the intent's key: the same on every
 * attempt. Each secret adds its signature to `webhook-signature`, space-separated: `v1` for a
 * `whsec_` secret, `v1a` (ed25519) for a `whsk_` secret key. Several secrets are a rotation in
 * progress; a receiver that knows any one of them accepts the delivery.
 */
export function signWebhook(
  secrets: string | readonly string[],
  id: string,
  nowMs: number,
  body: string,
): Record<string, string> {
  return signWebhookWith(portableEd25519, secrets, id, nowMs, body);
}

/** signWebhook with the given ed25519 implementation for `v1a` (the outbox worker's is node:crypto). */
export function signWebhookWith(
  ed25519: Ed25519Signer,
  secrets: string | readonly string[],
  id: string,
  nowMs: number,
  body: string,
): Record<string, string> {
  const list = typeof secrets === 'string' ? [secrets] : secrets;
  if (list.length === 0)
    throw new InvalidOptionError('secrets', 'an empty list', 'at least one whsec_ or whsk_ key');
  const seconds = Math.floor(nowMs / 1000);
  const signatures = list.map((secret) =>
    signatureOf(ed25519, parseWebhookKey(secret), `${id}.${seconds}.${body}`, {
      id,
      seconds,
      body,
    }),
  );
  return {
    [WEBHOOK_HEADER.id]: id,
    [WEBHOOK_HEADER.timestamp]: String(seconds),
    [WEBHOOK_HEADER.signature]: signatures.join(' '),
  };
}

function signatureOf(
  ed25519: Ed25519Signer,
  key: WebhookKey,
  content: string,
  { id, seconds, body }: { id: string; seconds: number; body: string },
): string {
  if (key.kind === 'v1-secret')
    return new Webhook(key.secret).sign(id, new Date(seconds * 1000), body);
  if (key.kind === 'v1a-secret-key') return `v1a,${signEd25519(ed25519, key.secretKey, content)}`;
  throw new InvalidOptionError(
    'secrets',
    'a whpk_ public key',
    'a whsec_ secret or a whsk_ secret key (a public key only verifies)',
  );
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
 * (a replayed old delivery is refused), and one signature matching one of `keys`: `whsec_`
 * secrets check `v1` signatures (constant-time compare), `whpk_` public keys (or `whsk_` secret
 * keys) check `v1a` ones. `keys` may hold several during a rotation; any one match passes.
 * A malformed key throws InvalidOptionError (a configuration error, not the request's).
 * `headers`: a Fetch `Headers`, or node's `req.headers` as it comes (before, it threw
 * `headers.get is not a function`).
 */
export function verifyWebhook(
  keys: readonly string[],
  headers: HeaderSource,
  body: string,
  nowMs: number,
  toleranceMs: number = DEFAULT_WEBHOOK_TOLERANCE_MS,
): WebhookVerification {
  const id = headerValue(headers, WEBHOOK_HEADER.id);
  const timestamp = headerValue(headers, WEBHOOK_HEADER.timestamp);
  const signature = headerValue(headers, WEBHOOK_HEADER.signature);
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
  const offered = signature.split(' ').slice(0, MAX_SIGNATURES_CHECKED);
  const delivery = { id, timestamp: String(timestampMs / 1000), body };
  for (const key of keys)
    if (matchesOneOf(parseWebhookKey(key), offered, delivery)) return { ok: true, id, timestampMs };
  return { ok: false, reason: 'bad_signature', detail: 'no v1 or v1a signature matches' };
}

/**
 * Signatures looked at per delivery: each `v1a` one costs an ed25519 verification per key, so a
 * long forged header cannot make the receiver work without bound. A rotation sends two or three.
 */
const MAX_SIGNATURES_CHECKED = 16;

function matchesOneOf(
  key: WebhookKey,
  offered: readonly string[],
  delivery: { readonly id: string; readonly timestamp: string; readonly body: string },
): boolean {
  const { id, timestamp, body } = delivery;
  if (key.kind === 'v1-secret') {
    const expected = new Webhook(key.secret)
      .sign(id, new Date(Number(timestamp) * 1000), body)
      .slice('v1,'.length);
    return offered.some((s) => s.startsWith('v1,') && constantTimeEqual(s.slice(3), expected));
  }
  const content = `${id}.${timestamp}.${body}`;
  const publicKey = verifyingKeyOf(key);
  return offered.some((s) => s.startsWith('v1a,') && verifyEd25519(publicKey, content, s.slice(4)));
}

/** Compares two strings without an early exit on the first difference (length is not secret). */
function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
