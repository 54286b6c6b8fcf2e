// The store view in headless Chromium: it takes the token from #token= (then forgets the
// fragment), keeps it in sessionStorage, and shows new rows, receipts and hook hits without a
// reload. Skips with the reason when Chromium is missing; fails instead under ONCELY_REQUIRE_BROWSER=1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { browserSession } from '../../web/browser-env.js';
import { bearer, send, startTestServer, submissionHeaders, TOKENS } from './server-harness.js';

const session = browserSession('the store view test', { startServer: () => startTestServer() });
const { skip } = session;

test("the store view shows the caller's rows, receipts and hook hits live, as text", {
  skip,
}, async () => {
  const { page, server } = session;
  await page.goto(`${server.url}/store#token=${TOKENS.dev}`);
  await page.waitForFunction(() =>
    document.getElementById('status')?.textContent?.startsWith('caller dev'),
  );
  assert.equal(new URL(page.url()).hash, '', 'the token leaves the address bar');
  assert.equal(await page.evaluate(() => sessionStorage.getItem('oncely-token')), TOKENS.dev);

  // A row whose student is markup: it must appear as text, never as an element.
  const student = '<img src=x onerror=alert(1)>';
  const submitted = await send(server.port, {
    method: 'POST',
    path: '/dropbox/submissions',
    headers: submissionHeaders(TOKENS.dev, 'view-key-1'),
    body: JSON.stringify({ student, assignment: 'lab3' }),
  });
  assert.equal(submitted.status, 201);
  await send(server.port, {
    method: 'POST',
    path: '/hooks/run-complete',
    headers: { authorization: bearer(TOKENS.dev), 'idempotency-key': 'run-9' },
    body: '{}',
  });
  // Another caller's row must never show.
  await send(server.port, {
    method: 'POST',
    path: '/dropbox/submissions',
    headers: submissionHeaders(TOKENS.alice, 'alice-key'),
    body: '{"student":"alice","assignment":"lab3"}',
  });

  await page.waitForFunction(
    () =>
      document.querySelector('#hooks td')?.textContent === '1' &&
      document.querySelectorAll('#dropbox tr').length === 1 &&
      document.querySelector('#dropbox td')?.textContent === 'view-key-1',
  );
  const dropbox = await page.$$eval('#dropbox tr', (rows) =>
    rows.map((row) => [...row.querySelectorAll('td')].map((td) => td.textContent)),
  );
  assert.deepEqual(dropbox, [['view-key-1', student, 'lab3', 'accepted', '1']]);
  assert.equal(await page.$$eval('#dropbox img', (images) => images.length), 0);
  const receipts = await page.$$eval('#receipts tr', (rows) =>
    rows.map((row) => [...row.querySelectorAll('td')].map((td) => td.textContent)),
  );
  // The hook receiver's key sits in the one ledger beside the dropbox's.
  assert.deepEqual(receipts.map((r) => [r[0], r[1], r[3], r[4]]).sort(), [
    ['run-9', 'dev', 'completed', '200'],
    ['view-key-1', 'dev', 'completed', '201'],
  ]);
  // Each heading says how many there are in all.
  assert.equal(await page.textContent('#dropbox-count'), '(1)');
  assert.equal(await page.textContent('#receipts-count'), '(2)');
  assert.equal(await page.textContent('#sweep'), 'retention sweep: not run yet');
  assert.deepEqual(session.problems, []);
});

test('?limit= on the page is passed to the feeds: the newest rows, and how many there are in all', {
  skip,
}, async () => {
  const { page, server } = session;
  const second = await send(server.port, {
    method: 'POST',
    path: '/dropbox/submissions',
    headers: submissionHeaders(TOKENS.dev, 'view-key-2'),
    body: '{"student":"achen","assignment":"lab4"}',
  });
  assert.equal(second.status, 201);
  await page.goto(`${server.url}/store?limit=1#token=${TOKENS.dev}`);
  await page.waitForFunction(
    () => document.getElementById('dropbox-count')?.textContent === '(the newest 1 of 2)',
  );
  assert.equal(
    new URL(page.url()).search,
    '?limit=1',
    'the limit stays in the address bar; the token leaves it',
  );
  assert.deepEqual(
    await page.$$eval('#dropbox tr', (rows) =>
      rows.map((row) => row.querySelector('td')?.textContent),
    ),
    ['view-key-2'],
  );
  assert.deepEqual(
    await page.$$eval('#receipts tr', (rows) =>
      rows.map((row) => row.querySelector('td')?.textContent),
    ),
    ['view-key-2'],
  );
  assert.equal(await page.textContent('#receipts-count'), '(the newest 1 of 3)');
  assert.deepEqual(
    await page.$$eval('#hooks tr', (rows) => rows.length),
    1,
    'the hits feed is limited too',
  );

  // A limit the feeds refuse is shown with the server's reason, not as an empty store.
  await page.goto(`${server.url}/store?limit=5000`);
  await page.waitForFunction(
    () => document.getElementById('status')?.classList.contains('error') === true,
  );
  assert.match(
    (await page.textContent('#status')) ?? '',
    /answered 400: \?limit= must be one whole number from 1 to 1000/,
  );
});

test('a refused token brings the form back and is forgotten', { skip }, async () => {
  const { page } = session;
  await page.evaluate(() => sessionStorage.setItem('oncely-token', 'not-a-token-0123456789'));
  await page.reload();
  await page.waitForFunction(
    () =>
      document.getElementById('token-form')?.hidden === false &&
      document.getElementById('status')?.textContent?.includes('refused'),
  );
  assert.equal(await page.evaluate(() => sessionStorage.getItem('oncely-token')), null);
});
