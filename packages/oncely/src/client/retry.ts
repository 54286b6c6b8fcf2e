import type { AttemptContext } from './attempt-context.js';
import {
  prepareRetry,
  withCall,
  type PreparedRetry,
  type RetryCall,
  type RetryOptions,
} from './prepare-retry.js';
import type { RetryResult } from './retry-result.js';
import { runPrepared } from './run-prepared.js';

// The retry driver is one file per step (prepare, first attempt, loop, judge, give up); callers
// find all of it here.
export type { AttemptContext } from './attempt-context.js';
export {
  prepareRetry,
  withCall,
  type PreparedRetry,
  type RetryCall,
  type RetryOptions,
} from './prepare-retry.js';
export type { RetryResult } from './retry-result.js';
export { runPrepared } from './run-prepared.js';
export { defaultClassifyError, defaultObserve } from './default-observe.js';

/**
 * A retry whose options are resolved once, for a client that runs many intents with one policy:
 * each call pays only for its attempts. `call` sets what belongs to one intent (its key, signal).
 */
export function createRetry<T>(
  options: RetryOptions<T> = {},
): (
  operation: (context: AttemptContext) => T | Promise<T>,
  call?: RetryCall,
) => Promise<RetryResult<T>> {
  const prepared = prepareRetry(options);
  return (operation, call) =>
    runPrepared(operation, call === undefined ? prepared : withCall(prepared, call));
}

/**
 * Runs `operation` until it succeeds or the policy stops it. Every attempt gets the same key;
 * sleeps go through the injected clock; the report lists every attempt with its delay and why.
 * Resolves with the value and the report on success; otherwise rejects with a RetryError
 * that carries the report. Resolves `options` on every call: a caller running many intents with
 * one policy uses {@link createRetry}.
 */
export function retry<T>(
  operation: (context: AttemptContext) => T | Promise<T>,
  options: RetryOptions<T> = {},
): Promise<RetryResult<T>> {
  let prepared: PreparedRetry<T>;
  try {
    prepared = prepareRetry(options);
  } catch (error) {
    return Promise.reject(error);
  }
  return runPrepared(operation, prepared);
}
