import { WEBHOOK_HEADER, signWebhook } from '../contract/standard-webhooks.js';

/**
 * Standard Webhooks headers signed by each secret: one `webhook-signature` header with every
 * signature, space-separated, so a receiver holding any one of them verifies (a rotation's
 * overlap). Kept apart so it can fold into the contract's own signing once that takes a list.
 */
export function signWithSecrets(
  secrets: readonly string[],
  id: string,
  nowMs: number,
  body: string,
): Record<string, string> {
  const signed = secrets.map((secret) => signWebhook(secret, id, nowMs, body));
  return {
    ...signed[0],
    [WEBHOOK_HEADER.signature]: signed.map((h) => h[WEBHOOK_HEADER.signature]).join(' '),
  };
}
