import type { Receipt } from '../contract/receipt.js';
import { HEADER } from '../contract/headers.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * A receipt whose body is JSON: for effects that are not HTTP handlers (a service method run
 * through the ledger directly). Extra headers are added after content-type.
 */
export function jsonReceipt(
  status: number,
  value: unknown,
  headers: ReadonlyArray<readonly [string, string]> = [],
): Receipt {
  return {
    status,
    headers: [
      [HEADER.contentType.toLowerCase(), 'application/json'],
      ...headers.map(([n, v]) => [n.toLowerCase(), v] as const),
    ],
    body: encoder.encode(JSON.stringify(value)),
  };
}

/** The body of a receipt parsed as JSON. Throws a SyntaxError when it is not JSON. */
export function receiptJson<T = unknown>(receipt: Receipt): T {
  return JSON.parse(decoder.decode(receipt.body)) as T;
}
