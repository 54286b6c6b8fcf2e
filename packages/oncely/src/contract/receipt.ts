/**
 * What a receiver stores for a completed request and answers an exact retry with: the status,
 * the allow-listed headers and the body bytes, exactly as first sent.
 */
export interface Receipt {
  readonly status: number;
  /** Header name/value pairs, lower-case names, from the allow-list only. */
  readonly headers: ReadonlyArray<readonly [string, string]>;
  readonly body: Uint8Array;
}

/** Headers a receipt keeps by default: enough to replay the answer, nothing per-connection. */
export const DEFAULT_RECEIPT_HEADERS = [
  'content-type',
  'location',
  'etag',
  'content-language',
] as const;
