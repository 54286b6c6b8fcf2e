// The simulator page and the store view at a desktop width and a phone's: nothing wider than the
// window (a wide table scrolls inside its own region), no console error or warning, the outcome
// hidden until asked for, and the store view on the page's stylesheet with one time format,
// newest first. Served by a real `oncely serve`; Chromium from /usr/bin/chromium.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { test } from 'node:test';
import { startServeProcess } from '../e2e/serve-process.js';
import { repoPath } from '../support/repo-path.js';
import { browserSession } from './browser-env.js';

const WIDTHS = [1400, 390] as const;
const OUTPUT = repoPath('test-output');

const session = browserSession('the layout test', {
  startServer: async () => {
    const serve = await startServeProcess(['--quiet']);
    return { ...serve, close: () => serve.cleanUp() };
  },
  watch: ['error', 'warning'],
  prepare: () => void mkdirSync(OUTPUT, { recursive: true }),
});
const { skip } = session;

/** How far the document is wider than the window, in CSS pixels (0 = no horizontal scroll). */
const overflow = (): Promise<number> =>
  session.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);

test(
  'the simulator page: no outcome until asked for, and no overflow at 1400 and 390 px',
  { skip },
  async () => {
    const { page, server } = session;
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      await page.goto(`${server.url}/`);
      await page.waitForSelector('#show-outcome');
      assert.equal(
        await page.isHidden('#outcome'),
        true,
        `${width} px: the outcome waits for Show outcome`,
      );
      assert.equal(await page.locator('#outcome-table').count(), 0);
      assert.equal(await overflow(), 0, `${width} px before the outcome`);
      await page.click('#show-outcome');
      await page.waitForSelector('#outcome-table');
      assert.equal(await overflow(), 0, `${width} px with the outcome and its timelines`);
      await page.screenshot({ path: `${OUTPUT}/layout-page-${width}.png`, fullPage: true });
    }
    // A link that carries an outcome shows it at once: following it is asking.
    await page.goto(`${server.url}/?seed=7&retention=8`);
    await page.waitForSelector('#outcome[data-query="?seed=7&retention=8"]');
    assert.deepEqual(session.problems, []);
  },
);

test(
  "the store view: the page's styles, UTC times in one format, newest first, no overflow at 1400 and 390 px",
  { skip },
  async () => {
    const { page, server } = session;
    const auth = { authorization: `Bearer ${server.token}` };
    // Long unbroken values are what broke the phone layout.
    const keys = ['achen:lab3:v1-' + 'x'.repeat(60), 'achen:lab4:v1'];
    for (const key of keys) {
      const response = await fetch(`${server.url}/dropbox/submissions`, {
        method: 'POST',
        headers: { ...auth, 'idempotency-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({
          student: 'a-student-with-a-very-long-name-' + 'y'.repeat(40),
          assignment: key.slice(6, 10),
        }),
      });
      assert.equal(response.status, 201);
    }
    await fetch(`${server.url}/hooks/run-complete`, {
      method: 'POST',
      headers: { ...auth, 'idempotency-key': 'run-9' },
      body: '{}',
    });
    await fetch(`${server.url}/hooks/run-complete`, {
      method: 'POST',
      headers: { ...auth, 'idempotency-key': 'run-10' },
      body: '{}',
    });

    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      await page.goto(`${server.url}/store#token=${server.token}`);
      await page.waitForFunction(
        () =>
          document.querySelectorAll('#dropbox tr').length === 2 &&
          document.querySelectorAll('#hooks tr').length === 2,
      );
      assert.equal(await overflow(), 0, `${width} px`);
      await page.screenshot({ path: `${OUTPUT}/layout-store-${width}.png`, fullPage: true });
    }
    assert.ok(
      await page.evaluate(() =>
        [...document.styleSheets].some(
          (sheet) => sheet.href?.endsWith('/styles.css') && sheet.cssRules.length > 0,
        ),
      ),
      "the simulator page's stylesheet",
    );
    const column = (id: string, index: number): Promise<string[]> =>
      page.$$eval(
        `#${id} tr`,
        (rows, i) => rows.map((row) => row.querySelectorAll('td')[i]?.textContent ?? ''),
        index,
      );
    assert.deepEqual(await column('dropbox', 0), [...keys].reverse(), 'the newest row first');
    assert.deepEqual(await column('hooks', 4), ['run-10', 'run-9'], 'the newest hit first');
    const times = [
      ...(await column('hooks', 1)),
      ...(await column('receipts', 5)),
      ...(await column('receipts', 6)),
    ];
    assert.ok(times.length >= 6);
    for (const time of times) assert.match(time, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    assert.deepEqual(session.problems, []);
  },
);
