import { test } from 'node:test';
import assert from 'node:assert/strict';
import { signWebhook, verifyWebhook } from '#oncely/contract/standard-webhooks.js';
import { runOncely } from '../../support/run-cli.js';

test('outbox keygen prints one whsec_ secret; --asymmetric a whsk_ secret key then its whpk_ public key', async () => {
  const symmetric = await runOncely(['outbox', 'keygen']);
  assert.equal(symmetric.status, 0, symmetric.stderr);
  assert.match(symmetric.stdout, /^whsec_[A-Za-z0-9+/]{43}=\n$/);
  const pair = await runOncely(['outbox', 'keygen', '--asymmetric']);
  assert.equal(pair.status, 0, pair.stderr);
  const [secretKey, publicKey, ...rest] = pair.stdout.split('\n');
  assert.match(secretKey!, /^whsk_/);
  assert.match(publicKey!, /^whpk_/);
  assert.deepEqual(rest, ['']);
  const headers = signWebhook(secretKey!, 'evt-1', 1_700_000_000_000, '{}');
  assert.equal(verifyWebhook([publicKey!], new Headers(headers), '{}', 1_700_000_000_000).ok, true);
  const help = await runOncely(['outbox', 'keygen', '--help']);
  assert.match(help.stdout, /--asymmetric/);
  assert.match(help.stdout, /npx oncely outbox keygen --asymmetric/);
});

test('signing and receiving flags take space-separated keys and refuse the wrong kind in one line, naming no key', async () => {
  const publicKey = 'whpk_ZlN4eg7dSSqi0moX9hQUk3orrOouK3QVQSlJa248c/g=';
  const cases: Array<[string[], Record<string, string>, RegExp]> = [
    [
      ['outbox', 'run', '--signing-secret-env', 'SIGNING', '--journal', ':memory:'],
      { SIGNING: `whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw ${publicKey}` },
      /--signing-secret-env: got "SIGNING", expected .*whsec_ or whsk_ keys.*holds a whpk_ public key/,
    ],
    [
      ['outbox', 'run', '--signing-secret-env', 'SIGNING', '--journal', ':memory:'],
      { SIGNING: 'whsk_tooShort' },
      /--signing-secret-env: got "SIGNING", .*one is malformed/,
    ],
    [
      ['hook', '--port', '0', '--webhook-secret-env', 'KEYS'],
      { KEYS: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw whpk_AAAA' },
      /--webhook-secret-env: got "KEYS", .*one is malformed/,
    ],
  ];
  for (const [args, env, pattern] of cases) {
    const result = await runOncely(args, env);
    assert.notEqual(result.status, 0, args.join(' '));
    assert.match(result.stderr, pattern);
    assert.equal(result.stderr.trimEnd().split('\n').length, 1, result.stderr);
    assert.doesNotMatch(result.stderr, /ZlN4eg7d|MfKQ9r8G/);
  }
});
