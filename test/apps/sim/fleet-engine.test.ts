import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import fc from 'fast-check';
import { decide, INITIAL_RETRY_STATE } from '#oncely/policy/index.js';
import { RetryTokenBucket } from '#oncely/policy/retry-token-bucket.js';
import { seededRandom } from '#oncely/time/random.js';
import {
  EventQueue,
  ONCELY_FLEET_POLICY,
  clientStrategy,
  runContention,
  type ContentionEvent,
  type ContentionStrategy,
} from '#cli/sim/index.js';
import { repoPath } from '../../support/repo-path.js';

test('the event queue pops in time order, ties in the order they were pushed', () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 200 }), (times) => {
      const queue = new EventQueue();
      times.forEach((at, i) => queue.push(at, 0, i));
      const popped: { at: number; actor: number }[] = [];
      while (queue.pop() >= 0) popped.push({ at: queue.now, actor: queue.actor });
      const expected = times
        .map((at, actor) => ({ at, actor }))
        .sort((a, b) => a.at - b.at || a.actor - b.actor);
      assert.deepEqual(popped, expected);
    }),
    { numRuns: 100 },
  );
});

test('an event is never scheduled before now', () => {
  const queue = new EventQueue();
  queue.push(10, 1, 0);
  queue.pop();
  queue.push(3, 2, 0);
  assert.equal(queue.pop(), 2);
  assert.equal(queue.now, 10);
});

test('contention: every client updates the row exactly once, in version order, whatever the strategy', () => {
  for (const strategy of ['none', 'exponential', 'equal', 'full', 'decorrelated'] as const) {
    for (let seed = 0; seed < 5; seed++) {
      const trace: ContentionEvent[] = [];
      const outcome = runContention({ clients: 12, seed }, strategy, trace);
      const written = trace.filter((e) => e.kind === 'written');
      assert.deepEqual(
        written.map((e) => e.value),
        [...Array(12).keys()],
        'versions 0 … 11 written once each, in order',
      );
      assert.equal(new Set(written.map((e) => e.client)).size, 12);
      const stale = trace.filter((e) => e.kind === 'stale').length;
      assert.equal(outcome.writes, 12 + stale, 'every write call is a success or a stale write');
      assert.equal(
        trace.filter((e) => e.kind === 'backoff').length,
        stale,
        'a stale write is followed by one backoff',
      );
      assert.ok(
        trace.every((e, i) => i === 0 || e.atMs >= trace[i - 1]!.atMs),
        'events in time order',
      );
    }
  }
});

test("contention: each backoff is the policy's own formula (base 5 ms, cap 2 s)", () => {
  const check: Record<
    ContentionStrategy,
    (delay: number, retry: number, previous: number) => boolean
  > = {
    none: (d) => d === 0,
    exponential: (d, n) => d === Math.min(2000, 5 * 2 ** (n - 1)),
    full: (d, n) => d >= 0 && d <= Math.min(2000, 5 * 2 ** (n - 1)),
    equal: (d, n) =>
      d >= Math.min(2000, 5 * 2 ** (n - 1)) / 2 - 1 && d <= Math.min(2000, 5 * 2 ** (n - 1)),
    decorrelated: (d, _n, previous) => d >= 5 && d <= Math.min(2000, 3 * (previous || 5)),
  };
  for (const strategy of Object.keys(check) as ContentionStrategy[]) {
    const trace: ContentionEvent[] = [];
    runContention({ clients: 30, seed: 3 }, strategy, trace);
    const retries = new Map<number, number>();
    const previous = new Map<number, number>();
    for (const e of trace.filter((x) => x.kind === 'backoff')) {
      const n = (retries.get(e.client) ?? 0) + 1;
      assert.ok(
        check[strategy](e.value, n, previous.get(e.client) ?? 0),
        `${strategy}: retry ${n} waited ${e.value}`,
      );
      retries.set(e.client, n);
      previous.set(e.client, e.value);
    }
  }
});

test("the fleet's oncely clients decide with decide() itself: same draws, same delays and stops", () => {
  const strategy = clientStrategy('oncely', seededRandom(9, 1));
  const replay = seededRandom(9, 1);
  const bucket = new RetryTokenBucket();
  let state = INITIAL_RETRY_STATE;
  const request = { attempts: 1, retry: INITIAL_RETRY_STATE, lastRetryCost: 0 };
  for (let attempt = 1; attempt <= 3; attempt++) {
    const timedOut = attempt === 2;
    const delay = strategy.failed(request, timedOut, 1000 * attempt);
    const observation = timedOut
      ? ({ kind: 'unknown', status: 408, detail: 'client timeout' } as const)
      : ({ kind: 'response', status: 503 } as const);
    const [decision, next] = decide(
      state,
      observation,
      1000 * attempt,
      replay,
      ONCELY_FLEET_POLICY,
      { retryTokens: bucket },
    );
    state = next;
    if (decision.action === 'retry') {
      bucket.tryAcquire(decision.retryCost);
      assert.equal(delay, decision.delayMs, `attempt ${attempt}`);
      request.attempts++;
    } else {
      assert.equal(delay, -1, `attempt ${attempt} stops (${decision.reason})`);
    }
  }
  assert.equal(request.attempts, 3, "oncely's default budget: 3 attempts");
});

// Regenerate after a deliberate change of the model: ONCELY_UPDATE_GOLDEN=1 node --test dist/test/apps/sim/fleet-engine.test.js
test('golden traces: contention, 6 clients, seeds 1-3, full and decorrelated jitter', () => {
  const path = repoPath('test', 'apps', 'sim', 'golden', 'fleet-contention.json');
  const lines: string[] = [];
  for (const strategy of ['full', 'decorrelated'] as const) {
    for (const seed of [1, 2, 3]) {
      const trace: ContentionEvent[] = [];
      const outcome = runContention({ clients: 6, seed }, strategy, trace);
      lines.push(
        JSON.stringify({
          strategy,
          seed,
          ...outcome,
          finishMs: Number(outcome.finishMs.toFixed(6)),
        }),
      );
      for (const e of trace)
        lines.push(`  ${JSON.stringify({ ...e, atMs: Number(e.atMs.toFixed(6)) })}`);
    }
  }
  const text = `${lines.join('\n')}\n`;
  if (process.env['ONCELY_UPDATE_GOLDEN'] === '1') writeFileSync(path, text);
  assert.equal(text, readFileSync(path, 'utf8'), `${path} differs: the model changed`);
});
