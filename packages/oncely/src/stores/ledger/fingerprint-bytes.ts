/**
 * How a fingerprint is stored: as bytes, not as text. oncely's fingerprints are SHA-256 in
 * lowercase hex (64 characters); stored as the 32 raw bytes they spell, every receipt and every
 * tombstone is 31 bytes smaller (one tag byte + 32). An app may pass any other string: that is
 * stored as its UTF-8 bytes under another tag, so every fingerprint reads back exactly as given.
 */
const HEX_TAG = 1;
const TEXT_TAG = 0;
const LOWER_HEX = /^(?:[0-9a-f]{2})+$/;

export function fingerprintToBytes(fingerprint: string): Buffer {
  if (LOWER_HEX.test(fingerprint)) {
    const bytes = Buffer.allocUnsafe(1 + fingerprint.length / 2);
    bytes[0] = HEX_TAG;
    bytes.write(fingerprint, 1, 'hex');
    return bytes;
  }
  return Buffer.concat([Buffer.of(TEXT_TAG), Buffer.from(fingerprint, 'utf8')]);
}

/** The inverse of {@link fingerprintToBytes}; a text column (a table made before bytes) reads as is. */
export function fingerprintFromBytes(stored: unknown): string {
  if (typeof stored === 'string') return stored;
  const bytes = Buffer.isBuffer(stored) ? stored : Buffer.from(stored as Uint8Array);
  if (bytes[0] === HEX_TAG) return bytes.toString('hex', 1);
  if (bytes[0] === TEXT_TAG) return bytes.toString('utf8', 1);
  throw new TypeError(`stored fingerprint has an unknown tag byte ${bytes[0]}`);
}
