import { InvalidOptionError } from './errors.js';
import { parseWebhookKey, WEBHOOK_KEY_PREFIX } from './webhook-keys.js';

const ALLOWED =
  'a whsec_ secret (whsec_ and padded base64) or a whsk_ secret key (whsk_ and the base64 of 32 bytes)';

/**
 * Checks a key a sender signs with, the same way wherever one enters (the worker's
 * `signingSecret`, an endpoint's secrets, `--signing-secret-env`, `--secret-env`): a `whsec_`
 * secret in padded base64 (`v1`) or a `whsk_` ed25519 secret key (`v1a`). Stricter than a
 * receiver's check, which takes bare base64 as the `standardwebhooks` package does: a sender given
 * `hello` would sign with it as a raw key, and no receiver holding a real secret would ever match.
 * A `whpk_` public key cannot sign. Errors name the option, never the key. Returns the key.
 */
export function checkSigningKey(option: string, key: unknown): string {
  if (typeof key !== 'string') throw new InvalidOptionError(option, typeof key, ALLOWED);
  const hidden = `a key of ${key.length} characters`;
  if (key.startsWith(WEBHOOK_KEY_PREFIX.publicKey))
    throw new InvalidOptionError(
      option,
      'a whpk_ public key (it verifies, it cannot sign)',
      ALLOWED,
    );
  const prefixed =
    key.startsWith(WEBHOOK_KEY_PREFIX.secret) || key.startsWith(WEBHOOK_KEY_PREFIX.secretKey);
  const body = key.startsWith(WEBHOOK_KEY_PREFIX.secret)
    ? key.slice(WEBHOOK_KEY_PREFIX.secret.length)
    : '';
  // Padded base64 only: atob would also take a secret cut short, and sign with what is left.
  if (!prefixed || (body !== '' && body.length % 4 !== 0) || key === WEBHOOK_KEY_PREFIX.secret)
    throw new InvalidOptionError(option, hidden, ALLOWED);
  try {
    parseWebhookKey(key);
  } catch {
    throw new InvalidOptionError(option, hidden, ALLOWED);
  }
  return key;
}
