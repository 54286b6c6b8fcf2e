import { checkSigningKey, InvalidOptionError, webhookKeyKind, type WebhookKeyKind } from 'oncely';
import { secretFromEnv } from './journal-options.js';

/**
 * `--signing-secret-env VAR`: the keys the outbox signs with, from one environment variable,
 * space-separated (several during a rotation: one signature each). `whsec_` secrets sign `v1`,
 * `whsk_` secret keys sign `v1a`; a `whpk_` public key cannot sign.
 */
export function signingKeysFromEnv(
  option: string,
  variable: string,
  env: NodeJS.ProcessEnv,
): string[] {
  const keys = keysFromEnv(
    option,
    variable,
    env,
    ['v1-secret', 'v1a-secret-key'],
    'whsec_ or whsk_',
  );
  // A sender's keys are checked as the library checks every signing key: `hello` would pass the
  // receiver's lenient form (bare base64) and sign as a raw key that no receiver holds.
  for (const key of keys) checkSigningKey(`${option} ${variable}`, key);
  return keys;
}

/**
 * `--webhook-secret-env VAR`: the keys a receiver checks signatures with, space-separated; any
 * one matching passes. `whsec_` secrets check `v1`, `whpk_` public keys (or `whsk_`) check `v1a`.
 */
export function verifyingKeysFromEnv(
  option: string,
  variable: string,
  env: NodeJS.ProcessEnv,
): string[] {
  return keysFromEnv(
    option,
    variable,
    env,
    ['v1-secret', 'v1a-public-key', 'v1a-secret-key'],
    'whsec_ or whpk_',
  );
}

const KIND_NAMES: Record<WebhookKeyKind, string> = {
  'v1-secret': 'a whsec_ secret',
  'v1a-secret-key': 'a whsk_ secret key',
  'v1a-public-key': 'a whpk_ public key',
};

function keysFromEnv(
  option: string,
  variable: string,
  env: NodeJS.ProcessEnv,
  kinds: readonly WebhookKeyKind[],
  expected: string,
): string[] {
  const keys = secretFromEnv(option, variable, env)
    .split(/[\s,]+/)
    .filter(Boolean);
  const allowed = `an environment variable holding ${expected} keys, space-separated`;
  if (keys.length === 0) throw new InvalidOptionError(option, variable, allowed);
  for (const key of keys) {
    let kind: WebhookKeyKind;
    try {
      kind = webhookKeyKind(key);
    } catch {
      throw new InvalidOptionError(option, variable, `${allowed} (one is malformed)`);
    }
    if (!kinds.includes(kind))
      throw new InvalidOptionError(option, variable, `${allowed} (it holds ${KIND_NAMES[kind]})`);
  }
  return keys;
}
