import type { Command } from 'commander';
import { generateWebhookKeyPair, generateWebhookSecret } from 'oncely';
import type { CliIo } from '../cli-io.js';

/**
 * `oncely outbox keygen`: a fresh Standard Webhooks key on stdout, one per line and nothing else,
 * so it can be captured (`export SIGNING=$(npx oncely outbox keygen)`). Random from node:crypto.
 */
export function registerKeygen(outbox: Command, io: CliIo): void {
  outbox
    .command('keygen')
    .description(
      'print a new Standard Webhooks signing key: a whsec_ secret, or a whsk_/whpk_ pair',
    )
    .option(
      '--asymmetric',
      'an ed25519 pair (v1a): the whsk_ secret key signs, the whpk_ public key verifies',
    )
    .addHelpText(
      'after',
      `
Without --asymmetric: one line, a whsec_ secret (v1, HMAC-SHA256) that sender and receiver share.
With --asymmetric: two lines, the whsk_ secret key (the sender's, keep it private) and then the
whpk_ public key (the receivers'). Give the sender its key with --signing-secret-env and the
receiver its own with --webhook-secret-env; a variable may hold several, space-separated, while
a key is rotated (the sender signs with each, the receiver accepts any one).

Examples:
  npx oncely outbox keygen
  npx oncely outbox keygen --asymmetric`,
    )
    .action((flags: { asymmetric?: boolean }) => {
      if (!flags.asymmetric) return io.out(`${generateWebhookSecret()}\n`);
      const { secretKey, publicKey } = generateWebhookKeyPair();
      io.out(`${secretKey}\n${publicKey}\n`);
    });
}
