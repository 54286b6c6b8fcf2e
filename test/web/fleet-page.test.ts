import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fleetCells, runCell, summarizeFleet } from '#cli/sim/index.js';
import { startTestServer } from '../apps/serve/server-harness.js';
import { browserSession } from './browser-env.js';

/**
 * The page's fleet section in headless Chromium: the URL sets the model, seeds, strategies and
 * client counts; a run draws the chart and a table whose numbers equal runCell's for the same cells.
 */
const session = browserSession('the fleet section test', {
  startServer: () => startTestServer(),
  watch: ['error', 'warning'],
});
const { skip } = session;

test('fleet section: contention from the URL, table equals runCell, chart drawn, URL kept', {
  skip,
}, async () => {
  const { page, server } = session;
  await page.goto(
    `${server.url}/?fleet=contention&fleetSeeds=2&fleetStrategies=none,full&fleetClients=10,30`,
  );
  await page.waitForSelector('#run-fleet');
  assert.equal(await page.inputValue('#fleet-model'), 'contention');
  assert.equal(await page.inputValue('#fleet-seeds'), '2');
  await page.click('#run-fleet');
  await page.waitForSelector('#fleet-table tbody tr');
  await page.waitForFunction(() =>
    (document.querySelector('#fleet-status')?.textContent ?? '').startsWith('Done'),
  );
  const rows = await page.$$eval('#fleet-table tbody tr', (trs) =>
    trs.map((tr) => ({
      strategy: tr.getAttribute('data-strategy'),
      x: Number(tr.getAttribute('data-x')),
      writes: Number(tr.querySelector('[data-metric="writes"]')?.textContent),
    })),
  );
  const cells = fleetCells('contention', { clients: [10, 30] }).filter(
    (c) => c.strategy === 'none' || c.strategy === 'full',
  );
  const expected = summarizeFleet(
    'contention',
    cells.map((c) => runCell(c, 2)),
  ).rows.map((r) => ({ strategy: r.strategy, x: r.x, writes: Math.round(r.values['writes']!) }));
  assert.deepEqual(rows, expected);
  assert.ok(
    await page.$eval('#fleet-chart', (canvas) => (canvas as HTMLCanvasElement).width > 0),
    'the chart is drawn',
  );
  assert.match(page.url(), /fleet=contention/);
  assert.match(page.url(), /fleetSeeds=2/);
  assert.ok((await page.$$('#fleet-claims [data-claim]')).length > 0, 'claims are listed');
});
