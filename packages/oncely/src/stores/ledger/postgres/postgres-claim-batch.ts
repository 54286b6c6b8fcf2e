import type { InFlightEntry } from '../../../ledger/ledger-entry.js';
import type { LedgerRow } from '../ledger-row.js';

/** What a claim found: undefined when its row went in (it won), else the row that holds the key. */
export type ClaimFound = LedgerRow | undefined;

/** Sends one claim statement for `entries`; answers each entry's {@link ClaimFound}, in order. */
export type SendClaims = (entries: readonly InFlightEntry[]) => Promise<ClaimFound[]>;

/** The most entries one claim statement carries (its arrays' length). */
export const MAX_CLAIM_BATCH = 64;

interface Waiting {
  readonly entry: InFlightEntry;
  readonly resolve: (found: ClaimFound) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Claims of concurrent requests, sent together: one claim statement at a time per store. A claim
 * made while none is on its way goes at once, alone; the claims made while one is on its way
 * wait for its answer and then go as the next statement, together (as a group commit gathers
 * what arrived during the last flush). Under load a new key then shares its claim's round trip,
 * statement and commit with others; alone it waits for nothing.
 *
 * A statement that fails fails every claim in it, except for an error about the data of one
 * entry (SQLSTATE classes 22 and 23: a value the column refuses, no partition for a row): then
 * each entry is sent again alone, so that one bad entry fails only its own claim.
 */
export function claimBatcher(send: SendClaims): {
  claim(entry: InFlightEntry): Promise<ClaimFound>;
} {
  const waiting: Waiting[] = [];
  let sending = false;

  async function sendAll(): Promise<void> {
    sending = true;
    while (waiting.length > 0) {
      const batch = waiting.splice(0, MAX_CLAIM_BATCH);
      try {
        const found = await send(batch.map((w) => w.entry));
        batch.forEach((w, i) => w.resolve(found[i]));
      } catch (error) {
        if (batch.length === 1 || !aboutOneEntry(error)) {
          for (const w of batch) w.reject(error);
          continue;
        }
        for (const w of batch) {
          await send([w.entry]).then(
            (found) => w.resolve(found[0]),
            (alone: unknown) => w.reject(alone),
          );
        }
      }
    }
    sending = false;
  }

  return {
    claim: (entry) =>
      new Promise<ClaimFound>((resolve, reject) => {
        waiting.push({ entry, resolve, reject });
        if (!sending) void sendAll();
      }),
  };
}

/** A data exception (22) or an integrity constraint violation (23): one entry's own fault. */
function aboutOneEntry(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('23'));
}
