/**
 * What the journal keeps of each attempt's response (docs/outbox.md, "Attempt log"): its headers
 * and the first bytes of its body, bounded so that a receiver answering megabytes (or thousands
 * of headers) cannot grow the journal. Bytes are kept as bytes: a binary or non-UTF-8 body
 * survives whole up to the bound.
 */

/** The first bytes of a response body kept per attempt; the rest is cut and `truncated` set. */
export const ATTEMPT_BODY_BYTES = 4096;
/** At most this many response headers are kept per attempt, in the order they came. */
export const ATTEMPT_HEADER_COUNT = 64;
/** A header value longer than this is cut to it (and `truncated` set). */
export const ATTEMPT_HEADER_VALUE_CHARS = 1024;

/** An attempt's response as the journal keeps it. */
export interface AttemptResponse {
  /** The response headers, names lower case (repeated ones joined by ", "). */
  readonly headers: Readonly<Record<string, string>>;
  /** The body's first {@link ATTEMPT_BODY_BYTES} bytes. */
  readonly body: Uint8Array;
  /** Something was cut: the body was longer, or a header was left out or shortened. */
  readonly truncated: boolean;
}

/** The response's body bytes (empty when it cannot be read) and what the journal keeps of it. */
export async function captureResponse(
  response: Response,
): Promise<{ readonly bytes: Uint8Array; readonly captured: AttemptResponse }> {
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await response.arrayBuffer());
  } catch {
    // Already read or cut: the status and headers still say what happened.
    bytes = new Uint8Array(0);
  }
  return { bytes, captured: boundedResponse(response.headers, bytes) };
}

/**
 * The bounded copy of a response's headers (a `Headers`, or name-value pairs with lower-case
 * names) and body.
 */
export function boundedResponse(
  headers: Iterable<readonly [string, string]>,
  bytes: Uint8Array,
): AttemptResponse {
  const kept: Record<string, string> = {};
  let truncated = bytes.byteLength > ATTEMPT_BODY_BYTES;
  let count = 0;
  for (const [name, value] of headers) {
    if (count >= ATTEMPT_HEADER_COUNT && !(name in kept)) {
      truncated = true;
      continue;
    }
    const whole = name in kept ? `${kept[name]}, ${value}` : value;
    if (!(name in kept)) count += 1;
    if (whole.length > ATTEMPT_HEADER_VALUE_CHARS) truncated = true;
    kept[name] = whole.slice(0, ATTEMPT_HEADER_VALUE_CHARS);
  }
  // Within the bound the bytes are kept as they are: every caller hands over bytes of its own.
  const body = bytes.byteLength > ATTEMPT_BODY_BYTES ? bytes.slice(0, ATTEMPT_BODY_BYTES) : bytes;
  return { headers: kept, body, truncated };
}

/** Node's `rawHeaders` (names and values alternating) as pairs with lower-case names. */
export function* rawHeaderPairs(rawHeaders: readonly string[]): Generator<[string, string]> {
  for (let i = 0; i + 1 < rawHeaders.length; i += 2)
    yield [rawHeaders[i]!.toLowerCase(), rawHeaders[i + 1]!];
}
