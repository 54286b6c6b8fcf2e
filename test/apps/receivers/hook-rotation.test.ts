import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rotateSecrets } from '#oncely/contract/secret-rotation.js';
import { createJournal, createOutboxWorker } from '#oncely/journal/index.js';
import { createMemoryJournalStore } from '#oncely/stores/memory/index.js';
import { VirtualClock } from '#oncely/time/virtual-clock.js';
import { openHookService } from '../../support/open-hook-service.js';

// The old secret is symmetric (v1), the new one an ed25519 pair (v1a): a rotation may change scheme.
const OLD = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const NEW = 'whsk_VEVTVFNJR05JTkdLRVlET05PVFVTRVRISVNGT1JBTlk=';
const NEW_PUBLIC = 'whpk_ZlN4eg7dSSqi0moX9hQUk3orrOouK3QVQSlJa248c/g=';
const START_AT = 1_700_000_000_000;
const OVERLAP_MS = 60 * 60_000;

/**
 * One outbox worker signing with a rotated list, two real hook receivers on their own ledgers:
 * `new.test` knows only the new public key, `old.test` only the old secret. The clock is virtual,
 * so "after the overlap" is one advance, and each attempt is signed at the clock's instant.
 */
async function rotationRig() {
  const clock = new VirtualClock({ startAt: START_AT });
  const knowsNew = await openHookService({ clock, webhookSecrets: [NEW_PUBLIC] });
  const knowsOld = await openHookService({ clock, webhookSecrets: [OLD] });
  const store = createMemoryJournalStore();
  const journal = createJournal({ store, clock });
  const signatures: string[] = [];
  const fetch = (async (url: string | URL | Request, init?: RequestInit) => {
    const request = new Request(url, init);
    signatures.push(request.headers.get('webhook-signature') ?? '');
    const host = new URL(request.url).host;
    return (host === 'new.test' ? knowsNew : knowsOld).handle(request);
  }) as typeof globalThis.fetch;
  const signingSecret = rotateSecrets(
    [{ secret: OLD, expiresAt: null }],
    NEW,
    START_AT,
    OVERLAP_MS,
  );
  const worker = createOutboxWorker({ store, clock, fetch, signingSecret });
  const send = async (key: string, host: string) => {
    await journal.record({
      key,
      target: `http://${host}/hooks/a`,
      body: `{"k":"${key}"}`,
      maxAttempts: 1,
    });
    await worker.resume();
    return (await journal.report(key))!.intent;
  };
  return { clock, knowsNew, knowsOld, signatures, send };
}

test('during the overlap both signatures go out: a receiver knowing only the new key and one knowing only the old secret both accept', async () => {
  const rig = await rotationRig();
  assert.equal((await rig.send('evt-1', 'new.test')).state, 'delivered');
  assert.equal((await rig.send('evt-2', 'old.test')).state, 'delivered');
  assert.ok(
    rig.signatures.every((s) => /^v1a,\S+ v1,\S+$/.test(s)),
    rig.signatures.join('\n'),
  );
  await rig.clock.advance(OVERLAP_MS - 1000);
  assert.equal((await rig.send('evt-3', 'old.test')).state, 'delivered', 'a second before the end');
  assert.deepEqual(await rig.knowsNew.counts(), { arrivals: 1, completions: 1, replays: 0 });
  assert.deepEqual(await rig.knowsOld.counts(), { arrivals: 2, completions: 2, replays: 0 });
});

test('after the overlap only the new signature goes out: the new-key receiver accepts, the old-secret one refuses (401, nothing recorded)', async () => {
  const rig = await rotationRig();
  await rig.clock.advance(OVERLAP_MS);
  assert.equal((await rig.send('evt-4', 'new.test')).state, 'delivered');
  const refused = await rig.send('evt-5', 'old.test');
  assert.notEqual(refused.state, 'delivered');
  assert.equal(refused.outcome?.status, 401);
  assert.ok(
    rig.signatures.every((s) => /^v1a,\S+$/.test(s)),
    rig.signatures.join('\n'),
  );
  assert.deepEqual(await rig.knowsNew.counts(), { arrivals: 1, completions: 1, replays: 0 });
  assert.deepEqual(await rig.knowsOld.counts(), { arrivals: 0, completions: 0, replays: 0 });
});

test('the worker refuses signing with a public key or a list whose every secret expires', async () => {
  const store = createMemoryJournalStore();
  for (const signingSecret of [NEW_PUBLIC, [{ secret: OLD, expiresAt: START_AT }], []])
    assert.throws(
      () => createOutboxWorker({ store, signingSecret }),
      /invalid option signingSecret/,
      JSON.stringify(signingSecret),
    );
});
