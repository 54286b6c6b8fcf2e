import { InvalidOptionError } from 'oncely';

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;
/** An ISO 8601 instant with a date and a time; the zone may be Z or an offset. */
export const ISO_INSTANT =
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})$/;

/** `1500ms`, `30s`, `2m`, `1h`, `5d` to milliseconds. A bare number is refused: its unit would be a guess. */
export function parseDurationMs(option: string, text: string): number {
  const m = DURATION.exec(text.trim());
  if (!m)
    throw new InvalidOptionError(option, text, 'a duration such as 1500ms, 30s, 2m, 1h or 5d');
  return Math.round(Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS]);
}

/**
 * The instant no attempt may start at or after: a duration from `nowMs` (`30s`) or an ISO
 * instant (`2026-09-14T12:00:00Z`).
 */
export function parseDeadline(text: string, nowMs: number): number {
  const trimmed = text.trim();
  if (ISO_INSTANT.test(trimmed)) {
    const at = Date.parse(trimmed);
    if (!Number.isNaN(at)) return at;
  }
  if (DURATION.test(trimmed)) return nowMs + parseDurationMs('--deadline', trimmed);
  throw new InvalidOptionError(
    '--deadline',
    text,
    'a duration such as 30s or 1500ms, or an ISO instant such as 2026-09-14T12:00:00Z',
  );
}

/** `Name: value` to a header pair; the name must be an HTTP token (RFC 9110 section 5.1). */
export function parseHeader(text: string): [string, string] {
  const colon = text.indexOf(':');
  const name = colon < 0 ? '' : text.slice(0, colon).trim();
  const value = colon < 0 ? '' : text.slice(colon + 1).trim();
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name))
    throw new InvalidOptionError('--header', text, '"Name: value" with a token for a name');
  try {
    new Headers([[name, value]]);
  } catch {
    throw new InvalidOptionError('--header', text, 'a header value without control characters');
  }
  return [name, value];
}

/** A positive integer option such as `--max-attempts`. */
export function parsePositiveInt(option: string, text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(n) || n < 1)
    throw new InvalidOptionError(option, text, 'an integer >= 1');
  return n;
}

/** The retry-policy flags `deliver` and `outbox add` share, as they were given on the command line. */
export interface PolicyFlags {
  readonly maxAttempts?: string;
  readonly deadline?: string;
  readonly attemptTimeout?: string;
}

/** Parses the shared policy flags; only the ones given appear in the result (the waits: retry-flags.ts). */
export function parsePolicyFlags(
  flags: PolicyFlags,
  nowMs: number,
): { maxAttempts?: number; deadlineAt?: number; attemptTimeoutMs?: number } {
  return {
    ...(flags.maxAttempts === undefined
      ? {}
      : { maxAttempts: parsePositiveInt('--max-attempts', flags.maxAttempts) }),
    ...(flags.deadline === undefined ? {} : { deadlineAt: parseDeadline(flags.deadline, nowMs) }),
    ...(flags.attemptTimeout === undefined
      ? {}
      : { attemptTimeoutMs: parseDurationMs('--attempt-timeout', flags.attemptTimeout) }),
  };
}
