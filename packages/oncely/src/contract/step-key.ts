import { keyFor } from './idempotency-key.js';

/**
 * The Idempotency-Key a step sends to the service it calls: derived from the caller, the
 * request's own key and the step's name, so every retry of the request sends the same key for
 * the same step (the other service dedupes it), two steps of one request send different keys,
 * and two callers who happen to pick the same key never share one downstream.
 */
export function stepKey(scope: string, key: string, name: string): string {
  return keyFor({ scope, key, step: name }, 'step');
}
