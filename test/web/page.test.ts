import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { METRIC_NAMES, RULE_IDS, runBatch, type WorldMetrics } from '#cli/sim/index.js';
import { repoPath, WEB } from '../support/repo-path.js';
import { runOncely } from '../support/run-cli.js';
import { startTestServer } from '../apps/serve/server-harness.js';
import { browserSession } from './browser-env.js';
import { screenshot } from './screenshots.js';

/**
 * The simulator page in headless Chromium, served by the server `oncely serve` runs (in this
 * process): the table equals `oncely sim run --json` (run in this process too), the URL restores an outcome, the timelines draw every effect, the
 * batch in the web worker equals runBatch, no console errors, no overflow at 375 px.
 * Screenshots go to test-output/ when asked for (test/web/screenshots.ts). Timings are printed,
 * never asserted.
 */

// Missing browser: every test skips with the reason, except the session's first one, which fails
// under ONCELY_REQUIRE_BROWSER=1.
const session = browserSession('the page test', {
  startServer: () => startTestServer(),
  watch: ['error', 'warning'],
  prepare: () => {
    assert.ok(
      existsSync(repoPath(WEB, 'dist', 'index.html')),
      `${WEB}/dist is missing: run \`npm run build\` (it builds the page)`,
    );
  },
});
const { skip } = session;

/** The outcome table as the page shows it: rule → metrics, read from its data-* attributes. */
async function readOutcomeTable(): Promise<{ rule: string; metrics: Record<string, number> }[]> {
  return session.page.$$eval('#outcome-table tbody tr', (rows) =>
    rows.map((row) => ({
      rule: row.getAttribute('data-rule') ?? '',
      metrics: Object.fromEntries(
        [...row.querySelectorAll('td')].map((td) => [
          td.getAttribute('data-metric') ?? '',
          Number(td.textContent),
        ]),
      ),
    })),
  );
}

async function cliOutcomes(args: string[]): Promise<{ rule: string; metrics: WorldMetrics }[]> {
  const { status, stdout, stderr } = await runOncely(['sim', 'run', ...args, '--json']);
  assert.equal(status, 0, stderr);
  const parsed = JSON.parse(stdout) as { outcomes: { rule: string; metrics: WorldMetrics }[] };
  return parsed.outcomes.map(({ rule, metrics }) => ({ rule, metrics }));
}

test('seed and 8-tick retention: the table equals `oncely sim run`, and the URL carries it', {
  skip,
}, async () => {
  const { page, server } = session;
  const startedAt = Date.now();
  await page.goto(`${server.url}/`);
  await page.waitForSelector('#show-outcome');
  assert.equal(await page.isHidden('#outcome'), true, 'no outcome before it is asked for');
  await page.click('#show-outcome');
  await page.waitForSelector('#outcome-table');
  const timing = await page.evaluate(() => ({
    firstOutcomeMs:
      performance.getEntriesByName('oncely:first-outcome')[0]?.startTime ?? Number.NaN,
    scriptMs:
      performance.getEntriesByName('oncely:first-outcome-script')[0]?.duration ?? Number.NaN,
  }));
  console.log(
    `page: first outcome ${timing.firstOutcomeMs.toFixed(0)} ms after navigation start, ${timing.scriptMs.toFixed(0)} ms of it in the page script (${Date.now() - startedAt} ms seen by the test)`,
  );

  await page.fill('#p-seed', '7');
  await page.check('#p-retention-some');
  await page.fill('#p-retention', '8');
  const clickedAt = Date.now();
  await page.click('#show-outcome');
  await page.waitForSelector('#outcome[data-query="?seed=7&retention=8"]');
  console.log(`page: Show outcome to table and timelines: ${Date.now() - clickedAt} ms`);

  // The page prints the command that gives its table; run that very command.
  const command = (await page.textContent('#outcome-cli')) ?? '';
  assert.equal(command, 'npx oncely sim run --seed 7 --retention 8');
  assert.deepEqual(await readOutcomeTable(), await cliOutcomes(command.split(' ').slice(4)));
  assert.equal(new URL(page.url()).search, '?seed=7&retention=8');
  await screenshot(page, 'page-outcome.png', { fullPage: true });
});

test('the timelines draw one mark per effect and per duplicate, and tell a duplicate’s story', {
  skip,
}, async () => {
  const { page } = session;
  const table = await readOutcomeTable();
  for (const { rule, metrics } of table) {
    const counts = await page.$eval(`svg.timeline[data-rule="${rule}"]`, (svg) => ({
      effects: svg.querySelectorAll('.mark-effect').length,
      duplicates: svg.querySelectorAll('.mark-duplicate').length,
      sends: svg.querySelectorAll('.mark-send').length,
    }));
    assert.deepEqual(
      counts,
      {
        effects: metrics['delivered'],
        duplicates: metrics['duplicates'],
        sends: metrics['sends'],
      },
      rule,
    );
  }
  // Retry + key at 8-tick retention duplicates in this world: the button walks to it and explains.
  const keyed = table.find((row) => row.rule === 'retry-key')!;
  assert.ok(keyed.metrics['duplicates']! > 0, 'seed 7 at retention 8 has a keyed duplicate');
  await page.click('.next-duplicate[data-rule="retry-key"]');
  const detail = page.locator('.timeline-figure[data-rule="retry-key"] .timeline-detail');
  assert.equal(await detail.getAttribute('data-kind'), 'duplicate');
  assert.match(
    (await detail.textContent()) ?? '',
    /duplicate effect.*(receipt was lost|still on its way).*expired at tick \d+ \(retention 8 ticks\)/,
  );
  // The keyboard reaches the events: the focused timeline moves with the arrow keys.
  await page.keyboard.press('ArrowLeft');
  assert.notEqual(await detail.getAttribute('data-kind'), 'duplicate');
  await screenshot(
    page.locator('.timeline-figure[data-rule="retry-key"]'),
    'page-timeline-retry-key.png',
  );
});

test('a shared URL restores the controls and shows that outcome', { skip }, async () => {
  const { page, server } = session;
  await page.goto(`${server.url}/?seed=11&credits=24&forget-at=30&rules=retry-oldest,retry-key`);
  await page.waitForSelector('#outcome-table');
  assert.equal(await page.inputValue('#p-seed'), '11');
  assert.equal(await page.inputValue('#p-credits'), '24');
  assert.equal(await page.isChecked('#p-forget-at-some'), true);
  assert.equal(await page.inputValue('#p-forget-at'), '30');
  assert.equal(await page.isChecked('#p-retention-none'), true);
  assert.equal(await page.isChecked('#rule-send-once'), false);
  assert.deepEqual(
    await readOutcomeTable(),
    await cliOutcomes([
      '--seed',
      '11',
      '--credits',
      '24',
      '--forget-at',
      '30',
      '--rules',
      'retry-oldest,retry-key',
    ]),
  );
  // A refused value is named beside its field and the outcome shown stays as it was.
  await page.fill('#p-request-loss', '1.5');
  await page.click('#show-outcome');
  await page.waitForSelector('#form-problems:not([hidden])');
  assert.match(
    (await page.textContent('#form-problems')) ?? '',
    /Request loss: got “1\.5”, expected a probability from 0 to 1/,
  );
  assert.equal(await page.getAttribute('#p-request-loss', 'aria-invalid'), 'true');
  assert.equal(
    await page.getAttribute('#outcome', 'data-query'),
    '?seed=11&credits=24&forget-at=30&rules=retry-oldest,retry-key',
  );
  // A guide step sets the controls from the defaults, keeps the seed, and shows all rules.
  await page.click('button.preset[data-setting="credits-24"]');
  await page.waitForSelector('#outcome[data-query="?seed=11&credits=24"]');
  assert.equal((await readOutcomeTable()).length, RULE_IDS.length);
});

test('readable at 375 px: no horizontal overflow', { skip }, async () => {
  const { page, server } = session;
  await page.setViewportSize({ width: 375, height: 800 });
  await page.goto(`${server.url}/?seed=7&retention=8`);
  await page.waitForSelector('#outcome-table');
  const { scrollWidth, clientWidth } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    clientWidth: document.documentElement.clientWidth,
  }));
  assert.ok(
    scrollWidth <= clientWidth,
    `page is ${scrollWidth} px wide in a ${clientWidth} px viewport`,
  );
  await screenshot(page, 'page-375.png', { fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
});

test('the batch runs in a web worker and its means equal runBatch', { skip }, async () => {
  const { page } = session;
  const seeds = 6;
  await page.fill('#batch-seeds', String(seeds));
  const startedAt = Date.now();
  await page.click('#run-batch');
  await page.waitForSelector('#batch-results[data-ready]');
  console.log(
    `page: batch of ${seeds} seeds x 10 settings x 7 rules, click to chart: ${Date.now() - startedAt} ms`,
  );
  const expected = runBatch({ seeds });
  for (const metric of METRIC_NAMES) {
    await page.selectOption('#batch-metric', metric);
    await page.waitForSelector(`#means-table[data-metric="${metric}"]`);
    const shown = await page.$$eval('#means-table td[data-rule]', (cells) =>
      cells.map(
        (td) =>
          `${td.getAttribute('data-setting')}/${td.getAttribute('data-rule')}=${td.textContent}`,
      ),
    );
    assert.deepEqual(
      shown,
      expected.means.map((row) => `${row.setting}/${row.rule}=${row.mean[metric].toFixed(3)}`),
      metric,
    );
  }
  // The downloads are the batch's every outcome.
  const lines = await page.$eval(
    '#download-jsonl',
    async (a) =>
      (await (await fetch((a as HTMLAnchorElement).href)).text()).trim().split('\n').length,
  );
  assert.equal(lines, expected.outcomeCount);
  const csvHeader = await page.$eval(
    '#download-csv',
    async (a) => (await (await fetch((a as HTMLAnchorElement).href)).text()).split('\n')[0],
  );
  assert.equal(csvHeader, ['setting', 'seed', 'rule', ...METRIC_NAMES].join(','));
  assert.equal(
    await page.$eval('#means-chart', (canvas) => (canvas as HTMLCanvasElement).width > 0),
    true,
  );
  await screenshot(page.locator('#batch'), 'page-batch.png');
});

test('a chart group where every rule is 0 is labelled, not left as a gap', { skip }, async () => {
  const { page } = session;
  await page.selectOption('#batch-metric', 'duplicates');
  await page.waitForFunction(() =>
    document.getElementById('means-chart')?.getAttribute('aria-label')?.includes('duplicates'),
  );
  // The settings whose row in the means table is all zeros, as a person reads it.
  const zeroRows = await page.$$eval('#means-table tbody tr', (rows) =>
    rows
      .filter((row) =>
        [...row.querySelectorAll('td[data-rule]')].every((td) => Number(td.textContent) === 0),
      )
      .map((row) => row.querySelector('th')?.textContent ?? ''),
  );
  assert.ok(zeroRows.length > 0, 'this batch has a setting without duplicates under every rule');
  const labels = await page.$eval('#means-chart', (canvas) => {
    const drawn = JSON.parse((canvas as HTMLElement).dataset['zeroGroups'] ?? '[]') as {
      category: string;
      text: string;
      x: number;
      y: number;
    }[];
    // Ink where each label says it is: the text's pixels, 13 px tall above its baseline. One
    // readback of the whole canvas (several would make Chromium warn).
    const c = canvas as HTMLCanvasElement;
    const scale = c.width / c.getBoundingClientRect().width;
    const { data } = c.getContext('2d')!.getImageData(0, 0, c.width, c.height);
    return drawn.map((label) => {
      let ink = 0;
      for (let y = Math.round((label.y - 13) * scale); y < label.y * scale; y++)
        for (let x = Math.round((label.x - 16) * scale); x < (label.x + 16) * scale; x++)
          if (data[(y * c.width + x) * 4 + 3]! > 128) ink++;
      return { category: label.category, text: label.text, ink };
    });
  });
  assert.deepEqual(
    labels.map((l) => l.category),
    zeroRows,
  );
  for (const label of labels) {
    assert.equal(label.text, 'all 0');
    assert.ok(label.ink > 10, `"${label.text}" is drawn over ${label.category} (${label.ink} px)`);
  }
  assert.match(
    (await page.getAttribute('#means-chart', 'aria-label')) ?? '',
    new RegExp(`every rule 0 at ${zeroRows.join(', ')}`),
  );
});

test('every control has an accessible name, and Tab reaches the timelines', { skip }, async () => {
  const { page } = session;
  const unnamed = await page.$$eval('input, select, button, textarea', (controls) =>
    controls
      .filter((el) => {
        const labelled =
          (el as HTMLInputElement).labels?.length ||
          el.getAttribute('aria-label') ||
          el.getAttribute('aria-labelledby');
        return !labelled && !(el.tagName === 'BUTTON' && el.textContent?.trim());
      })
      .map((el) => el.outerHTML.slice(0, 80)),
  );
  assert.deepEqual(unnamed, []);
  // Tab from the "Next duplicate" button lands on its timeline, which the arrow keys then drive.
  await page.focus('.next-duplicate[data-rule="retry-oldest"]');
  await page.keyboard.press('Tab');
  assert.equal(
    await page.evaluate(() => document.activeElement?.getAttribute('data-rule')),
    'retry-oldest',
  );
  await page.keyboard.press('ArrowDown');
  assert.match(
    (await page.textContent('.timeline-figure[data-rule="retry-oldest"] .timeline-detail')) ?? '',
    /^Job 1, attempt 1/,
  );
});

test('no console errors or warnings', { skip }, () => {
  assert.deepEqual(session.problems, []);
});
