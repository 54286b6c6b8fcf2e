/**
 * Retry-After (RFC 9110 section 10.2.3): either delay-seconds (1*DIGIT) or an HTTP-date in one of
 * the three forms of section 5.6.7. A date is measured against the response's own Date header
 * when there is one, so a skewed local clock does not stretch or shrink the wait.
 */
export type RetryAfter =
  | { readonly kind: 'absent' }
  | { readonly kind: 'unparsed'; readonly raw: string }
  | {
      readonly kind: 'delay';
      readonly raw: string;
      readonly delayMs: number;
      /** 'delta': delay-seconds; 'server-date': date minus the response's Date; 'local-clock': date minus our clock. */
      readonly measuredAgainst: 'delta' | 'server-date' | 'local-clock';
    };

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const LONG_DAY = '(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)';
const MONTH = '(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';
/** Sun, 06 Nov 1994 08:49:37 GMT */
const IMF_FIXDATE = new RegExp(`^${DAY}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`);
/** Sunday, 06-Nov-94 08:49:37 GMT (obsolete RFC 850 form) */
const RFC850_DATE = new RegExp(`^${LONG_DAY}, (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`);
/** Sun Nov  6 08:49:37 1994 (obsolete asctime form) */
const ASCTIME_DATE = new RegExp(`^${DAY} ${MONTH} ([ \\d]\\d) ${TIME} (\\d{4})$`);

/**
 * Parses an HTTP-date in any of the three forms to ms since the epoch, or undefined. `nowMs`
 * places the two-digit year of the RFC 850 form (see {@link rfc850Year}).
 */
export function parseHttpDate(value: string, nowMs?: number): number | undefined {
  const text = value.trim();
  let m = IMF_FIXDATE.exec(text);
  if (m) return utc(Number(m[3]), m[2]!, Number(m[1]), m[4]!, m[5]!, m[6]!);
  m = RFC850_DATE.exec(text);
  if (m) return utc(rfc850Year(Number(m[3]), nowMs), m[2]!, Number(m[1]), m[4]!, m[5]!, m[6]!);
  m = ASCTIME_DATE.exec(text);
  if (m) return utc(Number(m[6]), m[1]!, Number(m[2]!.trim()), m[3]!, m[4]!, m[5]!);
  return undefined;
}

/**
 * RFC 9110 section 5.6.7: a two-digit year that "appears to be more than 50 years in the future"
 * is the most recent past year with those digits. So the year is taken from the window of a
 * century around `nowMs`. Without a "now" (a bare call) the common pivot stands in:
 * 70-99 -> 19xx, 00-69 -> 20xx.
 */
function rfc850Year(yy: number, nowMs: number | undefined): number {
  const nowYear = nowMs === undefined ? Number.NaN : new Date(nowMs).getUTCFullYear();
  if (Number.isNaN(nowYear)) return yy >= 70 ? 1900 + yy : 2000 + yy;
  let year = nowYear - (nowYear % 100) + yy;
  if (year > nowYear + 50) year -= 100;
  else if (year <= nowYear - 50) year += 100;
  return year;
}

function utc(
  year: number,
  month: string,
  day: number,
  h: string,
  min: string,
  s: string,
): number | undefined {
  const monthIndex = MONTHS.indexOf(month.toLowerCase());
  const hour = Number(h);
  const minute = Number(min);
  const second = Number(s);
  if (day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return undefined;
  // Not Date.UTC: it reads years 0-99 as 1900-1999, so "Sun, 06 Nov 0050" would land in 1950.
  const date = new Date(0);
  date.setUTCFullYear(year, monthIndex, day);
  date.setUTCHours(hour, minute, Math.min(second, 59), 0);
  // Reject dates such as 31 Feb that would roll over into March.
  if (date.getUTCDate() !== day) return undefined;
  return date.getTime();
}

/**
 * Turns a Retry-After value into a delay. `nowMs` is our clock; `dateHeader` is the response's
 * Date. The result is never negative and never NaN: a date in the past means "now".
 */
export function parseRetryAfter(
  value: string | null | undefined,
  nowMs: number,
  dateHeader?: string | null,
): RetryAfter {
  if (value === null || value === undefined) return { kind: 'absent' };
  const raw = value.trim();
  if (raw === '') return { kind: 'unparsed', raw: value };
  if (/^\d+$/.test(raw)) {
    // Huge values stay finite: anything past a year is far beyond any sensible cap anyway.
    const seconds = Math.min(Number(raw), 86_400 * 365);
    return { kind: 'delay', raw, delayMs: seconds * 1000, measuredAgainst: 'delta' };
  }
  const serverNow = dateHeader ? parseHttpDate(dateHeader, nowMs) : undefined;
  const reference = serverNow ?? nowMs;
  const at = parseHttpDate(raw, reference);
  // A NaN "now" cannot measure a date; say so rather than hand NaN to a sleep.
  if (at === undefined || Number.isNaN(at - reference)) return { kind: 'unparsed', raw };
  return {
    kind: 'delay',
    raw,
    delayMs: Math.max(0, at - reference),
    measuredAgainst: serverNow !== undefined ? 'server-date' : 'local-clock',
  };
}

/** Formats an instant as an IMF-fixdate, the form servers must send. */
export function formatHttpDate(ms: number): string {
  return new Date(ms).toUTCString();
}
