import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startOutboxUi } from '#cli/outbox-ui/outbox-ui-server.js';
import { createJournal } from '#oncely/journal/index.js';
import { createMemoryJournalStore } from '#oncely/stores/memory/index.js';
import { VirtualClock } from '#oncely/time/index.js';
import { seedDeadLetters } from '../journal/dead-letter-seed.js';
import { axeViolations } from './axe.js';
import { browserSession } from './browser-env.js';

/**
 * The outbox view in headless Chromium over a seeded journal (one intent in each state): the
 * dead letters listed, a timeline opened, one replayed after the confirmation and seen pending,
 * and axe-core finding nothing on the page as it is then.
 */
const session = browserSession('the outbox view test', {
  startServer: async () => {
    const store = createMemoryJournalStore();
    const clock = new VirtualClock({ startAt: Date.parse('2026-12-01T00:00:00Z') });
    await seedDeadLetters(store, clock);
    return startOutboxUi({ journal: createJournal({ store, clock }) });
  },
  watch: ['error', 'warning'],
});
const { skip } = session;

const rowKeys = (page: Page) =>
  page.$$eval('#intents tr[data-key]', (rows) => rows.map((r) => r.getAttribute('data-key')));

test('lists the dead letters, opens a timeline, replays one and sees it pending; axe finds nothing', {
  skip,
}, async () => {
  const { page, server } = session;
  await page.goto(server.url);
  await page.waitForSelector('#intents tr[data-key]');
  assert.equal(new URL(page.url()).hash, '', 'the token leaves the address bar');
  assert.deepEqual(await rowKeys(page), ['u1', 'g1', 'r1'], 'refused, gave_up, unknown by default');

  await page.click('#intents tr[data-key="g1"] button');
  await page.waitForSelector('#detail:not([hidden])');
  assert.equal(await page.textContent('#detail-heading'), 'Intent g1');
  const timeline = await page.$$eval('#timeline li', (items) => items.map((li) => li.textContent));
  assert.equal(timeline.length, 1);
  assert.match(timeline[0]!, /#1 2026-12-01 00:00:01\.\d{3} · \d+ ms · retry, status 503/);
  assert.deepEqual(await axeViolations(page), []);

  await page.click('#replay');
  await page.waitForSelector('#confirm[open]');
  assert.match((await page.textContent('#confirm-text')) ?? '', /Replay g1 \(gave_up\)/);
  assert.equal(await page.isHidden('#confirm-unknown'), true, 'g1 never lost an answer');
  await page.click('#confirm-yes');
  await page.waitForFunction(() =>
    (document.querySelector('#replay-result')?.textContent ?? '').startsWith('Reopened g1'),
  );
  await page.waitForFunction(() => document.querySelector('#facts dd')?.textContent === 'pending');
  await page.waitForFunction(() => !document.querySelector('#intents tr[data-key="g1"]'));
  assert.deepEqual(await rowKeys(page), ['u1', 'r1'], 'no longer a dead letter');

  await page.check('#state-pending');
  await page.click('#filters button[type="submit"]');
  await page.waitForSelector('#intents tr[data-key="g1"]');
  assert.equal(await page.textContent('#intents tr[data-key="g1"] td.state'), 'pending');

  await page.click('#intents tr[data-key="u1"] button');
  await page.waitForFunction(
    () => document.querySelector('#detail-heading')?.textContent === 'Intent u1',
  );
  await page.click('#replay');
  await page.waitForSelector('#confirm[open]');
  assert.equal(await page.isVisible('#confirm-unknown'), true, 'the unknown warning is shown');
  assert.deepEqual(await axeViolations(page), [], 'the dialog too');
  await page.click('#confirm-no');
  assert.equal(await page.textContent('#facts dd'), 'unknown', 'kept as it was');
  assert.deepEqual(session.problems, []);

  // The check can fail: an image without a text alternative is found.
  await page.evaluate(() => document.querySelector('main')?.append(document.createElement('img')));
  assert.match((await axeViolations(page)).join('\n'), /^image-alt: /m);
});
