import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runHookLab } from '#cli/lab/hook-lab.js';
import { formatHookLab } from '#cli/lab/hook-lab-report.js';
import { NAIVE_CLIENT } from '#cli/lab/hook-naive-client.js';

test('lab hook: the three scenarios, with arrivals and completions for both clients', async () => {
  const results = await runHookLab();
  const by = Object.fromEntries(results.map((r) => [r.name, r]));
  assert.deepEqual(
    results.map((r) => r.name),
    ['throttle', 'fatal', 'swallow'],
  );

  // Throttle window: the naive client hammers every 50 ms until the window ends; oncely waits as told.
  const throttle = by['throttle']!;
  assert.equal(throttle.naive.counts.arrivals, 21);
  assert.equal(throttle.naive.counts.completions, 1);
  assert.equal(throttle.oncely.counts.arrivals, 2);
  assert.equal(throttle.oncely.counts.completions, 1);
  const [first, second] = throttle.oncely.hits;
  assert.ok(second!.at - first!.at >= 1000, 'oncely came back no earlier than Retry-After');
  assert.ok(throttle.naive.hits.every((h) => h.key === null));
  assert.equal(
    new Set(throttle.naive.hits.map((h) => h.bodySha256)).size,
    21,
    'a fresh timestamp in every naive body',
  );

  // Fatal 400: the naive client retries it to its cap; oncely sends once.
  const fatal = by['fatal']!;
  assert.equal(fatal.naive.counts.arrivals, NAIVE_CLIENT.maxAttempts);
  assert.equal(fatal.oncely.counts.arrivals, 1);
  assert.equal(fatal.oncely.report.stopReason, 'fatal_status');

  // Swallowed ack: two completions without a key; one completion and one replay with one.
  const swallow = by['swallow']!;
  assert.deepEqual(swallow.naive.counts, { arrivals: 2, completions: 2, replays: 0 });
  assert.deepEqual(swallow.oncely.counts, { arrivals: 2, completions: 1, replays: 1 });
  assert.equal(swallow.naive.result.delivered, true, 'the naive client calls it delivered');

  const text = formatHookLab(results);
  for (const title of ['1. a throttle window', '2. a fatal 400', '3. a swallowed ack'])
    assert.ok(text.includes(title), title);
  assert.match(text, /arrivals 21, completions 1\s+\| arrivals 2, completions 1\n/);
  assert.match(text, /arrivals 2, completions 2\s+\| arrivals 2, completions 1, replays 1\n/);
  assert.match(text, /a swallowed ack\s+2 \/ 2\s+2 \/ 1 \/ 1/);

  // Virtual time and a seeded jitter: the printout is the same on every run.
  assert.equal(formatHookLab(await runHookLab()), text);
});

test('lab hook: --only runs a subset', async () => {
  const results = await runHookLab({ only: ['fatal'] });
  assert.deepEqual(
    results.map((r) => r.name),
    ['fatal'],
  );
});
