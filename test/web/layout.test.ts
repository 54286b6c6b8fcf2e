// The simulator page and the store view at a desktop width and a phone's: nothing wider than the
// window (a wide table scrolls inside its own region), no console error or warning, the outcome
// hidden until asked for, timeline boxes that fit their drawing and keep the job labels in view,
// and the store view on the page's stylesheet with one time format, newest first. Served by the
// server `oncely serve` runs, in this process; Chromium from /usr/bin/chromium.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestServer, TOKENS } from '../apps/serve/server-harness.js';
import { browserSession } from './browser-env.js';
import { screenshot } from './screenshots.js';

const WIDTHS = [1400, 390] as const;

const session = browserSession('the layout test', {
  startServer: async () => ({ ...(await startTestServer()), token: TOKENS.dev }),
  watch: ['error', 'warning'],
});
const { skip } = session;

/** How far the document is wider than the window, in CSS pixels (0 = no horizontal scroll). */
const overflow = (): Promise<number> =>
  session.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);

test('the simulator page: no outcome until asked for, and no overflow at 1400 and 390 px', {
  skip,
}, async () => {
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
    await screenshot(page, `layout-page-${width}.png`, { fullPage: true });
  }
  // A link that carries an outcome shows it at once: following it is asking.
  await page.goto(`${server.url}/?seed=7&retention=8`);
  await page.waitForSelector('#outcome[data-query="?seed=7&retention=8"]');
  assert.deepEqual(session.problems, []);
});

test('the timelines redraw when the window changes width: as if the page had been loaded at the new width', {
  skip,
}, async () => {
  const { page, server } = session;
  const link = `${server.url}/?seed=7&retention=8`;
  const track = '.timeline-figure[data-rule="retry-key"] svg.timeline';
  const loadedAt = async (width: number): Promise<string | null> => {
    await page.setViewportSize({ width, height: 900 });
    await page.goto(link);
    await page.waitForSelector(track);
    return page.$eval(track, (svg) => svg.getAttribute('width'));
  };
  const narrow = await loadedAt(600);
  assert.notEqual(await loadedAt(1400), narrow, 'the drawing depends on the width at all');
  // Wide to narrow without a reload: the tracks come out as a fresh load at 600 px draws them.
  await page.setViewportSize({ width: 600, height: 900 });
  await page.waitForFunction(
    ([selector, width]) => document.querySelector(selector)?.getAttribute('width') === width,
    [track, narrow] as const,
    { timeout: 10_000 },
  );
  assert.equal(await overflow(), 0);
  assert.deepEqual(session.problems, []);
});

test('the timelines: the box hugs the drawing at 1400 px, and the job labels stay in view at 390 px after Next duplicate', {
  skip,
}, async () => {
  const { page, server } = session;
  const figure = '.timeline-figure[data-rule="retry-key"]';
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    await page.goto(`${server.url}/?seed=7&retention=8`);
    await page.waitForSelector(`${figure} svg.timeline`);
    // No empty strip: the box is as wide and as high as the labels and the track it holds, and
    // the drawing reaches the track's bottom margin (6 px).
    const fit = await page.$eval(figure, (fig) => {
      const rect = (selector: string): DOMRect =>
        fig.querySelector(selector)!.getBoundingClientRect();
      const box = rect('.timeline-box');
      const labels = rect('.timeline-labels');
      const scroller = fig.querySelector('.timeline-scroll')!;
      const track = rect('svg.timeline');
      const content = (fig.querySelector('svg.timeline') as SVGSVGElement).getBBox();
      return {
        // A track wider than the box scrolls; a narrower one must not leave a gap.
        emptyRight: Math.max(0, box.right - 1 - (labels.right + track.width)),
        emptyBelow: box.height - 2 - track.height,
        contentBottom: track.height - (content.y + content.height),
        scrolls: scroller.scrollWidth > scroller.clientWidth,
        available: document.getElementById('timelines')!.clientWidth,
        boxWidth: box.width,
      };
    });
    assert.ok(
      fit.emptyRight < 1,
      `${width} px: ${fit.emptyRight} px of empty box right of the track`,
    );
    assert.ok(Math.abs(fit.emptyBelow) < 1, `${width} px: ${fit.emptyBelow} px below the track`);
    assert.ok(
      fit.contentBottom < 7,
      `${width} px: the drawing ends ${fit.contentBottom} px above the bottom`,
    );
    if (width === 1400) {
      assert.equal(fit.scrolls, false, 'a 74-tick world fits a desktop window');
      assert.ok(Math.abs(fit.boxWidth - fit.available) < 1, 'and fills its width');
      continue;
    }
    // The phone: the track scrolls to each duplicate; its job's label stays in the viewport.
    assert.equal(fit.scrolls, true);
    let scrolled = false;
    for (let i = 0; i < 7 && !scrolled; i++) {
      await page.click(`${figure} .next-duplicate`);
      const job = await page.$eval(`${figure} .mark.is-selected`, (el) =>
        el.getAttribute('data-job'),
      );
      const seen = await page.$eval(
        figure,
        (fig, selectedJob) => {
          const label = fig.querySelector(`.lane-label[data-job="${selectedJob}"]`)!;
          const r = label.getBoundingClientRect();
          const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
          return {
            scrollLeft: fig.querySelector('.timeline-scroll')!.scrollLeft,
            inViewport: r.left >= 0 && r.right <= window.innerWidth && r.width > 0,
            onTop:
              hit !== null &&
              (hit === label || label.contains(hit) || hit.closest('.timeline-labels') !== null),
          };
        },
        job,
      );
      assert.ok(
        seen.inViewport && seen.onTop,
        `job ${job}'s label is visible (${JSON.stringify(seen)})`,
      );
      scrolled = seen.scrollLeft > 0;
    }
    assert.ok(scrolled, 'Next duplicate scrolled the track, so the labels were put to the test');
    assert.equal(await overflow(), 0);
    await screenshot(page.locator(figure), `layout-timeline-${width}.png`);
  }
  assert.deepEqual(session.problems, []);
});

test("the store view: the page's styles, UTC times in one format, newest first, no overflow at 1400 and 390 px", {
  skip,
}, async () => {
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
    await screenshot(page, `layout-store-${width}.png`, { fullPage: true });
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
});
