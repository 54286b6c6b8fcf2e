import { createClient, observeResponse, type Client } from '../client/fetch-client.js';
import { defaultClassifyError } from '../client/retry.js';
import { isRetryError } from '../client/retry-report.js';
import { HEADER } from '../contract/headers.js';
import { activeSecrets, type RotatingSecret } from '../contract/secret-rotation.js';
import { signWebhookWith } from '../contract/standard-webhooks.js';
import { nodeEd25519 } from './node-ed25519.js';
import { captureResponse } from './attempt-response.js';
import type { Clock } from '../time/clock.js';
import type { IntentRecord } from './intent.js';
import type { AttemptResult } from './next-step.js';
import { sendOnWire, wireRequest } from './wire-attempt.js';
import type { WireSend } from './wire-send.js';
import { DEADLINE_BEFORE_DELIVERY, deliveryOf, type HookSend } from './outbox-deliver.js';

/** The longest receipt body kept in the journal; a longer one is cut (the status is what counts). */
export const MAX_RECEIPT_BYTES = 64 * 1024;

export interface SendContext {
  readonly fetch: typeof globalThis.fetch;
  readonly clock: Clock;
  readonly timer: Clock;
  /** The secret headers' values, re-supplied now (never read from the journal). */
  readonly secretHeaders: Readonly<Record<string, string>>;
  /** Standard Webhooks signing secrets (OutboxWorkerOptions.signingSecret); unsigned when absent. */
  readonly signingSecret: string | readonly (string | RotatingSecret)[] | undefined;
  /** The intent's endpoint: its current URL and unexpired secrets, in place of the above. */
  readonly endpoint?: { readonly url: string; readonly secrets: readonly string[] } | undefined;
  /** The attempt span's W3C `traceparent` (attempt-tracing.ts); none when not traced. */
  readonly traceparent?: string | undefined;
  /**
   * The worker's own node:http sender (wire-send.ts), used when no `fetch` was given: the same
   * request and the same reading of its answer, without a Response made for it.
   */
  readonly wire?: WireSend | undefined;
  /** The worker's `deliver` hook (outbox-deliver.ts): in place of any HTTP request. */
  readonly deliver?: HookSend | undefined;
  /** This attempt's number (the hook is told it). @default the intent's attempts so far + 1 */
  readonly attempt?: number | undefined;
}

/** The key's header, its name as the wire and a `deliver` hook see it. */
const IDEMPOTENCY_KEY = HEADER.idempotencyKey.toLowerCase();
const utf8 = new TextDecoder();

/**
 * One attempt of an intent, through the client's own request path (timeouts, body read within
 * the timeout, transport failures classified as unknown), with a budget of one: the journal, not
 * an in-process loop, decides whether another follows. The key goes out as Idempotency-Key and,
 * when signing, as webhook-id: the same on every attempt, across restarts.
 * Not an async function: a batch makes one attempt per intent, and the hook's or the wire's own
 * promise is handed back as it is, without another promise and frame wrapped around it.
 */
export function sendAttempt(
  intent: IntentRecord,
  context: SendContext,
  client?: Client,
): Promise<AttemptResult> {
  try {
    const headers = attemptHeaders(intent, context);
    const target = context.endpoint?.url ?? intent.target;
    if (context.deliver) return sendThroughHook(intent, context, target, headers);
    return sendOverHttp(intent, context, target, headers, client ?? clientFor(context));
  } catch (error) {
    return Promise.reject(error);
  }
}

/** The headers an attempt goes out with: the intent's, the secret ones, the key, tracing, signing. */
function attemptHeaders(intent: IntentRecord, context: SendContext): Record<string, string> {
  const headers: Record<string, string> = { ...intent.headers, ...context.secretHeaders };
  headers[IDEMPOTENCY_KEY] = intent.key;
  if (context.traceparent !== undefined) headers['traceparent'] = context.traceparent;
  const nowMs = context.clock.now();
  const secrets = signingSecretsOf(context, nowMs);
  if (secrets.length > 0)
    Object.assign(
      headers,
      signWebhookWith(nodeEd25519, secrets, intent.key, nowMs, utf8.decode(intent.body)),
    );
  return headers;
}

/** The attempt over HTTP: the worker's own wire sender, else the client with the given fetch. */
async function sendOverHttp(
  intent: IntentRecord,
  context: SendContext,
  target: string,
  headers: Record<string, string>,
  client: Client,
): Promise<AttemptResult> {
  const onWire = context.wire && wireRequest(intent, target, headers, context.clock);
  const sentAt = context.clock.now();
  const result = onWire
    ? await sendOnWire(context.wire!, onWire)
    : await requestOnce(intent, target, client, headers);
  return { ...result, durationMs: context.clock.now() - sentAt };
}

/** The attempt through the worker's `deliver` hook, which times it as a request would be. */
function sendThroughHook(
  intent: IntentRecord,
  context: SendContext,
  target: string,
  headers: Record<string, string>,
): Promise<AttemptResult> {
  const attempt = context.attempt ?? intent.attemptCount + 1;
  const delivery = deliveryOf(intent, attempt, target, headers, context.clock.now());
  if (delivery === undefined) return Promise.resolve(DEADLINE_BEFORE_DELIVERY);
  return context.deliver!(delivery);
}

/** The request itself through the client, its answer (or failure) classified, its response captured. */
async function requestOnce(
  intent: IntentRecord,
  target: string,
  client: Client,
  headers: Record<string, string>,
): Promise<AttemptResult> {
  try {
    const { response } = await client.request(target, {
      method: intent.method,
      headers,
      ...(intent.method === 'GET' || intent.method === 'HEAD'
        ? {}
        : { body: intent.body as Uint8Array<ArrayBuffer> }),
      idempotencyKey: intent.key,
      maxAttempts: 1,
      attemptTimeoutMs: intent.policy.attemptTimeoutMs,
      ...(intent.deadlineAt === null ? {} : { deadlineAt: intent.deadlineAt }),
    });
    const { bytes, captured } = await captureResponse(response);
    return {
      observation: observeResponse(response),
      body: bytes.byteLength > MAX_RECEIPT_BYTES ? bytes.slice(0, MAX_RECEIPT_BYTES) : bytes,
      hint: deliveryHint(response),
      response: captured,
    };
  } catch (error) {
    if (isRetryError(error)) {
      if (error.lastValue instanceof Response)
        return {
          observation: observeResponse(error.lastValue),
          body: null,
          hint: deliveryHint(error.lastValue),
          response: (await captureResponse(error.lastValue)).captured,
        };
      return { observation: defaultClassifyError(error.cause), body: null };
    }
    return { observation: defaultClassifyError(error), body: null };
  }
}

export function clientFor(context: Pick<SendContext, 'fetch' | 'clock' | 'timer'>): Client {
  return createClient({ fetch: context.fetch, clock: context.clock, timer: context.timer });
}

/** The receiver's `webhook-delivery` header (`disable`, `abort-message`), lower case. */
function deliveryHint(response: Response): string | null {
  return response.headers.get('webhook-delivery')?.trim().toLowerCase() ?? null;
}

/** An endpoint's unexpired secrets, else the worker's own (entries with expiresAt rotate). */
function signingSecretsOf(context: SendContext, nowMs: number): string | readonly string[] {
  if (context.endpoint && context.endpoint.secrets.length > 0) return context.endpoint.secrets;
  const own = context.signingSecret;
  if (own === undefined) return [];
  return typeof own === 'string' ? own : activeSecrets(own, nowMs);
}
