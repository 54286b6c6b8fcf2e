import { readFileSync } from 'node:fs';
import {
  createClient,
  isHttpRetryError,
  isRetryError,
  summarizeReport,
  wasNeverSent,
  type RetryReport,
  describeTransportFailure,
  InvalidOptionError,
  HEADER,
  keyFor,
  validateKey,
  systemClock,
  type Clock,
  type Random,
} from 'oncely';
import { formatAttempt } from './format-report.js';
import { EXIT } from '../exit.js';

export const DELIVER_METHODS = ['POST', 'PUT', 'PATCH'] as const;

/** Defaults of `oncely deliver`. */
export const DEFAULT_DELIVER = {
  /** @default 'POST' */
  method: 'POST',
  /** The webhook storm (docs/origins.md): cap attempts; twelve was the storm. @default 5 */
  maxAttempts: 5,
  /** @default 10000 */
  attemptTimeoutMs: 10_000,
} as const;

/** One notification to deliver, already parsed. */
export interface DeliverRequest {
  readonly url: string;
  /** JSON text, sent byte for byte. */
  readonly data: string;
  readonly method: string;
  /** Absent: derived from method, URL and the canonical data, so a rerun is the same intent. */
  readonly key?: string | undefined;
  readonly headers?: ReadonlyArray<readonly [string, string]>;
  readonly maxAttempts?: number;
  readonly deadlineAt?: number;
  readonly attemptTimeoutMs?: number;
  readonly baseDelayMs?: number;
  readonly maxDelayMs?: number;
  readonly maxRetryAfterMs?: number;
  readonly schedule?: readonly number[];
  readonly json?: boolean;
}

export interface DeliverIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  readonly fetch?: typeof globalThis.fetch;
  readonly clock?: Clock;
  readonly random?: Random;
  readonly signal?: AbortSignal;
}

export interface ResponseSummary {
  readonly status: number;
  readonly idempotentReplayed: boolean;
  readonly headers: Record<string, string>;
  readonly body: string;
  /** The body parsed, when it is JSON. */
  readonly bodyJson?: unknown;
}

/** What `--json` prints: the whole report and the final response, for scripts and end-to-end tests. */
export interface DeliverResult {
  readonly url: string;
  readonly method: string;
  readonly key: string;
  readonly delivered: boolean;
  readonly exitCode: number;
  readonly report: RetryReport;
  /** The last response, or null when the last attempt got none (a lost ack, a timeout). */
  readonly response: ResponseSummary | null;
}

/**
 * Exit codes: 0 only on a 2xx. A refusal (fatal or unlisted status) is 3 whatever came before;
 * an unknown outcome (the work may have happened) is 6 before the budget (4) and deadline (5)
 * codes, because a script must not resend as new what may already be done. When no attempt's
 * request ever left (connection refused, DNS failure), nothing happened: 8, safe to rerun.
 */
export function exitCodeFor(report: RetryReport): number {
  if (report.stopReason === 'ok') return EXIT.ok;
  if (report.stopReason === 'fatal_status' || report.stopReason === 'unlisted_status')
    return EXIT.fatalStatus;
  if (report.outcome === 'unknown') return EXIT.unknown;
  if (wasNeverSent(report)) return EXIT.notSent;
  if (report.stopReason === 'budget_exhausted' || report.stopReason === 'retry_budget_drained')
    return EXIT.budgetExhausted;
  if (report.stopReason === 'deadline_passed' || report.stopReason === 'retry_after_too_long')
    return EXIT.deadlinePassed;
  return EXIT.failure;
}

/**
 * The URL, method and key of a delivery, checked before anything is printed or sent: bad JSON, a
 * bad URL or a bad key is a usage error, never a half-run. Without --key, the key is derived from
 * method, URL and the canonical data, so a rerun (with or without --journal) is the same intent.
 */
export function resolveDelivery(request: Pick<DeliverRequest, 'url' | 'method' | 'data' | 'key'>): {
  url: string;
  method: string;
  key: string;
} {
  const url = checkUrl(request.url);
  const method = request.method.toUpperCase();
  let parsed: unknown;
  try {
    parsed = JSON.parse(request.data);
  } catch (error) {
    throw new InvalidOptionError(
      '--data',
      request.data.length > 60 ? `${request.data.slice(0, 60)}…` : request.data,
      `JSON text (${(error as Error).message})`,
    );
  }
  const key =
    request.key === undefined
      ? keyFor({ method, url, data: parsed }, 'deliver')
      : validateKey(request.key);
  return { url, method, key };
}

/** Delivers one notification and prints every attempt; resolves with the result instead of exiting. */
export async function deliver(request: DeliverRequest, io: DeliverIo): Promise<DeliverResult> {
  const { url, method, key } = resolveDelivery(request);
  const derived = request.key === undefined;
  const clock = io.clock ?? systemClock;
  const headers = new Headers([[HEADER.contentType, 'application/json']]);
  for (const [name, value] of request.headers ?? []) headers.set(name, value);

  const client = createClient({
    clock,
    ...(io.fetch ? { fetch: io.fetch } : {}),
    ...(io.random ? { random: io.random } : {}),
    ...(request.baseDelayMs === undefined ? {} : { baseDelayMs: request.baseDelayMs }),
    ...(request.maxDelayMs === undefined ? {} : { maxDelayMs: request.maxDelayMs }),
    ...(request.maxRetryAfterMs === undefined ? {} : { maxRetryAfterMs: request.maxRetryAfterMs }),
    ...(request.schedule === undefined ? {} : { schedule: request.schedule }),
  });
  const startedAt = clock.now();
  if (!request.json) {
    io.out(`${method} ${url}\n`);
    io.out(
      `  key ${key}${derived ? ' (derived from method, URL and data; pass --key to choose)' : ''}\n`,
    );
  }
  let report: RetryReport;
  let response: Response | undefined;
  try {
    ({ report, response } = await client.request(url, {
      method,
      headers,
      body: request.data,
      idempotencyKey: key,
      maxAttempts: request.maxAttempts ?? DEFAULT_DELIVER.maxAttempts,
      attemptTimeoutMs: request.attemptTimeoutMs ?? DEFAULT_DELIVER.attemptTimeoutMs,
      ...(request.deadlineAt === undefined ? {} : { deadlineAt: request.deadlineAt }),
      ...(io.signal ? { signal: io.signal } : {}),
      ...(request.json
        ? {}
        : { onAttempt: (record) => io.out(`  ${formatAttempt(record, startedAt)}\n`) }),
    }));
  } catch (error) {
    if (!isRetryError(error)) throw error;
    report = error.report;
    // Only a response to the last attempt is "the" response; after a lost ack or a refused
    // connection there is none.
    response = isHttpRetryError(error) ? error.response : undefined;
  }

  const exitCode = exitCodeFor(report);
  const result: DeliverResult = {
    url,
    method,
    key,
    delivered: exitCode === EXIT.ok,
    exitCode,
    report,
    response: response ? await summarize(response) : null,
  };
  if (request.json) {
    io.out(`${JSON.stringify(result, null, 2)}\n`);
  } else {
    io.out(
      `${result.delivered ? 'delivered' : wasNeverSent(report) ? 'not sent' : 'not delivered'}: ${summarizeReport(report)}\n`,
    );
    if (result.response) {
      const replayed = result.response.idempotentReplayed
        ? ` (${HEADER.idempotentReplayed}: true)`
        : '';
      io.out(
        `response ${result.response.status}${replayed}\n${result.response.body}${result.response.body.endsWith('\n') ? '' : '\n'}`,
      );
    } else {
      const last = report.attempts[report.attempts.length - 1];
      io.out(
        `response: none (the last attempt: ${last?.transport ? describeTransportFailure(last.transport) : 'no reply'})\n`,
      );
    }
  }
  if (!result.delivered) io.err(`oncely: ${explain(report)}\n`);
  return result;
}

function explain(report: RetryReport): string {
  const why =
    report.outcome === 'unknown'
      ? 'sent, no answer: the outcome is unknown, the receiver may have done the work; resend only under the same key'
      : wasNeverSent(report)
        ? 'not sent: no attempt reached the receiver, nothing happened; safe to retry, even without a key'
        : `not delivered: ${report.stopReason.replaceAll('_', ' ')}`;
  return `${why} (${summarizeReport(report)})`;
}

async function summarize(response: Response): Promise<ResponseSummary> {
  const body = await response.text();
  let bodyJson: unknown;
  try {
    bodyJson = JSON.parse(body);
  } catch {
    bodyJson = undefined;
  }
  return {
    status: response.status,
    idempotentReplayed: response.headers.get(HEADER.idempotentReplayed) === 'true',
    headers: Object.fromEntries(response.headers),
    body,
    ...(bodyJson === undefined ? {} : { bodyJson }),
  };
}

function checkUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InvalidOptionError('url', text, 'an absolute http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new InvalidOptionError('url', text, 'an absolute http:// or https:// URL');
  return url.href;
}

/** `--data`: the body itself, or `@FILE` for a file's bytes (an unreadable file is one line, exit 2). */
export function readData(text: string): string {
  if (!text.startsWith('@')) return text;
  try {
    return readFileSync(text.slice(1), 'utf8');
  } catch (error) {
    throw new InvalidOptionError(
      '--data',
      text,
      `@FILE naming a readable file (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`,
    );
  }
}
