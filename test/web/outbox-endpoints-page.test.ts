import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startOutboxUi } from '#cli/outbox-ui/outbox-ui-server.js';
import { createJournal, createOutboxWorker } from '#oncely/journal/index.js';
import { createMemoryJournalStore } from '#oncely/stores/memory/index.js';
import { VirtualClock } from '#oncely/time/index.js';
import { axeViolations } from './axe.js';
import { browserSession } from './browser-env.js';

/**
 * The outbox view's endpoints in headless Chromium: the endpoint column and filter, an attempt's
 * response (headers and body) unfolded on the timeline, and pause / resume / disable / enable.
 */
const session = browserSession('the outbox view endpoints test', {
  startServer: async () => {
    const store = createMemoryJournalStore();
    const clock = new VirtualClock({ startAt: Date.parse('2026-12-01T00:00:00Z') });
    const journal = createJournal({ store, clock });
    await journal.endpoints.add({ id: 'shop', url: 'http://shop.test/hooks' });
    await journal.endpoints.add({ id: 'mail', url: 'http://mail.test/hooks' });
    await journal.record({ key: 's1', endpoint: 'shop', body: '{}', maxAttempts: 1 });
    await journal.record({ key: 'm1', endpoint: 'mail', body: '{}', maxAttempts: 1 });
    const fetch = (async () =>
      new Response('{"error":"no such order"}', {
        status: 400,
        headers: { 'x-reason': 'unknown order' },
      })) as typeof globalThis.fetch;
    await createOutboxWorker({ store, clock, fetch }).resume();
    return startOutboxUi({ journal });
  },
  watch: ['error', 'warning'],
});
const { skip } = session;

const rowKeys = (page: Page) =>
  page.$$eval('#intents tr[data-key]', (rows) => rows.map((r) => r.getAttribute('data-key')));
const endpointState = (page: Page, id: string) =>
  page.textContent(`#endpoints tr[data-endpoint="${id}"] td.state`);

test('filters by endpoint, shows a response, pauses and disables an endpoint', {
  skip,
}, async () => {
  const { page, server } = session;
  await page.goto(server.url);
  await page.waitForSelector('#intents tr[data-key]');
  await page.waitForSelector('#endpoints tr[data-endpoint="shop"]');
  assert.deepEqual(await rowKeys(page), ['m1', 's1']);
  assert.equal(await page.textContent('#intents tr[data-key="s1"] td:nth-child(3)'), 'shop');

  await page.selectOption('#endpoint', 'shop');
  await page.click('#filters button[type="submit"]');
  await page.waitForFunction(() => document.querySelectorAll('#intents tr[data-key]').length === 1);
  assert.deepEqual(await rowKeys(page), ['s1']);

  await page.click('#intents tr[data-key="s1"] button');
  await page.waitForSelector('#detail:not([hidden])');
  await page.click('#timeline details summary');
  const response = await page.textContent('#timeline details');
  assert.match(response ?? '', /Response \(25 bytes\)/);
  assert.match(response ?? '', /x-reason: unknown order/);
  assert.match(response ?? '', /\{"error":"no such order"\}/);
  assert.deepEqual(await axeViolations(page), [], 'the endpoints, the column, the response');

  await page.click('#endpoints tr[data-endpoint="shop"] button[data-action="pause"]');
  await page.waitForFunction(() =>
    document
      .querySelector('#endpoints tr[data-endpoint="shop"] td.state')
      ?.textContent?.startsWith('paused'),
  );
  await page.fill('#endpoint-reason', 'receiver migrating');
  await page.click('#endpoints tr[data-endpoint="shop"] button[data-action="disable"]');
  await page.waitForFunction(() =>
    document
      .querySelector('#endpoints tr[data-endpoint="shop"] td.state')
      ?.textContent?.startsWith('disabled'),
  );
  assert.equal(await endpointState(page, 'shop'), 'disabled (receiver migrating)');
  assert.equal(await page.inputValue('#endpoint-reason'), '', 'the reason is sent once');
  assert.equal(
    await page.isVisible('#endpoints tr[data-endpoint="shop"] button[data-action="resume"]'),
    false,
    'a disabled endpoint offers enable, not resume',
  );
  await page.click('#endpoints tr[data-endpoint="shop"] button[data-action="enable"]');
  await page.waitForFunction(
    () =>
      document.querySelector('#endpoints tr[data-endpoint="shop"] td.state')?.textContent ===
      'active',
  );
  assert.equal(await endpointState(page, 'mail'), 'active');
  assert.deepEqual(session.problems, []);
});
