import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkSigningKey } from '#oncely/contract/signing-key.js';
import { generateWebhookKeyPair, generateWebhookSecret } from '#oncely/contract/webhook-keys.js';
import { createOutboxWorker } from '#oncely/journal/index.js';
import { createMemoryJournalStore } from '#oncely/stores/memory/index.js';
import { isInvalidOptionError } from '#oncely/contract/errors.js';

const SPEC_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

test('a signing key is a whsec_ secret in padded base64 or a whsk_ secret key', () => {
  const { secretKey } = generateWebhookKeyPair();
  for (const key of [SPEC_SECRET, generateWebhookSecret(), secretKey])
    assert.equal(checkSigningKey('signingSecret', key), key);
});

// Before: `BADSIG=hello outbox run --signing-secret-env BADSIG` signed with "hello" as a raw key
// (a receiver's lenient check takes bare base64), so no receiver with a real secret would match.
test('anything else is refused, naming the option and never the key', () => {
  const { publicKey } = generateWebhookKeyPair();
  for (const key of [
    'hello',
    'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    'whsec_',
    'whsec_abc',
    'whsec_not base64!',
    'whsk_c2hvcnQ=',
    publicKey,
    '',
  ])
    assert.throws(
      () => checkSigningKey('--signing-secret-env BADSIG', key),
      (error: unknown) => {
        assert.ok(isInvalidOptionError(error));
        assert.match(error.message, /^invalid option --signing-secret-env BADSIG: /);
        if (key.length > 6) assert.ok(!error.message.includes(key), error.message);
        return true;
      },
      key,
    );
});

test('the worker refuses a malformed signing secret where its options enter', () => {
  const store = createMemoryJournalStore();
  assert.throws(() => createOutboxWorker({ store, signingSecret: 'hello' }), /signingSecret/);
  assert.throws(
    () => createOutboxWorker({ store, signingSecret: [SPEC_SECRET, 'hello'] }),
    /signingSecret/,
  );
});
