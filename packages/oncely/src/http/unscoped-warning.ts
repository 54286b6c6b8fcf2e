import { InvalidOptionError } from '../contract/errors.js';

/**
 * The warning of a middleware made without `scopeOf`. Keys are scoped by caller so that one
 * caller can never replay another's receipt (the IETF draft's security considerations, section
 * 5, ask for a composite key of the client's key and attributes of the client); without a scope
 * that protection is gone, silently, unless something says so.
 */
const UNSCOPED_WARNING =
  'oncely: no scopeOf given, so every caller shares one key space: one caller reusing another\'s Idempotency-Key is replayed the other\'s stored answer. Pass scopeOf (the authenticated caller), or scopeOf: () => "default" for a single-tenant app.';

/**
 * Checks `onWarning` and tells it {@link UNSCOPED_WARNING} when no `scopeOf` was given: once,
 * when the middleware is made, so a multi-tenant app that forgot it hears of it at start, before
 * its callers' receipts mix, and a busy server's log gets one line, not one per request.
 */
export function warnIfUnscoped(scoped: boolean, onWarning: (message: string) => void): void {
  if (typeof onWarning !== 'function')
    throw new InvalidOptionError('onWarning', onWarning, 'a function (message) => void');
  if (!scoped) onWarning(UNSCOPED_WARNING);
}
