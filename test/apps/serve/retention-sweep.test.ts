// The background retention purge of `oncely serve`, on a manual VirtualClock: time moves only by
// `advance`, so a 60 s interval takes no real time at all.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isInvalidOptionError, isOncelyError, type OncelyError } from '#oncely/contract/errors.js';
import { createCallers } from '#cli/serve/callers.js';
import { startRetentionSweep } from '#cli/serve/retention-sweep.js';
import { startServer } from '#cli/serve/start-server.js';
import { VirtualClock } from '#oncely/time/virtual-clock.js';
import { bearer, send, startTestServer, submissionHeaders, TOKENS } from './server-harness.js';

const START_AT = Date.UTC(2026, 8, 14, 12, 0, 0);
const manualClock = (): VirtualClock => new VirtualClock({ startAt: START_AT, autoAdvance: false });

/** A ledger whose purges are counted, and fail while `failing` is set. */
function fakeLedger() {
  const purgedAt: number[] = [];
  const fake = {
    failing: false,
    purgedAt,
    clock: undefined as VirtualClock | undefined,
    async purgeExpired() {
      purgedAt.push(fake.clock!.now());
      if (fake.failing) throw new Error('disk I/O error');
      return { tombstoned: 0, deleted: 0 };
    },
  };
  return fake;
}

test('purges once per interval, carries on after a failed purge, and stops on stop()', async () => {
  const clock = manualClock();
  const ledger = fakeLedger();
  ledger.clock = clock;
  const errors: OncelyError[] = [];
  const sweep = startRetentionSweep({
    ledger,
    clock,
    intervalMs: 60_000,
    onError: (error) => errors.push(error),
  });

  await clock.advance(59_999);
  assert.deepEqual(ledger.purgedAt, [], 'nothing before the first interval');
  await clock.advance(1);
  assert.deepEqual(ledger.purgedAt, [START_AT + 60_000]);

  ledger.failing = true;
  await clock.advance(60_000);
  assert.equal(errors.length, 1);
  assert.equal(errors[0]!.code, 'purge_failed');
  assert.match(errors[0]!.message, /^retention purge failed: disk I\/O error$/);
  assert.ok(isOncelyError(errors[0]) && errors[0].cause instanceof Error);

  ledger.failing = false;
  await clock.advance(60_000);
  assert.deepEqual(
    ledger.purgedAt,
    [START_AT + 60_000, START_AT + 120_000, START_AT + 180_000],
    'a failure is never fatal',
  );

  await sweep.stop();
  assert.equal(clock.pendingCount, 0, 'the pause is cancelled');
  await clock.advance(600_000);
  assert.equal(ledger.purgedAt.length, 3, 'no purge after stop');
  await sweep.stop(); // idempotent
});

test('stop() waits for a purge under way, so the store is never closed under it', async () => {
  const clock = manualClock();
  let finish!: () => void;
  let purges = 0;
  const ledger = {
    purgeExpired: () => {
      purges++;
      return new Promise<{ tombstoned: number; deleted: number }>(
        (resolve) => (finish = () => resolve({ tombstoned: 1, deleted: 0 })),
      );
    },
  };
  const sweep = startRetentionSweep({ ledger, clock, intervalMs: 1000 });
  await clock.advance(1000);
  assert.equal(purges, 1);
  let stopped = false;
  const stopping = sweep.stop().then(() => (stopped = true));
  await clock.advance(0);
  assert.equal(stopped, false, 'still purging');
  finish();
  await stopping;
  assert.equal(stopped, true);
  assert.equal(clock.pendingCount, 0);
});

test('an error handler that throws does not end the sweep', async () => {
  const clock = manualClock();
  const ledger = fakeLedger();
  ledger.clock = clock;
  ledger.failing = true;
  const sweep = startRetentionSweep({
    ledger,
    clock,
    intervalMs: 10,
    onError: () => {
      throw new Error('logger down');
    },
  });
  await clock.advance(30);
  assert.equal(ledger.purgedAt.length, 3);
  await sweep.stop();
});

test('oncely serve purges expired receipts in the background, and close() stops the sweep', async () => {
  const clock = manualClock();
  const t = await startTestServer({
    clock,
    ledgerTuning: { retentionMs: 30_000 },
    purgeIntervalMs: 60_000,
  });
  try {
    const submitted = await send(t.port, {
      method: 'POST',
      path: '/dropbox/submissions',
      headers: submissionHeaders(TOKENS.alice, 'sweep-key'),
      body: '{"student":"achen","assignment":"lab3"}',
    });
    assert.equal(submitted.status, 201, submitted.text);
    const states = async () =>
      (
        await send(t.port, {
          path: '/ledger/receipts',
          headers: { authorization: bearer(TOKENS.alice) },
        })
      )
        .json<{ receipts: Array<{ key: string; state: string }> }>()
        .receipts.map((r) => [r.key, r.state]);
    assert.deepEqual(await states(), [['sweep-key', 'completed']]);

    await clock.advance(59_999);
    assert.deepEqual(
      await states(),
      [['sweep-key', 'completed']],
      'past retention, but no lookup and no sweep yet',
    );
    await clock.advance(1);
    assert.deepEqual(
      await states(),
      [['sweep-key', 'expired']],
      'the sweep tombstoned it, with nobody asking',
    );
    const listing = (
      await send(t.port, {
        path: '/ledger/receipts',
        headers: { authorization: bearer(TOKENS.alice) },
      })
    ).json<{ sweep: Record<string, unknown> }>();
    assert.deepEqual(
      {
        running: listing.sweep['running'],
        rowsLeft: listing.sweep['rowsLeft'],
        tombstoned: listing.sweep['tombstoned'],
        batches: listing.sweep['batches'],
      },
      { running: false, rowsLeft: 0, tombstoned: 1, batches: 1 },
      'the store view is told what the sweep did',
    );
  } finally {
    await t.close();
  }
  assert.equal(clock.pendingCount, 0, 'close() stopped the sweep');
});

test('purgeIntervalMs: a whole number of ms >= 1, or null for no sweep', async () => {
  const callers = createCallers({ devToken: TOKENS.dev });
  for (const purgeIntervalMs of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
    await assert.rejects(
      startServer({ port: 0, dataDir: '/nonexistent/never-created', callers, purgeIntervalMs }),
      (error) => isInvalidOptionError(error) && error.option === 'purgeIntervalMs',
      String(purgeIntervalMs),
    );
  }
  const clock = manualClock();
  const t = await startTestServer({ clock, purgeIntervalMs: null });
  try {
    assert.equal(clock.pendingCount, 0, 'no sweep waiting');
  } finally {
    await t.close();
  }
});
