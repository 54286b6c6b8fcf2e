import { PARKED_AT, type AttemptEntry, type IntentRecord, type IntentReport } from 'oncely';
import { formatDuration } from './retry-flags.js';
import { responseText } from '../../outbox-ui/attempt-json.js';

const iso = (ms: number | null): string => (ms === null ? '-' : new Date(ms).toISOString());

/**
 * When a pending intent goes next. A parked one (its endpoint paused or disabled) waits for a
 * person, not a time: its stored instant (9999-12-31) would read as a date.
 */
function formatNext(intent: IntentRecord): string {
  if (intent.nextAttemptAt >= PARKED_AT)
    return `parked: endpoint ${intent.endpoint ?? '?'} is paused or disabled (outbox endpoint resume)`;
  return `next ${iso(intent.nextAttemptAt)}`;
}

/** The waits of an intent's policy: its schedule, or its backoff, and the Retry-After it obeys. */
function formatWaits(policy: IntentRecord['policy']): string {
  const waits =
    policy.schedule != null
      ? `schedule ${policy.schedule.map(formatDuration).join(', ')} (${policy.jitter === 'none' ? 'exact' : 'up to +10 % jitter'})`
      : `backoff ${policy.baseDelayMs}..${policy.maxDelayMs} ms (${policy.jitter} jitter)`;
  const retryAfter = Number.isFinite(policy.maxRetryAfterMs)
    ? `Retry-After obeyed up to ${formatDuration(policy.maxRetryAfterMs)}`
    : 'Retry-After obeyed up to the deadline';
  return `${waits}; ${retryAfter}`;
}

/** One line per intent, for `oncely outbox list`. */
export function formatIntentLine(intent: IntentRecord): string {
  const attempts = `${intent.attemptCount}/${intent.policy.maxAttempts}`;
  const why = intent.outcome
    ? `${intent.outcome.stopReason}${intent.outcome.status === null ? '' : ` ${intent.outcome.status}`}`
    : formatNext(intent);
  const order = intent.orderingKey === null ? '' : `  order ${intent.orderingKey}`;
  return `${intent.state.padEnd(9)}  ${attempts.padStart(5)}  ${intent.key}  ${intent.method} ${intent.target}  ${why}${order}`;
}

/** One attempt as a line: number, offset from the intent's creation, worker, outcome, status, wait. */
export function formatAttemptEntry(attempt: AttemptEntry, createdAt: number): string {
  const offset = `+${((attempt.startedAt - createdAt) / 1000).toFixed(3)}s`;
  const outcome = attempt.outcome ?? (attempt.endedAt === null ? 'open' : '?');
  const notes = [
    attempt.detail,
    attempt.delayMs === null ? null : `wait ${attempt.delayMs} ms`,
  ].filter((n): n is string => n !== null);
  return [
    `#${attempt.attempt}`.padEnd(3),
    offset.padStart(9),
    String(attempt.status ?? '---'),
    outcome.padEnd(7),
    attempt.worker,
    notes.join('; '),
  ]
    .join('  ')
    .trimEnd();
}

/**
 * What an attempt's response left in the log, under its line in `outbox show`: how long it took,
 * its headers, and a preview of the first 4 KiB kept (all of them in `--json`, base64 included).
 */
export function formatAttemptLog(attempt: AttemptEntry): string[] {
  const lines = attempt.durationMs === null ? [] : [`took ${attempt.durationMs} ms`];
  const response = attempt.response;
  if (response !== null) {
    const headers = Object.entries(response.headers).map(([n, v]) => `${n}: ${v}`);
    lines.push(`headers ${headers.join('; ') || '(none)'}`);
    const text = responseText(response);
    const size = `${response.body.byteLength} bytes${response.truncated ? ', cut at the bound' : ''}`;
    lines.push(
      text === null
        ? `body ${size}, not UTF-8 text (--json has it in base64)`
        : `body ${size}: ${preview(response.body)}`,
    );
  }
  return lines.map((line) => `      ${line}`);
}

/** The whole report of one intent, for `oncely outbox show`. */
export function formatIntentReport({ intent, attempts }: IntentReport): string {
  const lines = [
    `intent ${intent.key}: ${intent.state}`,
    `  ${intent.method} ${intent.target}`,
    `  created ${iso(intent.createdAt)} by ${intent.createdBy}; deadline ${iso(intent.deadlineAt)}`,
    ...(intent.orderingKey === null
      ? []
      : [`  ordering key ${intent.orderingKey}: after every earlier intent of this key`]),
    `  attempts ${intent.attemptCount} of ${intent.policy.maxAttempts}; timeout ${intent.policy.attemptTimeoutMs} ms; ${formatWaits(intent.policy)}`,
    `  headers ${JSON.stringify(intent.headers)}${intent.secretHeaders.length > 0 ? `; re-supplied at send time: ${intent.secretHeaders.join(', ')}` : ''}`,
    `  payload ${intent.body.byteLength} bytes: ${preview(intent.body)}`,
  ];
  if (intent.state === 'pending')
    lines.push(`  ${formatNext(intent).replace(/^next /, 'next attempt at ')}`);
  if (intent.outcome) {
    const o = intent.outcome;
    lines.push(
      `  outcome ${o.stopReason}${o.status === null ? '' : `, status ${o.status}`}, at ${iso(o.finishedAt)}${o.detail ? `: ${o.detail}` : ''}`,
    );
    if (o.body) lines.push(`  receipt ${preview(o.body)}`);
    if (intent.state === 'unknown')
      lines.push(
        '  the receiver may have done the work: retry only under this same key (oncely outbox retry)',
      );
  }
  for (const a of attempts)
    lines.push(`  ${formatAttemptEntry(a, intent.createdAt)}`, ...formatAttemptLog(a));
  return `${lines.join('\n')}\n`;
}

function preview(bytes: Uint8Array): string {
  const text = new TextDecoder().decode(bytes.subarray(0, 200));
  return `${text}${bytes.byteLength > 200 ? '…' : ''}`.replace(/\s+/g, ' ');
}
