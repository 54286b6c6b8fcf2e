import { InvalidOptionError } from '../contract/errors.js';
import type { IntentRecord, IntentState } from './intent.js';
import { DEAD_STATES, checkIntentFilter, filterStates } from './intent-filter.js';
import type { IntentFilter, JournalStore, Reopening } from './journal-store.js';

/** Which dead intents a replay reopens: a listing's filter without its paging. */
export type ReplayFilter = Omit<IntentFilter, 'after' | 'limit'>;

/** What a reopened intent gets: the same as `retry` (its own budget again, no deadline). */
export interface ReplayOptions {
  /** More attempts. @default the intent's own maxAttempts again */
  readonly maxAttempts?: number | undefined;
  /** A new deadline (ms since the epoch). @default none */
  readonly deadlineAt?: number | null | undefined;
  /** List what would be reopened, change nothing. */
  readonly dryRun?: boolean | undefined;
  /** Told after each batch: how many are done, of how many selected. */
  readonly onProgress?: ((done: number, total: number) => void) | undefined;
}

export interface ReplayResult {
  /**
   * The dead intents the filter selected, as they were, newest recorded first: without their
   * payload and receipt bytes (empty), since a replay may select many (`report(key)` has them).
   */
  readonly selected: readonly IntentRecord[];
  /** The keys made pending again (none on a dry run). */
  readonly reopened: readonly string[];
  /** Selected, but no longer dead when their turn came (replayed meanwhile): left as they are. */
  readonly skipped: readonly string[];
}

/** The states a replay may select: the dead ones, and cancelled when named. */
const REPLAYABLE: readonly IntentState[] = [...DEAD_STATES, 'cancelled'];
const PAGE = 500;

/**
 * Reopens every dead intent the filter selects, under its own key, with a fresh budget: the
 * worker sends each again. Without `state` it selects the dead letters (refused, gave_up,
 * unknown); `cancelled` only when named. A state that is not dead (pending, delivered) is bad
 * input, refused before anything changes. The selection is read whole first, page by page, then
 * reopened a batch at a time; one that changed meanwhile (replayed, or sent again) is skipped,
 * never overwritten.
 */
export async function replayIntents(
  store: JournalStore<unknown>,
  filter: ReplayFilter,
  reopening: (intent: IntentRecord) => Reopening,
  options: ReplayOptions = {},
): Promise<ReplayResult> {
  const states = filterStates(checkIntentFilter(filter)) ?? DEAD_STATES;
  for (const state of states)
    if (!REPLAYABLE.includes(state))
      throw new InvalidOptionError('state', state, `one or more of ${REPLAYABLE.join(', ')}`);
  const selected: IntentRecord[] = [];
  for (let after: string | undefined; ; ) {
    const page = await store.list({ ...filter, state: states, limit: PAGE, after });
    selected.push(...page.map(withoutBytes));
    if (page.length < PAGE) break;
    after = page[page.length - 1]!.key;
  }
  const reopened: string[] = [];
  const skipped: string[] = [];
  if (options.dryRun) return { selected, reopened, skipped };
  // A batch per statement: one commit for each PAGE intents rather than one for each.
  for (let start = 0; start < selected.length; start += PAGE) {
    const batch = selected.slice(start, start + PAGE);
    const done = await store.reopenMany(
      batch.map((intent) => {
        const { maxAttempts, deadlineAt, nextAttemptAt } = reopening(intent);
        return {
          key: intent.key,
          attemptCount: intent.attemptCount,
          policy: { ...intent.policy, maxAttempts },
          deadlineAt,
          nextAttemptAt,
        };
      }),
    );
    batch.forEach((intent, i) => (done[i] ? reopened : skipped).push(intent.key));
    options.onProgress?.(start + batch.length, selected.length);
  }
  return { selected, reopened, skipped };
}

const NO_BYTES = new Uint8Array(0);

/** An intent without its payload and receipt: what a long selection keeps in memory. */
function withoutBytes(intent: IntentRecord): IntentRecord {
  return {
    ...intent,
    body: NO_BYTES,
    outcome: intent.outcome && { ...intent.outcome, body: null },
  };
}
