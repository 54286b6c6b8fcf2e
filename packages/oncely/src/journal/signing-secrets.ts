import { InvalidOptionError } from '../contract/errors.js';
import type { RotatingSecret } from '../contract/secret-rotation.js';
import { checkSigningKey } from '../contract/signing-key.js';

/**
 * Checks the worker's `signingSecret` where options enter: every key signs (`whsec_` or `whsk_`,
 * well formed, as checkSigningKey checks every signing key; a `whpk_` public key cannot), and a list keeps one secret that never expires, so
 * no attempt ever goes out unsigned because a rotation's last secret ran out.
 */
export function checkSigningSecrets(
  option: string | readonly (string | RotatingSecret)[] | undefined,
): void {
  if (option === undefined) return;
  const entries = typeof option === 'string' ? [option] : option;
  const allowed = 'whsec_ secrets or whsk_ secret keys, one of them never expiring';
  if (!Array.isArray(entries) || entries.length === 0)
    throw new InvalidOptionError('signingSecret', entries, allowed);
  for (const entry of entries) {
    const secret = typeof entry === 'string' ? entry : entry?.secret;
    if (typeof secret !== 'string')
      throw new InvalidOptionError('signingSecret', typeof entry, allowed);
    checkSigningKey('signingSecret', secret);
  }
  if (!entries.some((entry) => typeof entry === 'string' || entry.expiresAt === null))
    throw new InvalidOptionError('signingSecret', 'only expiring secrets', allowed);
}
