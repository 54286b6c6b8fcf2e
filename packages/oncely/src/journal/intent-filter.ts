import { InvalidOptionError } from '../contract/errors.js';
import { INTENT_STATES, type IntentRecord, type IntentState } from './intent.js';
import type { IntentFilter } from './journal-store.js';

/**
 * The dead letters: intents that ended without a delivery. `cancelled` is not among them: a
 * person stopped it on purpose, so it is listed and replayed only when asked for by name.
 */
export const DEAD_STATES = ['refused', 'gave_up', 'unknown'] as const satisfies IntentState[];

/** The states a filter names, as a list (undefined: any state). */
export function filterStates(filter: IntentFilter): readonly IntentState[] | undefined {
  const { state } = filter;
  return state === undefined ? undefined : typeof state === 'string' ? [state] : state;
}

/**
 * Throws {@link InvalidOptionError} for a filter no store should see: an unknown state, an
 * empty state list, a limit that is not a positive integer, an instant that is not a number.
 * Checked once, at the journal's edge; the stores trust what reaches them.
 */
export function checkIntentFilter(filter: IntentFilter): IntentFilter {
  const states = filterStates(filter);
  const allowed = `one or more of ${INTENT_STATES.join(', ')}`;
  if (states !== undefined) {
    if (!Array.isArray(states) || states.length === 0)
      throw new InvalidOptionError('state', filter.state, allowed);
    for (const state of states)
      if (!(INTENT_STATES as readonly string[]).includes(state))
        throw new InvalidOptionError('state', state, allowed);
  }
  for (const name of ['target', 'targetPrefix', 'endpoint', 'after'] as const) {
    const value = filter[name];
    if (value !== undefined && (typeof value !== 'string' || value === ''))
      throw new InvalidOptionError(name, value, 'a non-empty string');
  }
  const { finishedSince, limit } = filter;
  if (finishedSince !== undefined && !Number.isSafeInteger(finishedSince))
    throw new InvalidOptionError('finishedSince', finishedSince, 'whole ms since the epoch');
  if (limit !== undefined && !(Number.isSafeInteger(limit) && limit > 0))
    throw new InvalidOptionError('limit', limit, 'a positive integer');
  return filter;
}

/** Whether `intent` passes the filter (`after` and `limit` are the listing's, not checked here). */
export function matchesFilter(intent: IntentRecord, filter: IntentFilter): boolean {
  const states = filterStates(filter);
  if (states !== undefined && !states.includes(intent.state)) return false;
  if (filter.target !== undefined && intent.target !== filter.target) return false;
  if (filter.targetPrefix !== undefined && !intent.target.startsWith(filter.targetPrefix))
    return false;
  if (filter.endpoint !== undefined && intent.endpoint !== filter.endpoint) return false;
  if (filter.finishedSince !== undefined) {
    const finishedAt = intent.outcome?.finishedAt;
    if (finishedAt === undefined || finishedAt < filter.finishedSince) return false;
  }
  return true;
}
