import { sha256Hex } from './fingerprint.js';
import { keyFor } from './idempotency-key.js';

/** Any UTF-16 surrogate, paired or not: a cheap test, and rare text (emoji) takes keyFor's way. */
const SURROGATE = /[\ud800-\udfff]/;

/**
 * The Idempotency-Key a step sends to the service it calls: derived from the caller, the
 * request's own key and the step's name, so every retry of the request sends the same key for
 * the same step (the other service dedupes it), two steps of one request send different keys,
 * and two callers who happen to pick the same key never share one downstream.
 *
 * It is `keyFor({ scope, key, step: name }, 'step')`, with the canonical JSON (RFC 8785) of that
 * object written out rather than found by walking it (made at every step): members in sorted
 * order (key, scope, step), each string as JSON.stringify writes it, which is JCS's string form.
 * JCS refuses a lone surrogate: a string with surrogates still goes to keyFor, which throws for
 * a lone one as it did.
 * test/contract/step-key.test.ts holds the two equal.
 */
export function stepKey(scope: string, key: string, name: string): string {
  if (SURROGATE.test(scope) || SURROGATE.test(key) || SURROGATE.test(name))
    return keyFor({ scope, key, step: name }, 'step');
  const canonical = `{"key":${JSON.stringify(key)},"scope":${JSON.stringify(scope)},"step":${JSON.stringify(name)}}`;
  return `step_${sha256Hex(canonical).slice(0, 40)}`;
}
