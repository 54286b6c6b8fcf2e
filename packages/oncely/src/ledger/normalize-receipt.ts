import type { Receipt } from '../contract/receipt.js';

/**
 * Checks that an effect returned a Receipt and copies it: header names lower-cased (the Receipt
 * contract), body bytes copied so a later change to the caller's buffer cannot alter what a
 * replay sends. Returns an error message instead of throwing, for the caller to decide.
 */
export function normalizeReceipt(value: unknown): Receipt | string {
  if (typeof value !== 'object' || value === null)
    return `the effect must return a Receipt, got ${value === null ? 'null' : typeof value}`;
  const { status, headers, body } = value as Partial<Receipt>;
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 100 || status > 599) {
    return `receipt status must be an integer from 100 to 599, got ${String(status)}`;
  }
  if (
    !Array.isArray(headers) ||
    !headers.every(
      (h) =>
        Array.isArray(h) && h.length === 2 && typeof h[0] === 'string' && typeof h[1] === 'string',
    )
  ) {
    return 'receipt headers must be an array of [name, value] string pairs';
  }
  if (!(body instanceof Uint8Array)) return 'receipt body must be a Uint8Array';
  return {
    status,
    headers: headers.map(([name, v]) => [name.toLowerCase(), v] as const),
    // A typed-array copy (one memcpy): Uint8Array.from walked the bytes one by one.
    body: new Uint8Array(body),
  };
}
