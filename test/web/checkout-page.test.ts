import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CHECKOUT_RECORDING } from '../../packages/cli/web/src/checkout-recording.js';
import { startTestServer } from '../apps/serve/server-harness.js';
import { browserSession } from './browser-env.js';

/**
 * The page's checkout lab in headless Chromium: a table per handler whose cells are the
 * recorded run's (test/apps/lab/checkout-lab.test.ts keeps the recording equal to a live run),
 * and the contrast: the naive handler charged every order twice, the stepped one once.
 */
const session = browserSession('the checkout panel test', {
  startServer: () => startTestServer(),
  watch: ['error', 'warning'],
});
const { skip } = session;

test('checkout panel: naive and stepped tables from the recording, and the contrast', {
  skip,
}, async () => {
  const { page, server } = session;
  await page.goto(`${server.url}/`);
  await page.waitForSelector('#checkout-runs [data-handler="stepped"] tbody tr');
  const cells = (handler: string) =>
    page.$$eval(`#checkout-runs [data-handler="${handler}"] tr[data-order]`, (trs) =>
      trs.map((tr) => ({
        order: tr.getAttribute('data-order'),
        charges: tr.querySelector('[data-metric="charges"]')?.textContent,
        chargeCalls: tr.querySelector('[data-metric="chargeCalls"]')?.textContent,
        orders: tr.querySelector('[data-metric="orders"]')?.textContent,
        emails: tr.querySelector('[data-metric="emails"]')?.textContent,
        retries: tr.querySelector('[data-metric="retries"]')?.textContent,
      })),
    );
  for (const run of CHECKOUT_RECORDING.runs) {
    const rows = await cells(run.handler);
    assert.deepEqual(
      rows.slice(0, -1),
      run.orders.map((o) => ({
        order: o.order,
        charges: String(o.charges),
        chargeCalls: String(o.chargeCalls),
        orders: String(o.orders),
        emails: String(o.emails),
        retries: String(o.attempts - 1),
      })),
    );
  }
  const totals = async (handler: string) => (await cells(handler)).at(-1);
  assert.deepEqual(await totals('naive'), {
    order: 'total',
    charges: '6',
    chargeCalls: '6',
    orders: '3',
    emails: '3',
    retries: '3',
  });
  assert.equal((await totals('stepped'))?.charges, '3');
  const verdicts = await page.$$eval('.checkout-verdict', (ps) => ps.map((p) => p.textContent));
  assert.deepEqual(verdicts, [
    '6 charges for 3 orders: 3 cards charged more than once.',
    '3 charges for 3 orders: one each.',
  ]);
  assert.equal(
    await page.textContent('#checkout-command'),
    `npx oncely lab checkout --seed ${CHECKOUT_RECORDING.seed}`,
  );
  assert.equal(await page.locator('#checkout-plan li').count(), 3);
});
