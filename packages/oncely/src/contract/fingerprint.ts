import canonicalize from 'canonicalize';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';

/**
 * JSON canonicalisation (RFC 8785, JCS): object keys sorted, numbers and strings in one form.
 * Two commands that differ only in key order have the same canonical text.
 */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError('value cannot be represented as JSON');
  return text;
}

/** SHA-256 of a string's UTF-8 bytes, or of raw bytes, as lowercase hex. Synchronous and browser-safe. */
export function sha256Hex(input: string | Uint8Array): string {
  return bytesToHex(sha256(typeof input === 'string' ? utf8ToBytes(input) : input));
}

/** The fingerprint a ledger stores beside a key: SHA-256 of the canonical JSON of the command. */
export function fingerprint(command: unknown): string {
  return sha256Hex(canonicalJson(command));
}
