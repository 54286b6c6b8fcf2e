/**
 * A request the middleware has admitted: its caller (resolved once), its body (read once, within
 * the limit) and the value the service's `validate` step made of it. Handlers use these instead
 * of reading or parsing the request again.
 */
export interface AdmittedRequest<V = unknown> {
  readonly scope: string;
  readonly body: Uint8Array;
  readonly value: V;
}

/** What a service's `validate` step sees: the request (headers, URL), its caller and its bytes. */
export interface ValidationInput {
  readonly request: Request;
  readonly scope: string;
  /** The body, read once by the middleware within its limit. */
  readonly body: Uint8Array;
}

/** The value the handler will be given, or the refusal to answer instead (nothing is stored). */
export type Validation<V> =
  | { readonly ok: true; readonly value: V }
  | { readonly ok: false; readonly response: Response };

/**
 * A service's own check of a request, run by the middleware after the key and the body are read
 * and before the ledger is touched: a refusal here changes nothing and never pins a key to a typo
 * (Stripe's rule too: a request that fails validation is not saved).
 */
export type Validate<V> = (input: ValidationInput) => Validation<V> | Promise<Validation<V>>;
