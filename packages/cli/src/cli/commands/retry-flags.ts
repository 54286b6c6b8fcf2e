import type { Command } from 'commander';
import { DEFAULT_OUTBOX_POLICY, InvalidOptionError } from 'oncely';
import { parseDurationMs } from './deliver-options.js';

/** The flags that shape the waits between attempts, as commander hands them over. */
export interface RetryFlags {
  readonly baseDelay?: string;
  readonly maxDelay?: string;
  readonly maxRetryAfter?: string;
  readonly schedule?: string;
}

/** What they say, only the ones given (or implied: a max delay raised to a longer step). */
export interface RetrySettings {
  baseDelayMs?: number;
  maxDelayMs?: number;
  maxRetryAfterMs?: number;
  schedule?: number[];
}

/** A role's defaults as its help shows them. */
export interface RetryHelp {
  readonly schedule: string;
  readonly maxDelay: string;
  readonly maxRetryAfter: string;
}

/** The outbox's defaults as its help shows them (DEFAULT_OUTBOX_POLICY). */
export const OUTBOX_RETRY_HELP: RetryHelp = {
  schedule: (DEFAULT_OUTBOX_POLICY.schedule ?? []).map(formatDuration).join(','),
  maxDelay: formatDuration(DEFAULT_OUTBOX_POLICY.maxDelayMs),
  maxRetryAfter: 'deadline',
};

/**
 * Adds `--schedule`, `--base-delay` (unless `baseDelay` is false: an endpoint keeps a schedule),
 * `--max-delay` and `--max-retry-after`, with a role's defaults in the help.
 */
export function retryOptions(command: Command, defaults: RetryHelp, baseDelay = true): Command {
  command.option(
    '--schedule <waits>',
    `the waits between attempts, comma-separated, the last repeating (default: ${defaults.schedule})`,
  );
  if (baseDelay)
    command.option(
      '--base-delay <duration>',
      'exponential backoff from this first wait, doubling, in place of a schedule',
    );
  return command
    .option(
      '--max-delay <duration>',
      `the longest wait between two attempts (default: ${defaults.maxDelay}, or the longest step given)`,
    )
    .option(
      '--max-retry-after <duration|deadline>',
      `the longest Retry-After obeyed; past it the intent stops rather than come back early; "deadline": any before the deadline (default: ${defaults.maxRetryAfter})`,
    );
}

/**
 * Parses the retry flags. Values that contradict each other are refused, one line and exit 2,
 * never capped silently: `--schedule` with `--base-delay`, a base or a step above `--max-delay`.
 * Without `--max-delay`, a base or a step above the role's own cap (`defaultMaxDelayMs`) raises it
 * to that value: the cap a person did not give never cuts the wait a person did give.
 */
export function parseRetryFlags(flags: RetryFlags, defaultMaxDelayMs: number): RetrySettings {
  const base =
    flags.baseDelay === undefined ? undefined : parseDurationMs('--base-delay', flags.baseDelay);
  const schedule = flags.schedule === undefined ? undefined : parseSchedule(flags.schedule);
  const max =
    flags.maxDelay === undefined ? undefined : parseDurationMs('--max-delay', flags.maxDelay);
  if (schedule !== undefined && base !== undefined)
    throw new InvalidOptionError(
      '--base-delay',
      flags.baseDelay,
      'no --base-delay with --schedule: either fixed waits or exponential backoff',
    );
  const longest = Math.max(base ?? 0, ...(schedule ?? []));
  if (max !== undefined && longest > max)
    throw new InvalidOptionError(
      base === undefined ? '--schedule' : '--base-delay',
      base === undefined ? flags.schedule : flags.baseDelay,
      `waits of at most --max-delay (${flags.maxDelay}); raise --max-delay or shorten them`,
    );
  const maxDelayMs = max ?? (longest > defaultMaxDelayMs ? longest : undefined);
  return {
    ...(base === undefined ? {} : { baseDelayMs: base }),
    ...(schedule === undefined ? {} : { schedule }),
    ...(maxDelayMs === undefined ? {} : { maxDelayMs }),
    ...(flags.maxRetryAfter === undefined
      ? {}
      : { maxRetryAfterMs: parseMaxRetryAfter(flags.maxRetryAfter) }),
  };
}

/** `5s,5m,30m,2h`: the waits in ms. */
function parseSchedule(text: string): number[] {
  const parts = text.split(',').map((part) => part.trim());
  if (parts.length === 0 || parts.some((part) => part === ''))
    throw new InvalidOptionError('--schedule', text, 'waits such as 5s,5m,30m,2h, comma-separated');
  return parts.map((part) => parseDurationMs('--schedule', part));
}

function parseMaxRetryAfter(text: string): number {
  return text.trim() === 'deadline'
    ? Number.POSITIVE_INFINITY
    : parseDurationMs('--max-retry-after', text);
}

/** A duration as the help shows it: `10s`, `36000s` as `10h`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return 'deadline';
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const)
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}
