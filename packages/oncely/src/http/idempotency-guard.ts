import { HEADER } from '../contract/headers.js';
import type { Receipt } from '../contract/receipt.js';
import type { Claim, ExecuteResult } from '../ledger/ledger-result.js';
import type { Step } from '../ledger/steps.js';
import { requestWithBody } from './common-responses.js';
import { LazyFingerprintInput, LazyValidationInput } from './guard-inputs.js';
import type { ResolvedIdempotencyOptions } from './idempotency-options.js';
import type { Incoming } from './incoming.js';
import { keyFromHeader } from './key-header.js';
import { problemResponse, type ProblemKind } from './problem.js';
import {
  answerToReceipt,
  bytesToReceipt,
  type AnswerBytes,
  type HeaderPairs,
} from './receipt-response.js';
import type { AdmittedRequest } from './request-validation.js';
import { sqlHandleOf } from './sql-handle-of.js';
import { executeInLedger } from './guard-ledger-run.js';
import type { GuardSql } from './guard-sql.js';

/**
 * What a guarded handler is given besides the request: the admitted request, its key, and the
 * ledger's transaction handle, to use for every write of its effect, so the effect and the receipt
 * commit together. Passed as an explicit argument (not AsyncLocalStorage) so the type checker sees
 * that a handler writing outside `tx` is writing outside the transaction.
 */
export interface IdempotencyContext<Tx, V = unknown> extends AdmittedRequest<V> {
  readonly tx: Tx;
  /**
   * The same transaction as a dialect-neutral SQL handle (`$1` placeholders, `run/get/all`): a
   * handler written against it runs on SQLite and on PostgreSQL alike. On a store that is not
   * SQL (memory) every call rejects, saying so.
   */
  readonly sql: GuardSql;
  readonly key: string;
  readonly claim: Claim;
  /**
   * A recovery point (docs/steps.md): `step(name, fn)` runs `fn` in a transaction of its own,
   * with a key derived for the service it calls (`step.key`), and commits its result before it
   * resolves; a retry of this request gets the recorded result without running `fn` again,
   * and goes on with the steps left. The route's own writes (`tx`, `sql`) commit with the
   * receipt, after the last step.
   */
  readonly step: Step<Tx>;
}

/**
 * The guard's answer. A receipt is answered as itself, not as a Response, so an adapter that
 * writes to a node socket writes its bytes without making a web Response first:
 * - `replayed`: a stored receipt, sent again with `Idempotent-Replayed: true`;
 * - `first`: the handler's own answer (`headers`: every header it set, not only the stored ones);
 * - a Response: a refusal (401, 400, 409, 413, 422, 503...) or an answer made outside the ledger.
 */
export type GuardAnswer =
  | Response
  | { readonly kind: 'replayed'; readonly receipt: Receipt }
  | { readonly kind: 'first'; readonly receipt: Receipt; readonly headers: HeaderPairs };

/** The handler behind the guard; `context` is undefined for a keyless request passed through. */
export type GuardedHandler<Tx, V, I extends Incoming> = (
  incoming: I,
  context: IdempotencyContext<Tx, V> | undefined,
) => Response | AnswerBytes | Promise<Response | AnswerBytes>;

/** The guard of one carrier of requests: `scopeOf` reads the caller from what it carries. */
export type IdempotencyGuard<Tx, V, I extends Incoming> = (
  incoming: I,
  next: GuardedHandler<Tx, V, I>,
) => Promise<GuardAnswer>;

/**
 * Speaks the receiver's wire contract (docs/design.md) in front of a handler, in one fixed order:
 *
 * 1. scope: `scopeOf` is called once; none is 401 with a WWW-Authenticate challenge;
 * 2. key: a missing key is 400 (or, with `onKeyless`, the request is answered outside the
 *    ledger by that handler after steps 3 and 4; with `missingKey: 'pass-through'`, the handler
 *    runs outside the ledger, context undefined), a malformed one 400;
 * 3. body: read once, within `maxBodyBytes` (413 past it, without buffering the rest);
 * 4. validate: the service's own check of the bytes (415, 400, 422...); a refusal changes nothing;
 * 5. ledger: 422 when the key was used with another payload (checked before the in-flight check);
 *    409 + Retry-After while the first request holds its lease; the stored status, allow-listed
 *    headers and body plus `Idempotent-Replayed: true` for an exact retry; 503 + Retry-After when
 *    the ledger is down, and then the handler never runs;
 * 6. handler: called with the context (scope, key, bytes, the checked value, the transaction).
 *    A handler that throws gets 500, its transaction rolls back and the key is released; an
 *    answer the ledger's `shouldStore` refuses (5xx by default) is passed on but not stored.
 *
 * The method check (which requests are guarded at all) is the caller's, before this.
 */
export function createIdempotencyGuard<Tx, V, I extends Incoming>(
  o: ResolvedIdempotencyOptions<Tx, V>,
  scopeOf: (incoming: I) => string | undefined | Promise<string | undefined>,
): IdempotencyGuard<Tx, V, I> {
  const sqlOf = sqlHandleOf(o.ledger.store);
  const problem = (kind: ProblemKind, detail: string, retryAfterMs?: number): Response =>
    problemResponse(kind, detail, { retryAfterMs, typeBase: o.problemTypeBase });

  /** Steps 3 and 4: the body, read once, and the service's check of it. */
  async function admit(incoming: I, scope: string): Promise<AdmittedRequest<V> | Response> {
    const reading = incoming.readBody(o.maxBodyBytes);
    const read = isPromiseLike(reading) ? await reading : reading;
    if (read.kind === 'too_large') {
      const detail = `the body exceeds ${read.limitBytes} bytes`;
      return problemResponse('payload_too_large', detail, {
        typeBase: o.problemTypeBase,
        extensions: { maxBodyBytes: read.limitBytes },
      });
    }
    const checking = o.validate(new LazyValidationInput(incoming, scope, read.bytes));
    const checked = isPromiseLike(checking) ? await checking : checking;
    if (!checked.ok) return checked.response;
    return { scope, body: read.bytes, value: checked.value };
  }

  /**
   * One request through the steps above. A throw (the handler, or scopeOf, validate,
   * fingerprintOf) is a 500: the ledger has rolled the effect back and released the key, so the
   * client may retry with the same key.
   */
  async function guard(incoming: I, next: GuardedHandler<Tx, V, I>): Promise<GuardAnswer> {
    try {
      // The hooks below answer at once by default: awaited only when they return a promise, so a
      // request does not wait a turn of the microtask queue for each of them.
      const scoping = scopeOf(incoming);
      const scope = isPromiseLike(scoping) ? await scoping : scoping;
      if (scope === undefined || scope === '') return o.unauthenticated(incoming.request());
      const header = incoming.header(HEADER.idempotencyKey);
      // Gradual roll-out: a keyless request is served as if oncely were not there (documented, off by default).
      if (header === null && o.missingKey === 'pass-through')
        return asAnswer(await next(incoming, undefined));
      if (header === null && o.onKeyless !== undefined) {
        const admitted = await admit(incoming, scope);
        return admitted instanceof Response
          ? admitted
          : o.onKeyless(requestWithBody(incoming.request(), admitted.body), admitted);
      }
      if (header === null)
        return problem(
          'missing_key',
          `${incoming.method} requests must carry an ${HEADER.idempotencyKey} header`,
        );
      const read = keyFromHeader(header, o.minKeyLength);
      if (!read.ok) return problem('invalid_key', read.problem);
      const key = read.key;

      const admitted = await admit(incoming, scope);
      if (admitted instanceof Response) return admitted;
      const fingerprinting = o.fingerprintOf(new LazyFingerprintInput(incoming, admitted));
      const fingerprint = isPromiseLike(fingerprinting) ? await fingerprinting : fingerprinting;

      let handlerHeaders: HeaderPairs | undefined;
      /** Runs the handler; its answer as a receipt, unless nobody will receive it. */
      const respond = async (context: IdempotencyContext<Tx, V>): Promise<Receipt> => {
        const response = await next(incoming, context);
        // Nobody will receive this answer (the client left, or the server answered for the handler:
        // a timeout, the end of a shutdown's grace): roll back rather than commit it unseen.
        incoming.throwIfAborted();
        const { receipt, headers } =
          response instanceof Response
            ? await answerToReceipt(response, o.receiptHeaderSet)
            : bytesToReceipt(response, o.receiptHeaderSet);
        handlerHeaders = headers;
        return receipt;
      };
      const request = { scope, key, fingerprint };
      const result = await executeInLedger(o, sqlOf, request, admitted, respond);
      return answerOf(o, problem, result, handlerHeaders, incoming);
    } catch (error) {
      if (!incoming.aborted) o.onError(error, incoming.request());
      return problem(
        'internal_error',
        'the request failed and was rolled back; it may be retried with the same key',
      );
    }
  }

  return guard;
}

/**
 * True for a value `await` would wait on (any thenable, not only a native promise: a hook may
 * return another library's); the guard awaits only those, so a hook that answers at once costs
 * no turn of the microtask queue.
 */
function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/** An answer made outside the ledger, as the guard answers it. */
function asAnswer(answer: Response | AnswerBytes): GuardAnswer {
  if (answer instanceof Response) return answer;
  const { status, headers, body } = answer;
  return { kind: 'first', receipt: { status, headers, body }, headers };
}

/** Step 5's answers: the receipt to send, or the problem the ledger's result calls for. */
function answerOf<Tx, V, I extends Incoming>(
  o: ResolvedIdempotencyOptions<Tx, V>,
  problem: (kind: ProblemKind, detail: string, retryAfterMs?: number) => Response,
  result: ExecuteResult,
  handlerHeaders: HeaderPairs | undefined,
  incoming: I,
): GuardAnswer {
  switch (result.kind) {
    case 'executed':
    case 'not_stored':
      return { kind: 'first', receipt: result.receipt, headers: handlerHeaders ?? [] };
    case 'replayed':
      return { kind: 'replayed', receipt: result.receipt };
    case 'conflict':
      return problem(
        'key_reused',
        `this ${HEADER.idempotencyKey} was first used for a different request; use a new key for a new request`,
      );
    case 'in_flight':
      return problem(
        'in_flight',
        'the first request with this key is still being processed; retry after the delay',
        result.retryAfterMs,
      );
    case 'lease_lost':
      return problem(
        'in_flight',
        'another worker took this request over; retry after the delay',
        result.retryAfterMs,
      );
    case 'unavailable':
      o.onError(result.cause, incoming.request());
      return problem(
        'ledger_unavailable',
        'the idempotency ledger cannot be reached; the request was not processed',
        o.unavailableRetryAfterMs,
      );
  }
}
