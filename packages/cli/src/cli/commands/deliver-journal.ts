import { HEADER, type Journal } from 'oncely';
import { DEFAULT_RETRY_POLICY } from 'oncely/policy';
import { formatAttemptEntry, formatIntentLine } from './format-intent.js';
import { type DeliverRequest, DEFAULT_DELIVER, resolveDelivery } from './deliver.js';
import { exitCodeForIntent, runOutbox } from './outbox-run.js';

/** Headers that carry credentials: re-supplied by each run, never recorded (docs/origins.md, "The notes' retry contract": "don't log secrets"). */
export const SECRET_HEADERS = ['authorization', 'proxy-authorization', 'cookie', 'x-api-key'];

export interface JournaledIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  readonly signal: AbortSignal;
  readonly fetch?: typeof globalThis.fetch;
}

/**
 * `oncely deliver --journal FILE`: the intent is recorded (key, target, headers, payload, budget,
 * deadline) before the first attempt, and every attempt is written down as it goes. Run again
 * after a crash, the same command finds the intent under the same key and resumes it with the
 * attempts already made counted, instead of sending a new intent (the dropbox story's fixture A (docs/origins.md)).
 */
export async function deliverJournaled(
  request: DeliverRequest,
  journal: Journal<unknown>,
  io: JournaledIo,
): Promise<number> {
  const { url, method, key } = resolveDelivery(request);
  const headers: Record<string, string> = {
    [HEADER.contentType.toLowerCase()]: 'application/json',
  };
  const secrets: Record<string, string> = {};
  for (const [name, value] of request.headers ?? []) {
    const lower = name.toLowerCase();
    // Credentials are given again on the command line of every run: never written to the journal.
    if (SECRET_HEADERS.includes(lower)) secrets[lower] = value;
    else headers[lower] = value;
  }
  const { intent, created } = await journal.record({
    key,
    target: url,
    method,
    headers,
    secretHeaders: Object.keys(secrets),
    body: request.data,
    maxAttempts: request.maxAttempts ?? DEFAULT_DELIVER.maxAttempts,
    attemptTimeoutMs: request.attemptTimeoutMs ?? DEFAULT_DELIVER.attemptTimeoutMs,
    // `deliver` is the interactive client, journaled or not: its short waits, not the outbox's
    // day-long schedule (DESIGN.md, "Defaults per role").
    ...(request.schedule === undefined
      ? { baseDelayMs: request.baseDelayMs ?? DEFAULT_RETRY_POLICY.baseDelayMs }
      : { schedule: request.schedule }),
    maxDelayMs: request.maxDelayMs ?? DEFAULT_RETRY_POLICY.maxDelayMs,
    maxRetryAfterMs: request.maxRetryAfterMs ?? DEFAULT_RETRY_POLICY.maxRetryAfterMs,
    retryAfterJitterRatio: DEFAULT_RETRY_POLICY.retryAfterJitterRatio,
    jitter: DEFAULT_RETRY_POLICY.jitter,
    ...(request.deadlineAt === undefined ? {} : { deadlineAt: request.deadlineAt }),
    createdBy: 'oncely deliver',
  });
  io.out(`${method} ${url}\n  key ${key}\n`);
  io.out(
    created
      ? '  recorded in the journal before the first attempt\n'
      : intent.state === 'pending'
        ? `  found in the journal (${intent.attemptCount} attempt(s) so far): resuming under the same key\n`
        : `  found in the journal, already ${intent.state}: nothing is sent again\n`,
  );
  if (intent.state === 'pending') {
    await runOutbox(
      journal,
      {
        leaseMs: Math.max(60_000, intent.policy.attemptTimeoutMs * 2),
        batchSize: 1,
        pollMs: 1000,
        watch: false,
        secrets,
        signingSecret: undefined,
        onlyKey: key,
      },
      {
        out: () => undefined,
        err: io.err,
        progressBar: false,
        signal: io.signal,
        ...(io.fetch ? { fetch: io.fetch } : {}),
      },
    );
  }
  const report = (await journal.report(key))!;
  for (const attempt of report.attempts)
    io.out(`  ${formatAttemptEntry(attempt, report.intent.createdAt)}\n`);
  io.out(`${formatIntentLine(report.intent)}\n`);
  const receipt = report.intent.outcome?.body;
  if (receipt)
    io.out(`response ${report.intent.outcome?.status}\n${new TextDecoder().decode(receipt)}\n`);
  const code = report.intent.state === 'pending' ? 130 : exitCodeForIntent(report.intent);
  if (report.intent.state === 'pending')
    io.err(
      'oncely: stopped; the intent stays pending in the journal: run the same command again (with the same -H credentials) to resume it\n',
    );
  else if (code !== 0)
    io.err(
      `oncely: not delivered: ${report.intent.state} (${report.intent.outcome?.stopReason})${report.intent.state === 'unknown' ? '; the receiver may have done the work: resend only under the same key' : ''}\n`,
    );
  return code;
}
