import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import type { Ed25519Signer } from '../contract/webhook-keys.js';

// The DER header of an Ed25519 PKCS#8 private key (RFC 8410), before the 32-byte seed.
const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex');
/** Keys kept parsed: a worker signs with one to a few (a rotation), an endpoint table with more. */
const MAX_CACHED_KEYS = 256;

/**
 * node:crypto's ed25519 (OpenSSL) for the outbox worker's `v1a` signatures: the same bytes as the
 * portable implementation the contract layer uses (ed25519 is deterministic), at a fraction of the
 * CPU time (bench/signatures.ts), which matters to a worker that signs every attempt. Parsing a
 * key costs about ten signatures, so parsed keys are kept (oldest dropped past MAX_CACHED_KEYS).
 */
export const nodeEd25519: Ed25519Signer = {
  sign: (seed, message) => sign(null, message, privateKeyOf(seed)),
};

const parsed = new Map<string, KeyObject>();

function privateKeyOf(seed: Uint8Array): KeyObject {
  const id = Buffer.from(seed).toString('base64');
  let key = parsed.get(id);
  if (key === undefined) {
    key = createPrivateKey({
      key: Buffer.concat([PKCS8_ED25519, seed]),
      format: 'der',
      type: 'pkcs8',
    });
    if (parsed.size >= MAX_CACHED_KEYS) parsed.delete(parsed.keys().next().value!);
    parsed.set(id, key);
  }
  return key;
}
