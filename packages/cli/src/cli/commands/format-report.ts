import { describeTransportFailure, type AttemptRecord } from 'oncely';

/**
 * One attempt as a line a person reads: when, what came back, and the wait chosen after it and
 * why. The webhook storm (docs/origins.md): a summary that hides the eleven 429s is how the twelve-POST bug shipped.
 *
 *   #1  +0.000s  429 retry    wait 1000 ms (retry-after 1 s)
 *   #2  +1.004s  ---  unknown  sent, no response (socket closed): fetch failed: other side closed (UND_ERR_SOCKET); wait 37 ms (backoff)
 *   #3  +1.043s  ---  retry    not sent (connection refused): fetch failed: connect ECONNREFUSED 127.0.0.1:8080; wait 80 ms (backoff)
 *   #4  +1.125s  200 ok
 */
export function formatAttempt(record: AttemptRecord, startedAt: number): string {
  const seconds = (record.startedAt - startedAt) / 1000;
  // An attempt not timed (`timings: false`) has no start to show.
  const offset = Number.isNaN(seconds) ? '+?' : `+${seconds.toFixed(3)}s`;
  const status = record.status === undefined ? '---' : String(record.status);
  const parts = [
    `#${record.attempt}`.padEnd(3),
    offset.padStart(9),
    status,
    record.outcome.padEnd(7),
  ];
  const notes: string[] = [];
  // No status is shown for an attempt without a response: the server sent none.
  if (record.transport !== undefined)
    notes.push(
      `${describeTransportFailure(record.transport)}${record.detail === undefined ? '' : `: ${record.detail}`}`,
    );
  else if (record.detail !== undefined) notes.push(record.detail);
  if (record.delayMs !== undefined)
    notes.push(`wait ${record.delayMs} ms (${describeDelay(record)})`);
  else if (record.retryAfter?.kind === 'delay')
    notes.push(`server asked for ${formatMs(record.retryAfter.delayMs)}`);
  return `${parts.join('  ')}${notes.length > 0 ? `  ${notes.join('; ')}` : ''}`.trimEnd();
}

function describeDelay(record: AttemptRecord): string {
  const ra = record.retryAfter;
  switch (record.delayReason) {
    case 'retry-after':
      if (ra?.kind !== 'delay') return 'retry-after';
      return ra.measuredAgainst === 'delta'
        ? `retry-after ${ra.raw} s`
        : `retry-after date, ${formatMs(ra.delayMs)} against the ${ra.measuredAgainst === 'server-date' ? "server's Date" : 'local clock'}`;
    case 'retry-after-unparsed':
      return `backoff; Retry-After ${JSON.stringify(ra?.kind === 'unparsed' ? ra.raw : '')} unparsed`;
    default:
      return record.delayReason ?? 'backoff';
  }
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
