import { test } from 'node:test';
import assert from 'node:assert/strict';
import { signWebhook, signWebhookWith } from '#oncely/contract/standard-webhooks.js';
import { generateWebhookKeyPair, portableEd25519 } from '#oncely/contract/webhook-keys.js';
import { nodeEd25519 } from '#oncely/journal/node-ed25519.js';
import { seededRandom } from '#oncely/time/random.js';

test("the worker's node:crypto ed25519 signs byte for byte as the portable one, the reference vector and 300 random keys included", () => {
  const vector = signWebhookWith(
    nodeEd25519,
    'whsk_VEVTVFNJR05JTkdLRVlET05PVFVTRVRISVNGT1JBTlk=',
    'msg_p5jXN8AQM9LWM0D4loKWxJek',
    1614265330_000,
    '{"test": 2432232314}',
  );
  assert.equal(
    vector['webhook-signature'],
    'v1a,tQ9V2XOqn7jL/DQenEFpqIugdBVtiMmER5mhSkXBNwM0mkATuDe6KYYUuxqtaiHeYGb7KaaBRdM5WqyeFiL8Ag==',
  );
  const random = seededRandom(7);
  // More keys than the worker keeps parsed, so some are dropped and parsed again.
  for (let i = 0; i < 300; i++) {
    const seed = Uint8Array.from({ length: 32 }, () => random.int(0, 255));
    const message = Uint8Array.from({ length: random.int(0, 300) }, () => random.int(0, 255));
    assert.deepEqual(
      Buffer.from(nodeEd25519.sign(seed, message)),
      Buffer.from(portableEd25519.sign(seed, message)),
      `case ${i}`,
    );
  }
  const { secretKey } = generateWebhookKeyPair();
  const secrets = ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', secretKey];
  assert.deepEqual(
    signWebhookWith(nodeEd25519, secrets, 'evt-1', 1_700_000_000_000, '{}'),
    signWebhook(secrets, 'evt-1', 1_700_000_000_000, '{}'),
  );
});
