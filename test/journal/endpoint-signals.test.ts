import { test } from 'node:test';
import assert from 'node:assert/strict';
import { observeAnswers, SLOW_FOR_MS } from '#oncely/journal/endpoint-signals.js';
import { slotSpacingMs } from '#oncely/journal/endpoint-gate.js';
import { prepareEndpoint } from '#oncely/journal/endpoint-input.js';

const NOW = 1_700_000_000_000;
const answer = (status: number | null, headers: { retryAfter?: string; hint?: string } = {}) => ({
  status,
  retryAfter: headers.retryAfter ?? null,
  date: null,
  hint: headers.hint ?? null,
});

test('429, 502 and 504 halve the rate for a while; 500 and 503 do not', () => {
  const endpoint = prepareEndpoint({ id: 'a', url: 'http://x.test/', ratePerSecond: 50 }, NOW);
  assert.equal(slotSpacingMs(endpoint, NOW), 20);
  for (const status of [429, 502, 504]) {
    const [slowed] = observeAnswers(endpoint, NOW, [answer(status)]);
    assert.equal(slowed.health.slowUntil, NOW + SLOW_FOR_MS, String(status));
    assert.equal(slotSpacingMs(slowed, NOW), 40);
    assert.equal(slotSpacingMs(slowed, NOW + SLOW_FOR_MS), 20, 'back to the full rate after');
  }
  for (const status of [500, 503]) {
    const [same] = observeAnswers(endpoint, NOW, [answer(status)]);
    assert.equal(same.health.slowUntil, 0, String(status));
  }
});

test('Retry-After holds the endpoint; 410 and webhook-delivery: disable disable it, once', () => {
  const endpoint = prepareEndpoint({ id: 'a', url: 'http://x.test/' }, NOW);
  const [held] = observeAnswers(endpoint, NOW, [answer(503, { retryAfter: '120' })]);
  assert.equal(held.health.deferredUntil, NOW + 120_000);
  const [gone, why] = observeAnswers(endpoint, NOW, [answer(410)]);
  assert.deepEqual([gone.state, why], ['disabled', 'the receiver answered 410 Gone']);
  const [, again] = observeAnswers(gone, NOW, [answer(410)]);
  assert.equal(again, null, 'already disabled: no second notice');
  const [asked] = observeAnswers(endpoint, NOW, [answer(200, { hint: 'disable' })]);
  assert.equal(asked.state, 'disabled');
});
