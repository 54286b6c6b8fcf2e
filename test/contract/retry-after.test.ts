import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatHttpDate, parseHttpDate, parseRetryAfter } from '#oncely/contract/index.js';
import { httpDateForms } from '../support/http-date-forms.js';

const NOV_6_1994 = Date.UTC(1994, 10, 6, 8, 49, 37);

test('absent when there is no header', () => {
  assert.deepEqual(parseRetryAfter(undefined, 0), { kind: 'absent' });
  assert.deepEqual(parseRetryAfter(null, 0), { kind: 'absent' });
});

test('delta-seconds become milliseconds, measured as a delta', () => {
  assert.deepEqual(parseRetryAfter('120', 5_000), {
    kind: 'delay',
    raw: '120',
    delayMs: 120_000,
    measuredAgainst: 'delta',
  });
  assert.deepEqual(parseRetryAfter('0', 5_000), {
    kind: 'delay',
    raw: '0',
    delayMs: 0,
    measuredAgainst: 'delta',
  });
  assert.equal(
    (parseRetryAfter(' 2 ', 0) as { delayMs: number }).delayMs,
    2_000,
    'surrounding whitespace is not part of the value',
  );
  // A delta ignores both clocks: a Date header does not change it.
  assert.equal(
    (parseRetryAfter('2', 0, formatHttpDate(NOV_6_1994)) as { measuredAgainst: string })
      .measuredAgainst,
    'delta',
  );
});

test('an absurdly long delta stays a finite number', () => {
  const parsed = parseRetryAfter('9'.repeat(400), 0);
  assert.equal(parsed.kind, 'delay');
  assert.ok(
    parsed.kind === 'delay' && Number.isFinite(parsed.delayMs) && parsed.delayMs > 86_400_000,
  );
});

test('all three HTTP-date forms of RFC 9110 parse to the same instant', () => {
  assert.equal(parseHttpDate('Sun, 06 Nov 1994 08:49:37 GMT'), NOV_6_1994);
  assert.equal(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT'), NOV_6_1994);
  assert.equal(parseHttpDate('Sun Nov  6 08:49:37 1994'), NOV_6_1994);
  assert.equal(parseHttpDate('Sun Nov 06 08:49:37 1994'), NOV_6_1994);
  const forms = httpDateForms(Date.UTC(2026, 2, 14, 23, 5, 9));
  for (const form of Object.values(forms))
    assert.equal(parseHttpDate(form, Date.UTC(2026, 0, 1)), Date.UTC(2026, 2, 14, 23, 5, 9), form);
});

test('impossible or malformed dates are refused', () => {
  for (const bad of [
    'Sun, 31 Feb 1994 08:49:37 GMT',
    'Sun, 06 Nov 1994 24:00:00 GMT',
    'Sun, 06 Nov 1994 08:60:00 GMT',
    'Sun, 00 Nov 1994 08:49:37 GMT',
    'Sun, 06 Nov 1994 08:49:37 UTC',
    'sun, 06 nov 1994 08:49:37 GMT',
    '1994-11-06T08:49:37Z',
    'Sun, 6 Nov 1994 08:49:37 GMT',
  ])
    assert.equal(parseHttpDate(bad), undefined, bad);
});

test('a four-digit year below 100 is that year, not 19xx', () => {
  const at = parseHttpDate('Sat, 06 Nov 0050 08:49:37 GMT');
  assert.equal(at === undefined ? undefined : new Date(at).getUTCFullYear(), 50);
});

test('an RFC 850 two-digit year more than 50 years ahead is the past century (RFC 9110 5.6.7)', () => {
  const now2026 = Date.UTC(2026, 5, 1);
  const year = (text: string, nowMs?: number): number | undefined => {
    const at = parseHttpDate(text, nowMs);
    return at === undefined ? undefined : new Date(at).getUTCFullYear();
  };
  assert.equal(year('Sunday, 06-Nov-94 08:49:37 GMT', now2026), 1994);
  assert.equal(year('Tuesday, 01-Jan-30 00:00:00 GMT', now2026), 2030);
  assert.equal(
    year('Sunday, 01-Jan-76 00:00:00 GMT', now2026),
    2076,
    '50 years ahead is not more than 50',
  );
  assert.equal(year('Wednesday, 01-Jan-77 00:00:00 GMT', now2026), 1977);
  assert.equal(year('Friday, 01-Jan-99 00:00:00 GMT', Date.UTC(2090, 0, 1)), 2099);
  // Without a "now", the common 70 pivot.
  assert.equal(year('Thursday, 01-Jan-70 00:00:00 GMT'), 1970);
  assert.equal(year('Monday, 01-Jan-69 00:00:00 GMT'), 2069);
});

test('a date is measured against the response Date: one hour of local skew changes nothing', () => {
  const serverNow = Date.UTC(2026, 2, 14, 12, 0, 0);
  const retryAt = serverNow + 30_000;
  for (const skewMs of [3_600_000, -3_600_000, 0]) {
    for (const form of Object.values(httpDateForms(retryAt))) {
      const parsed = parseRetryAfter(form, serverNow + skewMs, formatHttpDate(serverNow));
      assert.deepEqual(
        parsed,
        { kind: 'delay', raw: form, delayMs: 30_000, measuredAgainst: 'server-date' },
        `${form} skew ${skewMs}`,
      );
    }
  }
  // The Date header may itself be in an obsolete form.
  const parsed = parseRetryAfter(
    formatHttpDate(retryAt),
    serverNow + 3_600_000,
    httpDateForms(serverNow).rfc850,
  );
  assert.equal(parsed.kind === 'delay' && parsed.delayMs, 30_000);
});

test('without a usable Date header a date is measured against the local clock, and says so', () => {
  const nowMs = Date.UTC(2026, 2, 14, 12, 0, 0);
  const raw = formatHttpDate(nowMs + 5_000);
  const expected = { kind: 'delay', raw, delayMs: 5_000, measuredAgainst: 'local-clock' };
  assert.deepEqual(parseRetryAfter(raw, nowMs), expected);
  assert.deepEqual(parseRetryAfter(raw, nowMs, null), expected);
  assert.deepEqual(
    parseRetryAfter(raw, nowMs, 'yesterday'),
    expected,
    'an unparsable Date header is ignored',
  );
});

test('a date in the past means now, never a negative delay', () => {
  const nowMs = Date.UTC(2026, 2, 14, 12, 0, 0);
  const parsed = parseRetryAfter(formatHttpDate(nowMs - 60_000), nowMs);
  assert.equal(parsed.kind === 'delay' && parsed.delayMs, 0);
});

test('anything else is "unparsed", carrying the raw text', () => {
  for (const raw of ['1.5', '-1', '+3', 'soon', '2 seconds', 'Sun, 06 Nov 1994', '0x10']) {
    assert.deepEqual(parseRetryAfter(raw, 0), { kind: 'unparsed', raw });
  }
  assert.deepEqual(parseRetryAfter('', 0), { kind: 'unparsed', raw: '' });
  assert.deepEqual(parseRetryAfter('   ', 0), { kind: 'unparsed', raw: '   ' });
});

test('a NaN clock reading cannot measure a date: unparsed, never a NaN delay', () => {
  assert.equal(parseRetryAfter(formatHttpDate(NOV_6_1994), Number.NaN).kind, 'unparsed');
});

test('formatHttpDate writes an IMF-fixdate that parses back to the second', () => {
  const ms = Date.UTC(2026, 2, 14, 23, 5, 9) + 789;
  assert.equal(formatHttpDate(ms), 'Sat, 14 Mar 2026 23:05:09 GMT');
  assert.equal(parseHttpDate(formatHttpDate(ms)), ms - 789);
});
