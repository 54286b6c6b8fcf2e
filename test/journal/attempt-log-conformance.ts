import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ATTEMPT_BODY_BYTES, createJournal, createOutboxWorker } from '#oncely/journal/index.js';
import { VirtualClock, seededRandom } from '#oncely/time/index.js';
import type { JournalFixture } from './journal-conformance.js';

const TARGET = 'http://receiver.test/hooks';

/** 10 000 bytes that are no UTF-8 text: every byte value, NUL and 0xff included. */
const BINARY = Uint8Array.from({ length: 10_000 }, (_, i) => (i * 7) % 256);

/**
 * The attempt log (docs/outbox.md, "Attempt log"): each attempt keeps its status, the response's
 * headers, the first 4 KiB of its body byte for byte with a truncated flag, its duration and its
 * error, on every backend, read back as written.
 */
export function runAttemptLogConformance<Tx>(
  name: string,
  open: () => Promise<JournalFixture<Tx>>,
  options: { skip?: string } = {},
): void {
  describe(`attempt log (${name})`, options, () => {
    it('keeps headers, a bounded binary body, the duration and the error of each attempt', async () => {
      const { store, close } = await open();
      const clock = new VirtualClock({ startAt: 1_700_000_000_000 });
      try {
        const journal = createJournal({ store, clock });
        await journal.record({ key: 'log1', target: TARGET, body: '{}', maxAttempts: 5 });
        const answers = [
          () =>
            new Response(BINARY, {
              status: 503,
              headers: { 'x-reason': 'busy', 'content-type': 'application/octet-stream' },
            }),
          () => {
            throw Object.assign(new TypeError('fetch failed'), {
              cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
            });
          },
          () => new Response('{"ok":true}', { status: 200, headers: { 'x-receipt': 'r1' } }),
        ];
        let call = 0;
        const fetch = (async () => {
          await clock.advance(250); // the receiver takes 250 ms to answer
          return answers[call++]!();
        }) as typeof globalThis.fetch;
        await createOutboxWorker({ store, clock, fetch, random: seededRandom(1) }).resume();
        const [busy, reset, ok] = await store.attempts('log1');
        assert.equal(busy!.status, 503);
        assert.equal(busy!.response!.headers['x-reason'], 'busy');
        assert.equal(busy!.response!.body.byteLength, ATTEMPT_BODY_BYTES);
        assert.deepEqual(busy!.response!.body, BINARY.slice(0, ATTEMPT_BODY_BYTES));
        assert.equal(busy!.response!.truncated, true);
        assert.equal(busy!.durationMs, 250);
        assert.equal(reset!.response, null, 'no response: nothing kept');
        assert.match(reset!.detail ?? '', /ECONNRESET|socket hang up/);
        assert.equal(reset!.durationMs, 250);
        assert.equal(new TextDecoder().decode(ok!.response!.body), '{"ok":true}');
        assert.equal(ok!.response!.headers['x-receipt'], 'r1');
        assert.equal(ok!.response!.truncated, false);
        assert.equal((await journal.get('log1'))?.state, 'delivered');
      } finally {
        await close();
      }
    });
  });
}
