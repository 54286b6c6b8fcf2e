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

/** Parses an HTTP-date in any of the three forms to ms since the epoch, or undefined. */
export function parseHttpDate(value: string): number | undefined {
  const text = value.trim();
  let m = IMF_FIXDATE.exec(text);
  if (m) return utc(Number(m[3]), m[2]!, Number(m[1]), m[4]!, m[5]!, m[6]!);
  m = RFC850_DATE.exec(text);
  if (m) {
    // RFC 9110: a two-digit year more than 50 years in the future is taken as the past century.
    // Without a trustworthy "now" here we use the common pivot: 70-99 -> 19xx, 00-69 -> 20xx.
    const yy = Number(m[3]);
    return utc(yy >= 70 ? 1900 + yy : 2000 + yy, m[2]!, Number(m[1]), m[4]!, m[5]!, m[6]!);
  }
  m = ASCTIME_DATE.exec(text);
  if (m) return utc(Number(m[6]), m[1]!, Number(m[2]!.trim()), m[3]!, m[4]!, m[5]!);
  return undefined;
}

function utc(year: number, month: string, day: number, h: string, min: string, s: string): number | undefined {
  const monthIndex = MONTHS.indexOf(month.toLowerCase());
  const hour = Number(h);
  const minute = Number(min);
  const second = Number(s);
  if (day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return undefined;
  const ms = Date.UTC(year, monthIndex, day, hour, minute, Math.min(second, 59));
  // Reject dates such as 31 Feb that Date.UTC would roll over into March.
  if (new Date(ms).getUTCDate() !== day) return undefined;
  return ms;
}

/**
 * Turns a Retry-After value into a delay. `nowMs` is our clock; `dateHeader` is the response's
 * Date. The result is never negative and never NaN: a date in the past means "now".
 */
export function parseRetryAfter(value: string | null | undefined, nowMs: number, dateHeader?: string | null): RetryAfter {
  if (value === null || value === undefined) return { kind: 'absent' };
  const raw = value.trim();
  if (raw === '') return { kind: 'unparsed', raw: value };
  if (/^\d+$/.test(raw)) {
    // Huge values stay finite: anything past a day is far beyond any sensible cap anyway.
    const seconds = Math.min(Number(raw), 86_400 * 365);
    return { kind: 'delay', raw, delayMs: seconds * 1000, measuredAgainst: 'delta' };
  }
  const at = parseHttpDate(raw);
  if (at === undefined) return { kind: 'unparsed', raw };
  const serverNow = dateHeader ? parseHttpDate(dateHeader) : undefined;
  const reference = serverNow ?? nowMs;
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
