import { isInvalidKeyError, validateKey, type LookupResult } from 'oncely';
import { problemResponse } from 'oncely/http';
import type { DropboxAppDeps } from './dropbox-options.js';
import { DROPBOX_PROBLEMS } from './dropbox-problems.js';

/** `GET /submissions/:key`: the caller's key looked up in the ledger (a malformed key is 400). */
export async function statusLookup<Tx>(
  ledger: DropboxAppDeps<Tx>['ledger'],
  onError: (error: unknown, request: Request) => void,
  caller: string,
  key: string,
  request: Request,
): Promise<Response> {
  try {
    validateKey(key);
  } catch (error) {
    if (isInvalidKeyError(error)) return problemResponse('invalid_key', error.message);
    throw error;
  }
  const result = await ledger.lookup(caller, key);
  if (result.kind === 'unavailable') {
    onError(result.cause, request);
    return problemResponse('ledger_unavailable', 'the idempotency ledger cannot be reached', {
      retryAfterMs: 1000,
    });
  }
  return lookupResponse(key, result);
}

/** The status lookup as HTTP: the ledger's answer, with instants as RFC 3339 text. */
function lookupResponse(
  key: string,
  result: Exclude<LookupResult, { kind: 'unavailable' }>,
): Response {
  const iso = (ms: number): string => new Date(ms).toISOString();
  const headers = { 'cache-control': 'no-store' };
  switch (result.kind) {
    case 'found':
      return Response.json(
        {
          key,
          lookup: 'found',
          status: result.receipt.status,
          receipt: receiptBody(result.receipt.body),
          firstSeenAt: iso(result.firstSeenAt),
          completedAt: iso(result.completedAt),
          expiresAt: iso(result.expiresAt),
        },
        { headers },
      );
    case 'in_flight':
      return Response.json(
        {
          key,
          lookup: 'in_flight',
          firstSeenAt: iso(result.firstSeenAt),
          leaseExpiresAt: iso(result.leaseExpiresAt),
          leaseExpired: result.leaseExpired,
        },
        { headers },
      );
    case 'expired':
      // Seen, and its receipt is gone: resending may repeat it (the notes story's (docs/origins.md) "expired" is not "never seen").
      return problemResponse(
        DROPBOX_PROBLEMS.receipt_expired,
        `the receipt of ${key} expired at ${iso(result.expiredAt)}; resending it may repeat it`,
        {
          extensions: {
            key,
            lookup: 'expired',
            firstSeenAt: iso(result.firstSeenAt),
            expiredAt: iso(result.expiredAt),
          },
        },
      );
    case 'never_seen':
      return problemResponse(
        DROPBOX_PROBLEMS.never_seen,
        `no submission with key ${JSON.stringify(key)} was seen from this caller`,
        { extensions: { key, lookup: 'never_seen' } },
      );
  }
}

function receiptBody(body: Uint8Array): unknown {
  const text = new TextDecoder().decode(body);
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
