import { ed25519 } from '@noble/curves/ed25519.js';
import { utf8ToBytes } from '@noble/hashes/utils.js';
import { InvalidOptionError } from './errors.js';

/**
 * Standard Webhooks keys (spec section "Signature scheme"): a symmetric secret (`whsec_` +
 * base64, HMAC-SHA256, signatures `v1,…`) or an ed25519 pair (`whsk_` + the base64 32-byte seed,
 * `whpk_` + the base64 32-byte public key, signatures `v1a,…`), as the reference libraries
 * serialize them. The prefix says the scheme, so no option has to. ed25519 is @noble/curves'
 * (synchronous and browser-safe like the rest of this layer; node:crypto would tie it to Node).
 */
export type WebhookKeyKind = 'v1-secret' | 'v1a-secret-key' | 'v1a-public-key';

export const WEBHOOK_KEY_PREFIX = {
  secret: 'whsec_',
  secretKey: 'whsk_',
  publicKey: 'whpk_',
} as const;

/** A parsed key, ready to sign (`v1` secrets and `v1a` secret keys) or to verify. */
export type WebhookKey =
  | { readonly kind: 'v1-secret'; readonly secret: string }
  | { readonly kind: 'v1a-secret-key'; readonly secretKey: Uint8Array }
  | { readonly kind: 'v1a-public-key'; readonly publicKey: Uint8Array };

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const ED25519_BYTES = 32;
const SIGNATURE_BYTES = 64;

/** What a key is, by its prefix; throws (without echoing the key) when it is malformed. */
export function webhookKeyKind(key: string): WebhookKeyKind {
  return parseWebhookKey(key).kind;
}

/**
 * Parses one key. A key without a known prefix is a `v1` secret in bare base64, as the
 * `standardwebhooks` package accepts it. Errors name the prefix and length, never the key.
 */
export function parseWebhookKey(key: string): WebhookKey {
  if (typeof key !== 'string' || key === '')
    throw new InvalidOptionError('webhook key', typeof key, 'a whsec_, whsk_ or whpk_ key');
  if (key.startsWith(WEBHOOK_KEY_PREFIX.secretKey))
    return { kind: 'v1a-secret-key', secretKey: ed25519Bytes(key, WEBHOOK_KEY_PREFIX.secretKey) };
  if (key.startsWith(WEBHOOK_KEY_PREFIX.publicKey))
    return { kind: 'v1a-public-key', publicKey: ed25519Bytes(key, WEBHOOK_KEY_PREFIX.publicKey) };
  const bare = key.startsWith(WEBHOOK_KEY_PREFIX.secret)
    ? key.slice(WEBHOOK_KEY_PREFIX.secret.length)
    : key;
  if (!BASE64.test(bare))
    throw new InvalidOptionError('webhook key', redacted(key), 'a whsec_ secret in base64');
  return { kind: 'v1-secret', secret: key };
}

/**
 * Pure ed25519 signing (RFC 8032, no pre-hash) of `message` with the 32-byte `seed`. Deterministic,
 * so every correct implementation gives the same 64 bytes: the outbox worker swaps in node:crypto's
 * (src/journal/node-ed25519.ts), many times faster than this portable one.
 */
export interface Ed25519Signer {
  sign(seed: Uint8Array, message: Uint8Array): Uint8Array;
}

/** @noble/curves' ed25519: synchronous and browser-safe. */
export const portableEd25519: Ed25519Signer = {
  sign: (seed, message) => ed25519.sign(message, seed),
};

/** The `v1a` signature of `content` (its UTF-8 bytes), base64. */
export function signEd25519(signer: Ed25519Signer, secretKey: Uint8Array, content: string): string {
  return toBase64(signer.sign(secretKey, utf8ToBytes(content)));
}

/**
 * True when `signature` (base64) is the ed25519 signature of `content` by `publicKey`. Strict
 * RFC 8032 checks (no ZIP-215 leniency), as Go's crypto/ed25519 and OpenSSL verify.
 */
export function verifyEd25519(publicKey: Uint8Array, content: string, signature: string): boolean {
  const bytes = fromBase64(signature);
  if (bytes?.byteLength !== SIGNATURE_BYTES) return false;
  try {
    return ed25519.verify(bytes, utf8ToBytes(content), publicKey, { zip215: false });
  } catch {
    return false; // a public key that is not a curve point verifies nothing
  }
}

/**
 * The public key that checks a `v1a` key's signatures. Derived only when a secret key verifies
 * (a sender checking itself): signing needs none, and the derivation costs a scalar multiplication.
 */
export function verifyingKeyOf(key: Exclude<WebhookKey, { kind: 'v1-secret' }>): Uint8Array {
  return key.kind === 'v1a-public-key' ? key.publicKey : ed25519.getPublicKey(key.secretKey);
}

/** A fresh `whsec_` secret: 32 random bytes (the spec asks for 24 to 64). */
export function generateWebhookSecret(): string {
  return `${WEBHOOK_KEY_PREFIX.secret}${toBase64(globalThis.crypto.getRandomValues(new Uint8Array(32)))}`;
}

/** A fresh ed25519 pair: `secretKey` (`whsk_…`) signs, `publicKey` (`whpk_…`) goes to receivers. */
export function generateWebhookKeyPair(): { secretKey: string; publicKey: string } {
  const { secretKey, publicKey } = ed25519.keygen();
  return {
    secretKey: `${WEBHOOK_KEY_PREFIX.secretKey}${toBase64(secretKey)}`,
    publicKey: `${WEBHOOK_KEY_PREFIX.publicKey}${toBase64(publicKey)}`,
  };
}

function ed25519Bytes(key: string, prefix: string): Uint8Array {
  const bytes = fromBase64(key.slice(prefix.length));
  if (bytes?.byteLength !== ED25519_BYTES)
    throw new InvalidOptionError(
      'webhook key',
      redacted(key),
      `${prefix} and the base64 of ${ED25519_BYTES} bytes`,
    );
  return bytes;
}

function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Standard base64 with padding, or undefined (atob alone also takes spaces and no padding). */
function fromBase64(text: string): Uint8Array | undefined {
  if (!BASE64.test(text) || text.length % 4 !== 0) return undefined;
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

/** A key as an error may show it: its prefix and length only. */
function redacted(key: string): string {
  const prefix = Object.values(WEBHOOK_KEY_PREFIX).find((p) => key.startsWith(p)) ?? '';
  return `${prefix}… (${key.length} characters)`;
}
